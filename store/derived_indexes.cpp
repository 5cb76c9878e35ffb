#include "store/derived_indexes.h"

#include <algorithm>
#include <mutex>
#include <shared_mutex>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "store/bm25_index.h"
#include "store/metadata_filter.h"
#include "store/vector_index.h"

namespace kotae::store {

namespace {

// A filtered vector search compares every allowed vector directly when there are few of them
// (cheaper than a graph walk that has to skip most of what it meets, and exact).
constexpr std::size_t kExactSearchBelow = 2048;
constexpr std::size_t kRebuildBatch = 8192;

std::size_t worker_threads() {
  return std::max(1u, std::thread::hardware_concurrency());
}
std::size_t threads_for(std::size_t vectors) {
  return vectors >= 32 ? worker_threads() : 1;
}

// What a filter needs to know about a document without asking the store: its metadata parsed once,
// when the entry is made, never per search.
struct DocumentEntry {
  std::string path;
  std::string format;
  std::vector<std::int64_t> chunk_ids;
  DocumentMetadata metadata;
};

// Vectors gathered for one add_many.
struct VectorBatch {
  std::vector<std::int64_t> keys;
  std::vector<float> values;
  void add(std::int64_t key, std::span<const float> vector) {
    keys.push_back(key);
    values.insert(values.end(), vector.begin(), vector.end());
  }
};

}  // namespace

struct DerivedIndexes::State {
  std::size_t dimension = 0;
  // Guards everything below: searches share it, changes take it alone.
  mutable std::shared_mutex mutex;
  std::unique_ptr<VectorIndex> vectors;
  Bm25Index bm25;
  std::unordered_map<std::int64_t, std::int64_t> chunk_document;  // chunk id → document id
  std::unordered_map<std::int64_t, DocumentEntry> documents;      // by document id
  FieldSummary fields;                                            // of the documents' metadata
  std::int64_t position = 0;                                      // the change-log position reflected
  std::int64_t saved_position = -1;  // the position of the snapshot on disk; -1: none that fits

  // Takes a chunk out of every index (whatever of it is there).
  void drop_chunk(std::int64_t chunk_id) {
    vectors->remove(chunk_id);
    bm25.remove(chunk_id);
    const auto held = chunk_document.find(chunk_id);
    if (held == chunk_document.end()) return;
    if (auto entry = documents.find(held->second); entry != documents.end()) {
      std::erase(entry->second.chunk_ids, chunk_id);
    }
    chunk_document.erase(held);
  }
  void add_chunk_text(std::int64_t chunk_id, std::int64_t document_id, std::string_view text,
                      std::string_view heading_path) {
    chunk_document[chunk_id] = document_id;
    documents[document_id].chunk_ids.push_back(chunk_id);
    bm25.add(chunk_id, document_id, text, heading_path);
  }
  // A document's entry (chunks come after), its metadata parsed and counted in the field summary.
  DocumentEntry& set_document(std::int64_t id, std::string path, std::string format, std::string_view metadata_json) {
    DocumentEntry& entry = documents[id];
    fields.remove(entry.metadata);  // nothing when the entry is new
    entry.path = std::move(path);
    entry.format = std::move(format);
    entry.metadata = DocumentMetadata::from_text(metadata_json);
    fields.add(entry.metadata);
    return entry;
  }
  void erase_document(std::unordered_map<std::int64_t, DocumentEntry>::iterator entry) {
    fields.remove(entry->second.metadata);
    documents.erase(entry);
  }

  bool allows(const SearchFilter& filter, const DocumentEntry& entry) const {
    if (!filter.path_prefix.empty() && !entry.path.starts_with(filter.path_prefix)) return false;
    if (!filter.formats.empty() &&
        std::find(filter.formats.begin(), filter.formats.end(), entry.format) == filter.formats.end()) {
      return false;
    }
    return !filter.where || filter.where->matches(entry.metadata);
  }

  // Documents a filter allows, with how many chunks they hold; an error naming the field when its
  // metadata filter asks for a field no document has, or compares one with a value of another type.
  Result<std::pair<std::unordered_set<std::int64_t>, std::size_t>> allowed_by(const SearchFilter& filter) const {
    if (filter.where) KOTAE_TRY(filter.where->check(fields));
    std::unordered_set<std::int64_t> allowed;
    std::size_t chunks = 0;
    auto consider = [&](std::int64_t id, const DocumentEntry& entry) {
      if (!allows(filter, entry) || !allowed.insert(id).second) return;
      chunks += entry.chunk_ids.size();
    };
    if (!filter.documents.empty()) {
      for (const std::int64_t id : filter.documents) {
        if (const auto entry = documents.find(id); entry != documents.end()) consider(id, entry->second);
      }
    } else {
      for (const auto& [id, entry] : documents) consider(id, entry);
    }
    return std::pair{std::move(allowed), chunks};
  }

  std::vector<ScoredChunk> scored(const std::vector<Neighbour>& neighbours) const {
    std::vector<ScoredChunk> results;
    results.reserve(neighbours.size());
    for (const auto& neighbour : neighbours) {
      // A vector read from the store after the maps (at open, or by a rebuild) whose chunk the maps
      // learn at the next catch-up: not searchable until then.
      const auto document = chunk_document.find(neighbour.key);
      if (document != chunk_document.end()) results.push_back({neighbour.key, document->second, neighbour.similarity});
    }
    return results;
  }
};

namespace {

// A fresh vector index over every stored embedding, built in batches with all cores.
Result<std::unique_ptr<VectorIndex>> build_vectors(RecordStore& store, std::size_t dimension) {
  auto index = KOTAE_TRY_VALUE(VectorIndex::create(dimension));
  VectorBatch batch;
  auto flush = [&]() -> Result<void> {
    auto added = index->add_many(batch.keys, batch.values, worker_threads());
    batch = {};
    return added;
  };
  KOTAE_TRY(store.scan_chunks(true, [&](const IndexedChunk& chunk) -> Result<void> {
    batch.add(chunk.id, chunk.embedding);
    if (batch.keys.size() == kRebuildBatch) return flush();
    return {};
  }));
  KOTAE_TRY(flush());
  return index;
}

}  // namespace

Result<std::unique_ptr<DerivedIndexes>> DerivedIndexes::open(RecordStore& store,
                                                             const std::filesystem::path& snapshot) {
  auto state = std::make_unique<State>();
  state->dimension = store.info().dimension;
  (void)KOTAE_TRY_VALUE(store.changed_elsewhere());  // from here on, other writers' commits are noticed
  // The position first, then the records: whatever is committed in between is read now and again by
  // the next catch-up, which drops and re-adds every chunk it touches.
  const std::int64_t last = KOTAE_TRY_VALUE(store.last_change());
  KOTAE_TRY(store.scan_documents([&](IndexedDocument document) {
    state->set_document(document.id, std::move(document.path), std::move(document.format), document.metadata_json);
  }));
  KOTAE_TRY(store.scan_chunks(false, [&](const IndexedChunk& chunk) -> Result<void> {
    state->add_chunk_text(chunk.id, chunk.document_id, chunk.text, chunk.heading_path);
    return {};
  }));
  state->position = last;

  std::unique_ptr<DerivedIndexes> indexes(new DerivedIndexes(std::move(state)));
  State& s = *indexes->state_;
  const std::int64_t trimmed = KOTAE_TRY_VALUE(store.log_trimmed_through());
  auto loaded = VectorIndex::load(snapshot, s.dimension);
  std::string& because = indexes->rebuilt_because_;
  if (loaded && loaded->log_position <= last && loaded->log_position >= trimmed) {
    s.vectors = std::move(loaded->index);
    s.saved_position = loaded->log_position;
    // Replay the log's tail onto the loaded vectors: every chunk touched after the snapshot is
    // dropped and, when it still exists, added again from its stored embedding.
    auto touched = KOTAE_TRY_VALUE(store.chunks_changed(loaded->log_position, last));
    if (touched) {
      VectorBatch batch;
      for (const std::int64_t id : *touched) s.vectors->remove(id);
      KOTAE_TRY(store.read_chunks(*touched, [&](const IndexedChunk& chunk) -> Result<void> {
        if (s.chunk_document.contains(chunk.id)) batch.add(chunk.id, chunk.embedding);
        return {};
      }));
      KOTAE_TRY(s.vectors->add_many(batch.keys, batch.values, threads_for(batch.keys.size())));
      if (s.vectors->size() == s.chunk_document.size()) return indexes;
      because = "it held " + std::to_string(s.vectors->size()) + " vectors for " +
                std::to_string(s.chunk_document.size()) + " chunks";
    } else {
      because = "the change log no longer reaches back to it";
    }
  } else if (loaded) {
    because = "it was saved at change " + std::to_string(loaded->log_position) +
              ", which does not fit the change log (changes " + std::to_string(trimmed) + " to " +
              std::to_string(last) + ")";
  } else if (loaded.error().code == ErrorCode::io) {
    return loaded.error();  // unreadable for a reason a rebuild would not fix (permissions)
  } else {
    because = loaded.error().code == ErrorCode::not_found ? "the file is missing" : loaded.error().message;
  }
  if (s.chunk_document.empty()) because.clear();  // nothing to rebuild: not news
  s.vectors = KOTAE_TRY_VALUE(build_vectors(store, s.dimension));
  s.saved_position = -1;
  return indexes;
}

DerivedIndexes::DerivedIndexes(std::unique_ptr<State> state) : state_(std::move(state)) {}
DerivedIndexes::~DerivedIndexes() = default;

std::int64_t DerivedIndexes::position() const {
  std::shared_lock lock(state_->mutex);
  return state_->position;
}

// --- following the change log ---------------------------------------------------------------------

Result<void> DerivedIndexes::catch_up(RecordStore& store) {
  State& s = *state_;
  if (!KOTAE_TRY_VALUE(store.changed_elsewhere())) return {};
  const std::int64_t last = KOTAE_TRY_VALUE(store.last_change());
  const std::int64_t from = position();
  if (last == from) return {};
  auto logged = KOTAE_TRY_VALUE(store.chunks_changed(from, last));
  std::vector<std::int64_t> touched;
  if (logged) {
    touched = std::move(*logged);
  } else {
    // The log was trimmed past this position (another process saved its snapshot): compare ids.
    std::unordered_set<std::int64_t> held;
    {
      std::shared_lock lock(s.mutex);
      held.reserve(s.chunk_document.size());
      for (const auto& entry : s.chunk_document) held.insert(entry.first);
    }
    for (const std::int64_t id : KOTAE_TRY_VALUE(store.chunk_ids())) {
      if (!held.erase(id)) touched.push_back(id);  // new there
    }
    touched.insert(touched.end(), held.begin(), held.end());  // removed there
  }

  struct Row {
    std::int64_t id, document_id;
    std::string text, heading_path;
  };
  std::vector<Row> rows;
  VectorBatch batch;
  std::unordered_map<std::int64_t, IndexedDocument> row_documents;
  KOTAE_TRY(store.read_chunks(touched, [&](const IndexedChunk& chunk) -> Result<void> {
    rows.push_back({chunk.id, chunk.document_id, std::string(chunk.text), std::string(chunk.heading_path)});
    batch.add(chunk.id, chunk.embedding);
    row_documents.try_emplace(
        chunk.document_id,
        IndexedDocument{chunk.document_id, std::string(chunk.document_path), std::string(chunk.document_format), {}});
    return {};
  }));
  // The metadata of the documents those chunks are in (filters read it), one query for them all.
  std::vector<std::int64_t> document_ids;
  for (const auto& entry : row_documents) document_ids.push_back(entry.first);
  if (!document_ids.empty()) {
    for (auto& [id, record] : KOTAE_TRY_VALUE(store.documents_by_id(document_ids))) {
      if (auto row = row_documents.find(id); row != row_documents.end()) {
        row->second.metadata_json = std::move(record.metadata_json);
      }
    }
  }

  std::unique_lock lock(s.mutex);
  std::unordered_set<std::int64_t> emptied;
  for (const std::int64_t id : touched) {
    if (auto held = s.chunk_document.find(id); held != s.chunk_document.end()) emptied.insert(held->second);
    s.drop_chunk(id);
  }
  // Every document whose chunks were read again takes its metadata as stored now: new, or changed
  // by another writer (update_document_metadata logs the document's chunks as added again).
  for (auto& [id, document] : row_documents) {
    s.set_document(id, std::move(document.path), std::move(document.format), document.metadata_json);
  }
  for (const Row& row : rows) s.add_chunk_text(row.id, row.document_id, row.text, row.heading_path);
  for (const std::int64_t document_id : emptied) {
    if (auto entry = s.documents.find(document_id); entry != s.documents.end() && entry->second.chunk_ids.empty()) {
      s.erase_document(entry);
    }
  }
  s.position = last;
  return s.vectors->add_many(batch.keys, batch.values, threads_for(batch.keys.size()));
}

Result<void> DerivedIndexes::apply_write(std::optional<std::int64_t> removed_document, const WrittenDocument* added,
                                         std::int64_t position) {
  State& s = *state_;
  std::unique_lock lock(s.mutex);
  if (removed_document) {
    if (auto old = s.documents.find(*removed_document); old != s.documents.end()) {
      const std::vector<std::int64_t> chunk_ids = old->second.chunk_ids;
      for (const std::int64_t chunk_id : chunk_ids) s.drop_chunk(chunk_id);
      if (auto entry = s.documents.find(*removed_document); entry != s.documents.end()) s.erase_document(entry);
    }
  }
  Result<void> vectors_added;
  if (added != nullptr) {
    vectors_added = s.vectors->add_many(added->chunk_ids, added->embeddings, threads_for(added->chunk_ids.size()));
    s.set_document(added->id, std::string(added->path), std::string(added->format), added->metadata_json);
    for (std::size_t i = 0; i < added->chunk_ids.size(); ++i) {
      s.add_chunk_text(added->chunk_ids[i], added->id, added->chunks[i].text, added->heading_paths[i]);
    }
  }
  s.position = position;
  return vectors_added;
}

Result<void> DerivedIndexes::apply_metadata(std::int64_t document_id, std::string_view metadata_json,
                                            std::int64_t position) {
  State& s = *state_;
  std::unique_lock lock(s.mutex);
  // The entry's parsed metadata and the field summary follow; its chunks stay. Another writer's change
  // arrives in catch_up() as the document's chunks read again, which takes the metadata anew too. The
  // position moves on past the change's log entries either way.
  if (auto entry = s.documents.find(document_id); entry != s.documents.end()) {
    std::string path = entry->second.path, format = entry->second.format;
    s.set_document(document_id, std::move(path), std::move(format), metadata_json);
  }
  s.position = position;
  return {};
}

// --- searching ------------------------------------------------------------------------------------

Result<std::vector<ScoredChunk>> DerivedIndexes::search_bm25(std::string_view query, std::size_t k,
                                                             const SearchFilter& filter) const {
  const State& s = *state_;
  const std::vector<std::string> terms = Bm25Index::query_terms(query);
  if (terms.empty() || k == 0) return std::vector<ScoredChunk>();
  std::shared_lock lock(s.mutex);
  std::vector<Bm25Hit> hits;
  if (filter.empty()) {
    hits = s.bm25.search(terms, k);
  } else {
    const auto [allowed_documents, allowed_chunks] = KOTAE_TRY_VALUE(s.allowed_by(filter));
    if (allowed_documents.empty()) return std::vector<ScoredChunk>();
    const Bm25Index::DocumentPredicate allow = [&](std::int64_t document_id) {
      return allowed_documents.contains(document_id);
    };
    hits = s.bm25.search(terms, k, &allow);
  }
  std::vector<ScoredChunk> results;
  results.reserve(hits.size());
  for (const Bm25Hit& hit : hits) results.push_back({hit.chunk_id, hit.document_id, hit.score});
  return results;
}

namespace {

Error wrong_dimension(std::size_t query, std::size_t dimension) {
  return make_error(ErrorCode::invalid_argument, "a query vector of dimension " + std::to_string(query) +
                                                     " for a collection of dimension " + std::to_string(dimension));
}

}  // namespace

Result<std::vector<ScoredChunk>> DerivedIndexes::search_vector(std::span<const float> query, std::size_t k,
                                                               const SearchFilter& filter) const {
  const State& s = *state_;
  if (query.size() != s.dimension) return wrong_dimension(query.size(), s.dimension);
  std::shared_lock lock(s.mutex);
  if (filter.empty()) return s.scored(KOTAE_TRY_VALUE(s.vectors->search(query, k)));

  const auto [allowed_documents, allowed_chunks] = KOTAE_TRY_VALUE(s.allowed_by(filter));
  if (allowed_chunks == 0 || k == 0) return std::vector<ScoredChunk>();
  if (allowed_chunks > kExactSearchBelow && allowed_chunks * 50 > s.chunk_document.size()) {
    const VectorIndex::Predicate allow = [&](std::int64_t key) {
      const auto document = s.chunk_document.find(key);
      return document != s.chunk_document.end() && allowed_documents.contains(document->second);
    };
    auto found = KOTAE_TRY_VALUE(s.vectors->search(query, k, &allow));
    // A graph walk may run out of allowed nodes before it finds k; then compare them all.
    if (found.size() >= std::min(k, allowed_chunks)) return s.scored(found);
  }

  std::vector<Neighbour> neighbours;
  neighbours.reserve(allowed_chunks);
  std::vector<float> vector(s.dimension);
  for (const std::int64_t document_id : allowed_documents) {
    for (const std::int64_t chunk_id : s.documents.at(document_id).chunk_ids) {
      if (!s.vectors->get(chunk_id, vector)) continue;
      neighbours.push_back({chunk_id, cosine_similarity(query, vector)});
    }
  }
  const std::size_t keep = std::min(k, neighbours.size());
  std::partial_sort(neighbours.begin(), neighbours.begin() + static_cast<std::ptrdiff_t>(keep), neighbours.end(),
                    [](const Neighbour& a, const Neighbour& b) {
                      return a.similarity != b.similarity ? a.similarity > b.similarity : a.key < b.key;
                    });
  neighbours.resize(keep);
  return s.scored(neighbours);
}

Result<std::vector<ScoredChunk>> DerivedIndexes::search_vector_exact(std::span<const float> query,
                                                                     std::size_t k) const {
  const State& s = *state_;
  if (query.size() != s.dimension) return wrong_dimension(query.size(), s.dimension);
  std::shared_lock lock(s.mutex);
  return s.scored(KOTAE_TRY_VALUE(s.vectors->search_exact(query, k)));
}

Result<void> DerivedIndexes::check_filter(const SearchFilter& filter) const {
  if (!filter.where) return {};
  std::shared_lock lock(state_->mutex);
  return filter.where->check(state_->fields);
}

std::size_t DerivedIndexes::chunk_count() const {
  std::shared_lock lock(state_->mutex);
  return state_->chunk_document.size();
}

std::size_t DerivedIndexes::document_count() const {
  std::shared_lock lock(state_->mutex);
  return state_->documents.size();
}

std::vector<std::int64_t> DerivedIndexes::vector_keys() const {
  std::shared_lock lock(state_->mutex);
  return state_->vectors->keys();
}

// --- the snapshot ---------------------------------------------------------------------------------

Result<std::optional<std::int64_t>> DerivedIndexes::save_snapshot(const std::filesystem::path& path) {
  State& s = *state_;
  std::int64_t position = 0;
  {
    std::shared_lock lock(s.mutex);
    position = s.position;
    if (position == s.saved_position) return std::optional<std::int64_t>();
    KOTAE_TRY(s.vectors->save(path, position));
  }
  s.saved_position = position;  // only the (one) writer side changes it
  return std::optional<std::int64_t>(position);
}

Result<void> DerivedIndexes::rebuild_vectors(RecordStore& store) {
  State& s = *state_;
  auto built = KOTAE_TRY_VALUE(build_vectors(store, s.dimension));
  std::unique_lock lock(s.mutex);
  // The position stays: anything the build read beyond it is touched again by the next catch-up.
  s.vectors = std::move(built);
  s.saved_position = -1;
  return {};
}

}  // namespace kotae::store
