#include "store/collection.h"

#include <algorithm>
#include <mutex>

#include "store/derived_indexes.h"
#include "store/sqlite_record_store.h"

namespace kotae::store {

namespace {

constexpr const char* kVectorIndexFile = "vectors.index";

// The parts of a new document that cannot be stored: checked before a transaction begins.
Result<void> check_document(const DocumentRecord& document, std::span<const ChunkRecord> chunks,
                            std::span<const float> embeddings, std::span<const std::vector<SentenceVector>> sentences,
                            std::size_t dimension) {
  if (document.path.empty()) return make_error(ErrorCode::invalid_argument, "a document needs a path");
  if (embeddings.size() != chunks.size() * dimension) {
    return make_error(ErrorCode::invalid_argument, document.path + ": " + std::to_string(embeddings.size()) +
                                                       " embedding values for " + std::to_string(chunks.size()) +
                                                       " chunks of dimension " + std::to_string(dimension));
  }
  if (!sentences.empty() && sentences.size() != chunks.size()) {
    return make_error(ErrorCode::invalid_argument, document.path + ": sentences for " +
                                                       std::to_string(sentences.size()) + " of " +
                                                       std::to_string(chunks.size()) + " chunks");
  }
  for (std::size_t i = 0; i < sentences.size(); ++i) {
    for (const auto& s : sentences[i]) {
      if (s.begin > s.end || s.end > chunks[i].text.size() || s.vector.size() != dimension) {
        return make_error(ErrorCode::invalid_argument, document.path + ": a sentence of chunk " + std::to_string(i) +
                                                           " is outside it or has the wrong dimension");
      }
    }
  }
  for (const auto& chunk : chunks) {
    if (chunk.begin > chunk.end) {
      return make_error(ErrorCode::invalid_argument,
                        document.path + ": chunk " + std::to_string(chunk.ordinal) + " ends before it begins");
    }
  }
  return {};
}

// Records by id, in the order asked, leaving out the ids that no longer exist.
template <class Record>
std::vector<Record> in_order(std::span<const std::int64_t> ids, std::unordered_map<std::int64_t, Record>& found) {
  std::vector<Record> records;
  records.reserve(ids.size());
  for (const std::int64_t id : ids) {
    if (auto it = found.find(id); it != found.end()) records.push_back(it->second);
  }
  return records;
}

}  // namespace

struct Collection::State {
  std::filesystem::path dir;  // of a SQLite collection
  std::filesystem::path snapshot;
  std::unique_ptr<RecordStore> records;
  std::unique_ptr<DerivedIndexes> indexes;
  // The writer side: writes, catch-ups, saves and checks, one at a time, so that no commit lands
  // between reading the records and changing the indexes.
  std::mutex writer_mutex;
  std::mutex search_catch_up_mutex;
};

// --- opening ---------------------------------------------------------------------------------------

Result<std::unique_ptr<Collection>> Collection::open(std::unique_ptr<RecordStore> records,
                                                     const std::filesystem::path& snapshot) {
  auto state = std::make_unique<State>();
  state->snapshot = snapshot;
  state->indexes = KOTAE_TRY_VALUE(DerivedIndexes::open(*records, snapshot));
  state->records = std::move(records);
  std::unique_ptr<Collection> collection(new Collection(std::move(state)));
  if (!collection->vector_index_rebuilt_because().empty()) {
    (void)collection->save_vector_index();  // a rebuild is worth keeping; failing to is not fatal
  }
  return collection;
}

Result<std::unique_ptr<Collection>> Collection::open_or_create(const std::filesystem::path& dir,
                                                               const CollectionInfo& info) {
  auto records = KOTAE_TRY_VALUE(SqliteRecordStore::open(dir, &info));
  auto collection = KOTAE_TRY_VALUE(open(std::move(records), dir / kVectorIndexFile));
  collection->state_->dir = dir;
  return collection;
}

Result<std::unique_ptr<Collection>> Collection::open(const std::filesystem::path& dir) {
  auto records = KOTAE_TRY_VALUE(SqliteRecordStore::open(dir, nullptr));
  auto collection = KOTAE_TRY_VALUE(open(std::move(records), dir / kVectorIndexFile));
  collection->state_->dir = dir;
  return collection;
}

Collection::Collection(std::unique_ptr<State> state) : state_(std::move(state)) {}

Collection::~Collection() {
  if (state_ != nullptr) (void)save_vector_index();  // best effort; the change log covers a failure
}

const CollectionInfo& Collection::info() const {
  return state_->records->info();
}
const std::string& Collection::vector_index_rebuilt_because() const {
  return state_->indexes->rebuilt_because();
}
const std::filesystem::path& Collection::dir() const {
  return state_->dir;
}
const std::string& Collection::location() const {
  return state_->records->location();
}

Result<void> Collection::catch_up() {
  std::lock_guard writer(state_->writer_mutex);
  return state_->indexes->catch_up(*state_->records);
}

std::int64_t Collection::change_position() const {
  return state_->indexes->position();
}

// --- documents -------------------------------------------------------------------------------------

Result<std::optional<DocumentRecord>> Collection::find_document(std::string_view path) const {
  return state_->records->find_document(path);
}

Result<std::optional<DocumentRecord>> Collection::document(std::int64_t id) const {
  return state_->records->document(id);
}

Result<std::vector<DocumentRecord>> Collection::documents() const {
  return state_->records->documents();
}

Result<std::vector<DocumentRecord>> Collection::documents(std::span<const std::int64_t> ids) const {
  auto found = KOTAE_TRY_VALUE(state_->records->documents_by_id(ids));
  std::vector<DocumentRecord> documents;
  documents.reserve(ids.size());
  for (const std::int64_t id : ids) {
    auto it = found.find(id);
    // Removed since the search that named it: an empty record keeps the order.
    documents.push_back(it == found.end() ? DocumentRecord{} : it->second);
  }
  return documents;
}

Result<std::int64_t> Collection::put_document(const DocumentRecord& document, std::span<const ChunkRecord> chunks,
                                              std::span<const float> embeddings,
                                              std::span<const std::vector<SentenceVector>> sentences) {
  State& state = *state_;
  const std::size_t dimension = info().dimension;
  KOTAE_TRY(check_document(document, chunks, embeddings, sentences, dimension));
  std::vector<std::string> heading_paths;  // as stored, and as BM25 indexes it
  heading_paths.reserve(chunks.size());
  for (const auto& chunk : chunks) heading_paths.push_back(heading_path_json(chunk.heading_path));
  std::vector<std::vector<std::byte>> sentence_blobs;
  for (const auto& list : sentences) sentence_blobs.push_back(encode_sentence_vectors(list, dimension));

  std::lock_guard writer(state.writer_mutex);
  auto transaction = KOTAE_TRY_VALUE(state.records->begin_write());
  // Inside the transaction nobody else commits: what others did before is applied first, so the
  // position after this commit is one the indexes really reach.
  KOTAE_TRY(state.indexes->catch_up(*state.records));
  const auto replaced = KOTAE_TRY_VALUE(transaction->remove_document(document.path));
  const std::int64_t document_id = KOTAE_TRY_VALUE(transaction->insert_document(document, chunks.size()));
  const auto chunk_ids =
      KOTAE_TRY_VALUE(transaction->insert_chunks(document_id, chunks, heading_paths, embeddings, sentence_blobs));
  const std::int64_t position = KOTAE_TRY_VALUE(transaction->commit());

  // Committed: the indexes follow. (Not saved here: that would rewrite the whole vector index per
  // document; the change log covers a crash until save_vector_index().)
  const WrittenDocument written{document_id, document.path, document.format, chunk_ids,
                                chunks,      heading_paths, embeddings,      document.metadata_json};
  KOTAE_TRY(state.indexes->apply_write(replaced, &written, position));
  return document_id;
}

Result<bool> Collection::remove_document(std::string_view path) {
  State& state = *state_;
  std::lock_guard writer(state.writer_mutex);
  auto transaction = KOTAE_TRY_VALUE(state.records->begin_write());
  KOTAE_TRY(state.indexes->catch_up(*state.records));
  const auto removed = KOTAE_TRY_VALUE(transaction->remove_document(path));
  if (!removed) return false;
  const std::int64_t position = KOTAE_TRY_VALUE(transaction->commit());
  KOTAE_TRY(state.indexes->apply_write(removed, nullptr, position));
  return true;
}

Result<bool> Collection::update_document_metadata(std::int64_t id, std::string_view metadata_json) {
  State& state = *state_;
  std::lock_guard writer(state.writer_mutex);
  auto transaction = KOTAE_TRY_VALUE(state.records->begin_write());
  KOTAE_TRY(state.indexes->catch_up(*state.records));
  if (!KOTAE_TRY_VALUE(transaction->update_document_metadata(id, metadata_json))) return false;
  const std::int64_t position = KOTAE_TRY_VALUE(transaction->commit());
  KOTAE_TRY(state.indexes->apply_metadata(id, metadata_json, position));
  return true;
}

// --- chunks ----------------------------------------------------------------------------------------

Result<std::vector<ChunkRecord>> Collection::chunks(std::span<const std::int64_t> ids) const {
  auto found = KOTAE_TRY_VALUE(state_->records->chunks_by_id(ids));
  return in_order(ids, found);  // an id removed since the search that named it is left out
}

Result<std::vector<ChunkRecord>> Collection::document_chunks(std::int64_t document_id) const {
  return state_->records->document_chunks(document_id);
}

Result<std::vector<float>> Collection::embeddings(std::span<const std::int64_t> chunk_ids) const {
  return state_->records->embeddings(chunk_ids);
}

Result<std::vector<std::vector<SentenceVector>>> Collection::chunk_sentences(
    std::span<const std::int64_t> chunk_ids) const {
  return state_->records->chunk_sentences(chunk_ids);
}

std::size_t Collection::chunk_count() const {
  return state_->indexes->chunk_count();
}
std::size_t Collection::document_count() const {
  return state_->indexes->document_count();
}

// --- search ----------------------------------------------------------------------------------------

// Catches up unless this process is writing now (it caught up when it began, and nobody else commits
// while it writes). Readers running side by side (BM25 and vectors) wait for each other, so neither
// reads before the other's catch-up.
Result<void> Collection::catch_up_before_reading() const {
  State& state = *state_;
  if (!state.records->check_before_each_search()) return {};
  std::lock_guard readers(state.search_catch_up_mutex);
  std::unique_lock writer(state.writer_mutex, std::try_to_lock);
  if (!writer.owns_lock()) return {};
  return state.indexes->catch_up(*state.records);
}

Result<std::vector<ScoredChunk>> Collection::search_bm25(std::string_view query, std::size_t k,
                                                         const SearchFilter& filter) const {
  KOTAE_TRY(catch_up_before_reading());
  return state_->indexes->search_bm25(query, k, filter);
}

Result<std::vector<ScoredChunk>> Collection::search_vector(std::span<const float> query, std::size_t k,
                                                           const SearchFilter& filter) const {
  if (query.size() == info().dimension) KOTAE_TRY(catch_up_before_reading());
  return state_->indexes->search_vector(query, k, filter);
}

Result<void> Collection::check_filter(const SearchFilter& filter) const {
  if (!filter.where) return {};
  KOTAE_TRY(catch_up_before_reading());
  return state_->indexes->check_filter(filter);
}

Result<std::vector<ScoredChunk>> Collection::search_vector_exact(std::span<const float> query, std::size_t k) const {
  return state_->indexes->search_vector_exact(query, k);
}

// --- the vector snapshot, and checks ----------------------------------------------------------------

Result<void> Collection::save_vector_index() {
  State& state = *state_;
  std::lock_guard writer(state.writer_mutex);  // no commit between the snapshot and the trim
  KOTAE_TRY(state.indexes->catch_up(*state.records));
  const auto saved = KOTAE_TRY_VALUE(state.indexes->save_snapshot(state.snapshot));
  if (saved) KOTAE_TRY(state.records->snapshot_saved(*saved));
  return {};
}

Result<void> Collection::rebuild_vector_index() {
  State& state = *state_;
  {
    std::lock_guard writer(state.writer_mutex);
    KOTAE_TRY(state.indexes->catch_up(*state.records));
    KOTAE_TRY(state.indexes->rebuild_vectors(*state.records));
  }
  return save_vector_index();
}

Result<ConsistencyReport> Collection::check() const {
  State& state = *state_;
  std::lock_guard writer(state.writer_mutex);
  const RecordCheck records = KOTAE_TRY_VALUE(state.records->check_records());
  const std::vector<std::int64_t> keys = state.indexes->vector_keys();
  ConsistencyReport report;
  report.integrity_ok = records.integrity_ok;
  report.fts_ok = records.fts_ok;
  report.documents = records.documents;
  report.chunks = records.chunk_ids.size();
  report.vectors = keys.size();
  std::vector<std::string> problems = records.problems;
  std::vector<std::int64_t> difference;
  std::set_difference(records.chunk_ids.begin(), records.chunk_ids.end(), keys.begin(), keys.end(),
                      std::back_inserter(difference));
  report.chunks_without_vector = difference.size();
  difference.clear();
  std::set_difference(keys.begin(), keys.end(), records.chunk_ids.begin(), records.chunk_ids.end(),
                      std::back_inserter(difference));
  report.vectors_without_chunk = difference.size();
  if (report.chunks_without_vector != 0 || report.vectors_without_chunk != 0) {
    problems.push_back(std::to_string(report.chunks_without_vector) + " chunks without a vector, " +
                       std::to_string(report.vectors_without_chunk) + " vectors without a chunk (" +
                       std::to_string(report.chunks) + " chunks, " + std::to_string(report.vectors) +
                       " vectors); rebuild the vector index");
  }
  for (std::size_t i = 0; i < problems.size(); ++i) report.details += (i ? "\n" : "") + problems[i];
  return report;
}

}  // namespace kotae::store
