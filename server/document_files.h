#pragma once
// A document's original file, as the server can still show it: an upload's kept copy
// (store/document_file_store.h: the collection's uploads/ folder, or over PostgreSQL table
// document_files, where the workers keep what they indexed; counted in the collection's size either way) or the file
// `kotae index` read from disk. Only bytes that are still the ones indexed are shown: the citations' spans point into
// their text.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "assembly/collection_registry.h"
#include "core/result.h"
#include "store/document_file_store.h"
#include "store/records.h"

namespace kotae::server {

// Larger originals are shown as text: a file is read whole into its response, and as large as the
// largest upload body by default.
inline constexpr std::uintmax_t kMaxServedFileBytes = 64u << 20;

// The file's bytes, or nullopt with the reason it cannot be shown (gone, changed, too large).
struct OriginalFile {
  std::optional<std::string> bytes;
  std::string missing_because;
};

class DocumentFiles {
 public:
  explicit DocumentFiles(std::shared_ptr<store::DocumentFileStore> kept) : kept_(std::move(kept)) {}

  Result<OriginalFile> read(const assembly::ServedCollection& collection, const store::DocumentRecord& document) const;
  // Keeps an upload this replica indexed as its document's file, where every replica finds it (IngestJobs).
  Result<void> keep(const assembly::ServedCollection& collection, const std::string& name,
                    const std::filesystem::path& file) const;
  // Forgets an upload's kept copy, as its document is removed.
  Result<void> forget(const assembly::ServedCollection& collection, const store::DocumentRecord& document) const;

 private:
  std::shared_ptr<store::DocumentFileStore> kept_;
};

// The MIME type a browser may show inline for this format; "" for those sent as attachments.
std::string inline_content_type(std::string_view format);

}  // namespace kotae::server
