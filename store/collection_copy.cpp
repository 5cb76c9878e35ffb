#include "store/collection_copy.h"

namespace kotae::store {

Result<CopyReport> copy_collection(Collection& from, Collection& to, const std::function<void(const CopyReport&)>& progress) {
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
      KOTAE_TRY(to.put_document(*document, chunks, embeddings, sentences));
      ++report.documents;
      report.chunks += chunks.size();
    }
    if (progress) progress(report);
  }
  KOTAE_TRY(to.save_vector_index());
  return report;
}

}  // namespace kotae::store
