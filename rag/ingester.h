#pragma once
// Ingestion into one collection: read → load → chunk → embed → store, one document per transaction.
// A file whose size and modification time (or, when those changed, whose SHA-256) match the stored
// document is skipped; a changed file's chunks are replaced atomically; a file that cannot be loaded
// is reported and the run carries on. Only failures of the collection itself (disk full, a corrupt
// database) stop a run.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <span>
#include <string>
#include <string_view>

#include "core/result.h"
#include "core/stop_when.h"
#include "model/encoder.h"
#include "store/collection.h"
#include "text/chunker.h"
#include "text/document.h"
#include "text/loaders/loader.h"

namespace kotae::rag {

struct IngestOptions {
  text::LoadLimits limits;        // passed to every load as they are (on_ocr_page too), with the file's stop added
  text::ChunkerOptions chunking;  // max_tokens is capped to what the encoder reads
  // A file still loading or embedding after this many seconds fails (0: no budget), and one in
  // progress when `cancelled` (borrowed, may be null) turns true stops; both are asked between pages
  // and between batches of chunks, and a stopped file stores nothing.
  double max_seconds_per_file = 0;
  const std::atomic<bool>* cancelled = nullptr;
};

enum class FileStatus { indexed, unchanged, failed };
const char* to_string(FileStatus status);

struct FileReport {
  std::string path;
  FileStatus status = FileStatus::failed;
  std::size_t chunks = 0;
  std::uint64_t bytes = 0;
  std::string error;     // why it failed
  bool stopped = false;  // it failed because it was stopped: cancelled, or over its time budget
};

struct StageSeconds {  // where ingestion time went
  double read = 0, load = 0, chunk = 0, embed = 0, store = 0;
  double total() const { return read + load + chunk + embed + store; }
};

struct IngestProgress {
  std::size_t files_done = 0, files_total = 0, chunks = 0;
  std::uint64_t bytes_done = 0, bytes_total = 0;
  double elapsed_s = 0;
};

struct IngestSummary {
  std::size_t files = 0, indexed = 0, unchanged = 0, failed = 0, chunks = 0;
  std::uint64_t bytes = 0;  // bytes of the files indexed
  StageSeconds stages;
  double elapsed_s = 0;
};

struct IngestCallbacks {
  std::function<void(const FileReport&)> on_file;          // after each file (indexed: committed)
  std::function<void(const IngestProgress&)> on_progress;  // after each file and each embedded batch
};

class Ingester {
 public:
  // The encoder must be the collection's embedder; both are borrowed.
  Ingester(store::Collection& collection, const Encoder& encoder, IngestOptions options = {});

  Result<IngestSummary> ingest_files(std::span<const std::filesystem::path> files,
                                     const IngestCallbacks& callbacks = {});

  // A document already in memory (an evaluation corpus, an upload), identified by `name`; unchanged
  // when its content hash matches the stored one.
  Result<FileReport> ingest_document(const std::string& name, const text::Document& document,
                                     const std::string& content_sha256, const std::string& metadata_json = "{}");
  // A file's bytes already in memory (an upload) in `format` (text::document_format), under `name`;
  // unchanged when they hash as the stored ones. A file that cannot be loaded, or is stopped, is a
  // failed report; errors are failures of the collection.
  Result<FileReport> ingest_bytes(const std::string& name, std::string_view bytes, std::string_view format,
                                  const std::string& metadata_json = "{}");

  const StageSeconds& stages() const { return stages_; }

 private:
  Result<FileReport> ingest_file(const std::filesystem::path& file, const IngestCallbacks& callbacks,
                                 IngestProgress& progress);
  StopWhen file_budget() const { return StopWhen(options_.cancelled, options_.max_seconds_per_file); }
  Result<text::Document> load(std::string_view bytes, std::string_view format, const StopWhen& stop);
  // Chunks, embeds and stores a loaded document under `record`.
  Result<std::size_t> store_document(store::DocumentRecord record, const text::Document& document,
                                     const StopWhen& stop = {});

  store::Collection& collection_;
  const Encoder& encoder_;
  IngestOptions options_;
  StageSeconds stages_;
};

}  // namespace kotae::rag
