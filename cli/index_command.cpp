#include "cli/index_command.h"

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <thread>

#include <nlohmann/json.hpp>

#include "assembly/collection_access.h"
#include "cli/progress_bar.h"
#include "cli/report_error.h"
#include "rag/file_selection.h"
#include "rag/ingester.h"

namespace kotae::cli {
namespace {

nlohmann::json stages_json(const rag::StageSeconds& s) {
  return {{"read_s", s.read}, {"load_s", s.load}, {"chunk_s", s.chunk}, {"embed_s", s.embed}, {"store_s", s.store}};
}

}  // namespace

int run_index(const IndexOptions& options) {
  rag::IngestOptions ingest;
  if (options.chunk_tokens) ingest.chunking.max_tokens = options.chunk_tokens;
  if (options.overlap_given) ingest.chunking.overlap_tokens = options.overlap_tokens;
  ingest.max_seconds_per_file = options.max_seconds_per_file;
  ingest.limits.ocr_languages = options.ocr_languages;
  ingest.limits.ocr_threads = std::max(1u, std::thread::hardware_concurrency());  // a scan's pages at once

  auto files = rag::select_files(options.paths, {options.include, options.exclude});
  if (!files) return report_error(files.error());
  auto open = assembly::open_for_indexing(options.where, options.collection, options.model, ingest.chunking.max_tokens,
                                          ingest.chunking.overlap_tokens, std::chrono::seconds(options.wait_s));
  if (!open) return report_error(open.error());

  rag::Ingester ingester(*open->collection, *open->encoder, ingest);
  ProgressBar bar;
  rag::IngestCallbacks callbacks;
  callbacks.on_file = [&](const rag::FileReport& report) {
    if (options.json) {
      nlohmann::json line{{"event", "file"},
                          {"path", report.path},
                          {"status", rag::to_string(report.status)},
                          {"chunks", report.chunks},
                          {"bytes", report.bytes}};
      if (!report.error.empty()) line["error"] = report.error;
      std::cout << line.dump() << std::endl;  // flushed: a document reported here is committed
    } else if (report.status == rag::FileStatus::failed) {
      bar.clear();
      std::fprintf(stderr, "kotae: skipped %s\n", report.error.c_str());
    }
  };
  callbacks.on_progress = [&](const rag::IngestProgress& p) {
    bar.update(p.files_done, p.files_total, p.chunks, p.bytes_done, p.bytes_total, p.elapsed_s,
               p.files_done == p.files_total);
  };
  auto summary = ingester.ingest_files(*files, callbacks);
  bar.finish();
  if (!summary) return report_error(summary.error());
  if (auto saved = open->collection->save_vector_index(); !saved) return report_error(saved.error());

  const double mb = double(summary->bytes) / 1e6;
  const double rate = summary->elapsed_s > 0 ? mb / summary->elapsed_s : 0;
  if (options.json) {
    std::cout << nlohmann::json{{"event", "summary"},
                                {"collection", options.collection},
                                {"files", summary->files},
                                {"indexed", summary->indexed},
                                {"unchanged", summary->unchanged},
                                {"failed", summary->failed},
                                {"chunks", summary->chunks},
                                {"bytes", summary->bytes},
                                {"elapsed_s", summary->elapsed_s},
                                {"mb_per_s", rate},
                                {"chunks_per_s",
                                 summary->elapsed_s > 0 ? double(summary->chunks) / summary->elapsed_s : 0},
                                {"stages", stages_json(summary->stages)},
                                {"collection_documents", open->collection->document_count()},
                                {"collection_chunks", open->collection->chunk_count()}}
                     .dump()
              << std::endl;
  } else {
    std::printf(
        "%s: %zu files (%zu indexed, %zu unchanged, %zu failed), %zu chunks, %.1f MB in %.1f s (%.2f MB/s); "
        "collection has %zu documents, %zu chunks\n",
        options.collection.c_str(), summary->files, summary->indexed, summary->unchanged, summary->failed,
        summary->chunks, mb, summary->elapsed_s, rate, open->collection->document_count(),
        open->collection->chunk_count());
  }
  return summary->failed ? 1 : 0;
}

int run_remove(const RemoveOptions& options) {
  auto open = assembly::open_for_search(options.where, options.collection, /*with_encoder=*/false);
  if (!open) return report_error(open.error());
  auto lock = assembly::lock_for_writing(open->folder, options.collection, "kotae remove",
                                         std::chrono::seconds(options.wait_s));
  if (!lock) return report_error(lock.error());
  int missing = 0;
  for (const auto& given : options.documents) {
    // Files are indexed by absolute path; names (eval corpora, uploads) as given.
    std::string path = given;
    if (auto found = open->collection->find_document(path); found && !*found)
      path = std::filesystem::absolute(given).lexically_normal().string();
    auto removed = open->collection->remove_document(path);
    if (!removed) return report_error(removed.error());
    if (*removed) {
      std::printf("removed %s\n", path.c_str());
    } else {
      std::fprintf(stderr, "kotae: %s is not in collection %s\n", given.c_str(), options.collection.c_str());
      ++missing;
    }
  }
  if (auto saved = open->collection->save_vector_index(); !saved) return report_error(saved.error());
  return missing ? 1 : 0;
}

}  // namespace kotae::cli
