#include "store/collection_copy.h"

namespace kotae::store {

namespace {

// One document into `to`, replacing what is stored under its path, in one transaction.
Result<void> write_document(RecordStore& to, const DocumentRecord& document, const std::vector<ChunkRecord>& chunks,
                            const std::vector<float>& embeddings,
                            const std::vector<std::vector<SentenceVector>>& sentences) {
  std::vector<std::string> heading_paths;
  for (const auto& chunk : chunks) heading_paths.push_back(heading_path_json(chunk.heading_path));
  std::vector<std::vector<std::byte>> sentence_blobs;
  for (const auto& list : sentences) sentence_blobs.push_back(encode_sentence_vectors(list, to.info().dimension));
  auto transaction = KOTAE_TRY_VALUE(to.begin_write());
  KOTAE_TRY(transaction->remove_document(document.path));
  const std::int64_t id = KOTAE_TRY_VALUE(transaction->insert_document(document, chunks.size()));
  KOTAE_TRY(transaction->insert_chunks(id, chunks, heading_paths, embeddings, sentence_blobs));
  KOTAE_TRY(transaction->commit());
  return {};
}

}  // namespace

Result<CopyReport> copy_collection(Collection& from, RecordStore& to,
                                   const std::function<void(const CopyReport&)>& progress) {
  if (from.info().embedder_id != to.info().embedder_id || from.info().dimension != to.info().dimension) {
    return make_error(ErrorCode::invalid_argument, "cannot copy " + from.location() + " (embedder " +
                                                       from.info().embedder_id + ") into " + to.location() +
                                                       " (embedder " + to.info().embedder_id + ")");
  }
  CopyReport report;
  for (const DocumentRecord& listed : KOTAE_TRY_VALUE(from.documents())) {
    auto there = KOTAE_TRY_VALUE(to.find_document(listed.path));
    if (there && !listed.sha256.empty() && there->sha256 == listed.sha256 && there->chunk_count == listed.chunk_count) {
      ++report.skipped;
    } else {
      auto document = KOTAE_TRY_VALUE(from.document(listed.id));
      if (!document) continue;  // removed meanwhile
      const std::vector<ChunkRecord> chunks = KOTAE_TRY_VALUE(from.document_chunks(listed.id));
      std::vector<std::int64_t> ids;
      for (const auto& chunk : chunks) ids.push_back(chunk.id);
      const std::vector<float> embeddings = KOTAE_TRY_VALUE(from.embeddings(ids));
      const auto sentences = KOTAE_TRY_VALUE(from.chunk_sentences(ids));
      KOTAE_TRY(write_document(to, *document, chunks, embeddings, sentences));
      ++report.documents;
      report.chunks += chunks.size();
    }
    if (progress) progress(report);
  }
  return report;
}

}  // namespace kotae::store
