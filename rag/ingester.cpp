#include "rag/ingester.h"

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iterator>

#include <nlohmann/json.hpp>

#include "core/sha256.h"
#include "rag/chunk_embedding.h"

namespace kotae::rag {
namespace {

// The caller's metadata (a JSON object, or empty) with what the file says of itself (an e-mail's
// from, to, date, subject) added where the caller did not set the same key.
std::string with_file_metadata(const std::string& metadata_json, const text::Document& document) {
  if (document.metadata.empty()) return metadata_json;
  nlohmann::json metadata = nlohmann::json::parse(metadata_json.empty() ? "{}" : metadata_json, nullptr, false);
  if (!metadata.is_object()) return metadata_json;
  for (const auto& [key, value] : document.metadata) {
    if (!metadata.contains(key)) metadata[key] = value;
  }
  return metadata.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// Chunks embedded between two checks of a file's stop (a cancel or its time budget): under two
// seconds of 256-token chunks on two cores, and enough to fill the encoder's batches.
constexpr std::size_t kChunksPerStopCheck = 16;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

struct FileStat {
  std::uint64_t size = 0;
  std::int64_t modified_ns = 0;
};

Result<FileStat> stat_file(const fs::path& file) {
  struct stat st {};
  if (::stat(file.c_str(), &st) != 0) return make_error(ErrorCode::not_found, file.string() + ": cannot stat");
  return FileStat{static_cast<std::uint64_t>(st.st_size),
                  static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec};
}

Result<std::string> read_file(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return make_error(ErrorCode::io, file.string() + ": cannot open");
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return make_error(ErrorCode::io, file.string() + ": read failed");
  return bytes;
}

// Errors that say the collection (not the file) is in trouble end the run.
bool stops_the_run(const Error& error) {
  return error.code == ErrorCode::io || error.code == ErrorCode::corrupt || error.code == ErrorCode::internal ||
         error.code == ErrorCode::model;
}

}  // namespace

const char* to_string(FileStatus status) {
  switch (status) {
    case FileStatus::indexed: return "indexed";
    case FileStatus::unchanged: return "unchanged";
    case FileStatus::failed: return "failed";
  }
  return "?";
}

Ingester::Ingester(store::Collection& collection, const Encoder& encoder, IngestOptions options)
    : collection_(collection), encoder_(encoder), options_(std::move(options)) {
  // The encoder reads max_length tokens including [CLS] and [SEP]; a longer chunk would be cut.
  const std::size_t fits = encoder_.max_length() > 2 ? encoder_.max_length() - 2 : 1;
  options_.chunking.max_tokens = std::min(options_.chunking.max_tokens, fits);
}

Result<IngestSummary> Ingester::ingest_files(std::span<const fs::path> files, const IngestCallbacks& callbacks) {
  const auto start = Clock::now();
  const StageSeconds stages_before = stages_;
  IngestSummary summary;
  IngestProgress progress;
  progress.files_total = files.size();
  for (const auto& file : files)
    if (auto st = stat_file(file)) progress.bytes_total += st->size;

  for (const auto& file : files) {
    auto report = ingest_file(file, callbacks, progress);
    if (!report) return report.error();
    ++summary.files;
    switch (report->status) {
      case FileStatus::indexed:
        ++summary.indexed;
        summary.chunks += report->chunks;
        summary.bytes += report->bytes;
        break;
      case FileStatus::unchanged: ++summary.unchanged; break;
      case FileStatus::failed: ++summary.failed; break;
    }
    ++progress.files_done;
    progress.chunks += report->chunks;
    progress.elapsed_s = seconds_since(start);
    if (callbacks.on_file) callbacks.on_file(*report);
    if (callbacks.on_progress) callbacks.on_progress(progress);
  }
  summary.elapsed_s = seconds_since(start);
  summary.stages = {stages_.read - stages_before.read, stages_.load - stages_before.load,
                    stages_.chunk - stages_before.chunk, stages_.embed - stages_before.embed,
                    stages_.store - stages_before.store};
  return summary;
}

Result<FileReport> Ingester::ingest_file(const fs::path& file, const IngestCallbacks&, IngestProgress& progress) {
  FileReport report;
  report.path = file.string();
  auto fail = [&](const Error& error) {
    report.status = FileStatus::failed;
    report.error = error.message;
    report.stopped = error.code == ErrorCode::stopped;
    return report;
  };

  auto read_start = Clock::now();
  auto st = stat_file(file);
  if (!st) return fail(st.error());
  report.bytes = st->size;
  progress.bytes_done += st->size;
  auto existing = collection_.find_document(report.path);
  if (!existing) return existing.error();
  if (*existing && (*existing)->size == static_cast<std::int64_t>(st->size) &&
      (*existing)->modified_ns == st->modified_ns) {
    report.status = FileStatus::unchanged;
    stages_.read += seconds_since(read_start);
    return report;
  }
  if (st->size > options_.limits.max_file_bytes)
    return fail(make_error(ErrorCode::invalid_argument,
                           report.path + ": " + std::to_string(st->size) + " bytes is over the limit of " +
                               std::to_string(options_.limits.max_file_bytes) + " (max_file_bytes)"));
  auto bytes = read_file(file);
  if (!bytes) return fail(bytes.error());
  const std::string sha = sha256_hex(*bytes);
  stages_.read += seconds_since(read_start);
  if (*existing && (*existing)->sha256 == sha) {
    report.status = FileStatus::unchanged;  // touched, not changed
    return report;
  }

  const StopWhen stop = file_budget();
  auto document = load(*bytes, text::document_format(file), stop);
  if (!document) return fail(Error{document.error().code, report.path + ": " + document.error().message});

  store::DocumentRecord record;
  record.path = report.path;
  record.sha256 = sha;
  record.size = static_cast<std::int64_t>(st->size);
  record.modified_ns = st->modified_ns;
  record.title = document->title.empty() ? file.filename().string() : document->title;
  record.format = document->format;
  auto stored = store_document(std::move(record), *document, stop);
  if (!stored) {
    if (stops_the_run(stored.error())) return stored.error();
    return fail(stored.error());
  }
  report.status = FileStatus::indexed;
  report.chunks = *stored;
  return report;
}

Result<FileReport> Ingester::ingest_bytes(const std::string& name, std::string_view bytes, std::string_view format,
                                          const std::string& metadata_json) {
  FileReport report;
  report.path = name;
  report.bytes = bytes.size();
  const std::string sha = sha256_hex(bytes);
  auto existing = collection_.find_document(name);
  if (!existing) return existing.error();
  if (*existing && (*existing)->sha256 == sha) {
    report.status = FileStatus::unchanged;
    return report;
  }
  const StopWhen stop = file_budget();
  auto document = load(bytes, format, stop);
  if (!document) {
    report.error = document.error().message;
    report.stopped = document.error().code == ErrorCode::stopped;
    return report;
  }
  store::DocumentRecord record;
  record.path = name;
  record.sha256 = sha;
  record.size = static_cast<std::int64_t>(bytes.size());
  record.title = document->title.empty() ? name : document->title;
  record.format = document->format;
  record.metadata_json = metadata_json;
  auto stored = store_document(std::move(record), *document, stop);
  if (!stored) {
    if (stops_the_run(stored.error())) return stored.error();
    report.error = stored.error().message;
    report.stopped = stored.error().code == ErrorCode::stopped;
    return report;
  }
  report.status = FileStatus::indexed;
  report.chunks = *stored;
  return report;
}

Result<text::Document> Ingester::load(std::string_view bytes, std::string_view format, const StopWhen& stop) {
  const auto start = Clock::now();
  text::LoadLimits limits = options_.limits;
  limits.stop = stop;
  auto document = text::load_document_bytes(bytes, format, limits);
  stages_.load += seconds_since(start);
  return document;
}

Result<FileReport> Ingester::ingest_document(const std::string& name, const text::Document& document,
                                             const std::string& content_sha256, const std::string& metadata_json) {
  FileReport report;
  report.path = name;
  report.bytes = document.text.size();
  auto existing = collection_.find_document(name);
  if (!existing) return existing.error();
  if (*existing && (*existing)->sha256 == content_sha256) {
    report.status = FileStatus::unchanged;
    return report;
  }
  store::DocumentRecord record;
  record.path = name;
  record.sha256 = content_sha256;
  record.size = static_cast<std::int64_t>(document.text.size());
  record.title = document.title;
  record.format = document.format;
  record.metadata_json = metadata_json;
  auto stored = store_document(std::move(record), document);
  if (!stored) return stored.error();
  report.status = FileStatus::indexed;
  report.chunks = *stored;
  return report;
}

Result<std::size_t> Ingester::store_document(store::DocumentRecord record, const text::Document& document,
                                             const StopWhen& stop) {
  const auto chunk_start = Clock::now();
  auto chunks = text::chunk_document(document, encoder_.tokenizer(), options_.chunking);
  stages_.chunk += seconds_since(chunk_start);
  if (!chunks) return chunks.error();

  std::vector<store::ChunkRecord> records;
  std::vector<std::string> texts;
  records.reserve(chunks->size());
  texts.reserve(chunks->size());
  for (std::size_t i = 0; i < chunks->size(); ++i) {
    const auto& chunk = (*chunks)[i];
    store::ChunkRecord r;
    r.ordinal = static_cast<std::uint32_t>(i);
    r.begin = chunk.begin;
    r.end = chunk.end;
    r.page_first = chunk.page_first;
    r.page_last = chunk.page_last;
    r.heading_path = chunk.heading_path;
    r.token_count = chunk.token_count;
    r.table = chunk.table;
    r.row_first = chunk.row_first;
    r.row_last = chunk.row_last;
    r.boxes = chunk.boxes;
    r.text = text::chunk_text(document, chunk);
    texts.push_back(r.text);
    records.push_back(std::move(r));
  }

  // Embedded a group at a time, so that a stop is heard between groups, not only after the file.
  const auto embed_start = Clock::now();
  EmbeddedChunks embedded;
  for (std::size_t first = 0; first < texts.size(); first += kChunksPerStopCheck) {
    if (auto go_on = stop.check(); !go_on) return go_on.error();
    const std::size_t count = std::min(kChunksPerStopCheck, texts.size() - first);
    auto part = embed_chunks(encoder_, std::span<const std::string>(texts).subspan(first, count));
    if (!part) return part.error();
    embedded.vectors.dimension = part->vectors.dimension;
    embedded.vectors.values.insert(embedded.vectors.values.end(), part->vectors.values.begin(),
                                   part->vectors.values.end());
    for (auto& sentences : part->sentences) embedded.sentences.push_back(std::move(sentences));
  }
  stages_.embed += seconds_since(embed_start);
  if (auto go_on = stop.check(); !go_on) return go_on.error();

  const auto store_start = Clock::now();
  record.text = document.text;
  record.metadata_json = with_file_metadata(record.metadata_json, document);
  record.chunk_count = static_cast<std::int64_t>(records.size());
  auto stored = collection_.put_document(record, records, embedded.vectors.values, embedded.sentences);
  stages_.store += seconds_since(store_start);
  if (!stored) return stored.error();
  return records.size();
}

}  // namespace kotae::rag
