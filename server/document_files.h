#pragma once
// A document's original file, as the server can still show it: an upload's kept copy (in the
// collection's uploads/ folder, counted in its size) or the file `kotae index` read from disk. Only
// bytes that are still the ones indexed are served: the citations' spans point into their text.

#include <cstdint>
#include <optional>
#include <string>

#include "core/result.h"
#include "server/collection_registry.h"
#include "store/records.h"

namespace kotae::server {

inline constexpr std::uintmax_t kMaxServedFileBytes = 256u << 20;  // larger originals are shown as text

// The file's bytes, or nullopt with the reason it cannot be shown (gone, changed, too large).
struct OriginalFile {
  std::optional<std::string> bytes;
  std::string missing_because;
};
Result<OriginalFile> original_file(const ServedCollection& collection, const store::DocumentRecord& document);

// Where an upload's copy is kept; the document's own name (a safe file name).
std::filesystem::path kept_upload(const ServedCollection& collection, const std::string& name);

// The MIME type a browser may show inline for this format; others are sent as attachments.
std::string inline_content_type(std::string_view format);

}  // namespace kotae::server
