#include "store/collection.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cstring>
#include <mutex>
#include <nlohmann/json.hpp>
#include <shared_mutex>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "core/assert.h"
#include "store/atomic_file.h"
#include "store/bm25_index.h"
#include "store/reader_pool.h"
#include "store/schema.h"
#include "store/sqlite_database.h"
#include "store/vector_index.h"

namespace kotae::store {

// Embeddings are stored as float32 little-endian blobs, copied as they are in memory.
static_assert(std::endian::native == std::endian::little, "the embedding blob format assumes a little-endian host");

namespace {

constexpr const char* kDatabaseFile = "kotae.db";
constexpr const char* kVectorIndexFile = "vectors.index";
constexpr const char* kManifestFile = "manifest.json";

// A filtered vector search compares every allowed vector directly when there are few of them
// (cheaper than a graph walk that has to skip most of what it meets, and exact).
constexpr std::size_t kExactSearchBelow = 2048;
constexpr std::size_t kRebuildBatch = 8192;

std::size_t worker_threads() { return std::max(1u, std::thread::hardware_concurrency()); }

std::span<const std::byte> as_bytes(std::span<const float> floats) { return std::as_bytes(floats); }

// "?, ?, ?" for an IN list of n values ("NULL" when n is 0, which matches nothing).
std::string placeholders(std::size_t n) {
  if (n == 0) return "NULL";
  std::string list = "?";
  for (std::size_t i = 1; i < n; ++i) list += ", ?";
  return list;
}

Error corrupt(const std::filesystem::path& path, const std::string& what) {
  return make_error(ErrorCode::corrupt, path.string() + ": " + what);
}

std::string manifest_json(const CollectionInfo& info) {
  nlohmann::json manifest = {{"format_version", kFormatVersion},
                             {"embedder_id", info.embedder_id},
                             {"dimension", info.dimension},
                             {"chunk_tokens", info.chunk_tokens},
                             {"overlap_tokens", info.overlap_tokens}};
  return manifest.dump(2) + "\n";
}

std::optional<std::int64_t> parse_int(std::string_view text) {
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// Columns of a DocumentRecord without its text, in this order, for every query that reads one.
constexpr const char* kDocumentColumns =
    "id, path, sha256, size, modified_ns, title, format, metadata_json, chunk_count";

DocumentRecord read_document(const Statement& row) {
  DocumentRecord document;
  document.id = row.column_int64(0);
  document.path = row.column_text(1);
  document.sha256 = row.column_text(2);
  document.size = row.column_int64(3);
  document.modified_ns = row.column_int64(4);
  document.title = row.column_text(5);
  document.format = row.column_text(6);
  document.metadata_json = row.column_text(7);
  document.chunk_count = row.column_int64(8);
  return document;
}

constexpr const char* kChunkColumns =
    "id, document_id, ordinal, begin, end, page_first, page_last, heading_path, token_count, text";

Result<ChunkRecord> read_chunk(const Statement& row, const std::filesystem::path& database) {
  ChunkRecord chunk;
  chunk.id = row.column_int64(0);
  chunk.document_id = row.column_int64(1);
  chunk.ordinal = static_cast<std::uint32_t>(row.column_int64(2));
  chunk.begin = static_cast<std::size_t>(row.column_int64(3));
  chunk.end = static_cast<std::size_t>(row.column_int64(4));
  chunk.page_first = static_cast<std::uint32_t>(row.column_int64(5));
  chunk.page_last = static_cast<std::uint32_t>(row.column_int64(6));
  auto headings = nlohmann::json::parse(row.column_text(7), nullptr, /*allow_exceptions=*/false);
  if (!headings.is_array()) {
    return corrupt(database, "chunk " + std::to_string(chunk.id) + " has a heading path that is not a JSON array");
  }
  for (const auto& heading : headings) {
    if (heading.is_string()) chunk.heading_path.push_back(heading.get<std::string>());
  }
  chunk.token_count = static_cast<std::size_t>(row.column_int64(8));
  chunk.text = row.column_text(9);
  return chunk;
}

// The chunk's embedding blob as floats, checked against the collection's dimension.
Result<void> read_embedding(std::span<const std::byte> blob, std::size_t dimension, std::int64_t chunk_id,
                            const std::filesystem::path& database, float* out) {
  if (blob.size() != dimension * sizeof(float)) {
    return corrupt(database, "chunk " + std::to_string(chunk_id) + " has an embedding of " +
                                 std::to_string(blob.size()) + " bytes, expected " +
                                 std::to_string(dimension * sizeof(float)));
  }
  std::memcpy(out, blob.data(), blob.size());
  return {};
}

}  // namespace

// What a filter needs to know about a document without a database round trip.
struct DocumentEntry {
  std::string path;
  std::string format;
  std::vector<std::int64_t> chunk_ids;
};

// Everything a collection holds open. (Collection::State derives from it so that the helpers below,
// which are not members, can name it.)
struct CollectionState {
  std::filesystem::path dir;
  CollectionInfo info;

  // The one writer connection. Also held by save, rebuild and check so that no commit lands
  // between reading the database and reading the vector index.
  mutable std::mutex writer_mutex;
  mutable std::mutex reader_catch_up_mutex;
  std::unique_ptr<Database> writer;
  mutable std::unique_ptr<ReaderPool> readers;

  // Guards the vector index and the maps below: searches share it, updates take it alone.
  mutable std::shared_mutex index_mutex;
  std::unique_ptr<VectorIndex> index;
  Bm25Index bm25;  // over chunks' text and heading path, kept in step with chunks_fts
  std::unordered_map<std::int64_t, std::int64_t> chunk_document;  // chunk id → document id
  std::unordered_map<std::int64_t, DocumentEntry> documents;      // by document id
  std::int64_t applied_seq = 0;  // the vector_log position the in-memory index reflects
  std::int64_t data_version = 0;  // PRAGMA data_version when it last caught up: changes when another process commits
  std::int64_t saved_seq = -1;   // the position vectors.index on disk reflects
  std::string index_rebuilt_because;  // why opening rebuilt vectors.index from the database; empty: loaded

  std::filesystem::path database_path() const { return dir / kDatabaseFile; }
  std::filesystem::path index_path() const { return dir / kVectorIndexFile; }
};

struct Collection::State : CollectionState {};

namespace {

// Rows of `table` with the given ids, by id, read by one statement: a point query per id would also
// pay a read transaction per id.
template <class Record, class Read>
Result<std::unordered_map<std::int64_t, Record>> rows_by_id(ReaderPool& readers, const char* table,
                                                           const char* columns, std::span<const std::int64_t> ids,
                                                           Read&& read) {
  auto reader = readers.acquire();
  if (!reader) return reader.error();
  auto statement = (*reader)->prepare(std::string("SELECT ") + columns + " FROM " + table + " WHERE id IN (" +
                                      placeholders(ids.size()) + ")");
  if (!statement) return statement.error();
  for (std::size_t i = 0; i < ids.size(); ++i) statement->bind(static_cast<int>(i + 1), ids[i]);
  std::unordered_map<std::int64_t, Record> found;
  while (true) {
    auto row = statement->step();
    if (!row) return row.error();
    if (!*row) break;
    Result<Record> record = read(*statement);
    if (!record) return record.error();
    const std::int64_t id = record->id;
    found.emplace(id, std::move(*record));
  }
  return found;
}

}  // namespace

namespace {

using State = CollectionState;

Result<std::int64_t> last_log_seq(Database& db) {
  auto seq = db.query_int64("SELECT seq FROM sqlite_sequence WHERE name = 'vector_log'");
  if (!seq) return seq.error();
  return seq->value_or(0);
}

Result<std::optional<std::string>> read_meta(Database& db, std::string_view key) {
  auto statement = db.prepare("SELECT value FROM meta WHERE key = ?");
  if (!statement) return statement.error();
  statement->bind_text(1, key);
  auto row = statement->step();
  if (!row) return row.error();
  if (!*row) return std::optional<std::string>();
  return std::optional<std::string>(std::string(statement->column_text(0)));
}

Result<void> write_meta(Database& db, std::string_view key, std::string_view value) {
  auto statement = db.prepare(
      "INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value");
  if (!statement) return statement.error();
  statement->bind_text(1, key).bind_text(2, value);
  return statement->run();
}

// Reads CollectionInfo from the meta table; nullopt when the collection was never set up.
Result<std::optional<CollectionInfo>> read_info(Database& db) {
  auto embedder = read_meta(db, "embedder_id");
  if (!embedder) return embedder.error();
  if (!*embedder) return std::optional<CollectionInfo>();
  CollectionInfo info;
  info.embedder_id = **embedder;
  for (auto [key, field] : {std::pair{"dimension", &info.dimension}, std::pair{"chunk_tokens", &info.chunk_tokens},
                            std::pair{"overlap_tokens", &info.overlap_tokens}}) {
    auto value = read_meta(db, key);
    if (!value) return value.error();
    const auto number = *value ? parse_int(**value) : std::nullopt;
    if (!number || *number < 0) return corrupt(db.path(), std::string("meta has no valid ") + key);
    *field = static_cast<std::size_t>(*number);
  }
  if (info.dimension == 0) return corrupt(db.path(), "meta has dimension 0");
  auto format = read_meta(db, "format_version");
  if (!format) return format.error();
  const auto version = *format ? parse_int(**format) : std::nullopt;
  if (!version) return corrupt(db.path(), "meta has no valid format_version");
  if (*version > kFormatVersion) {
    return make_error(ErrorCode::unsupported, db.path().string() + " has format version " + std::to_string(*version) +
                                                  ", newer than this build of Kotae reads (" +
                                                  std::to_string(kFormatVersion) + ")");
  }
  return std::optional<CollectionInfo>(info);
}

Result<void> write_info(Database& db, const CollectionInfo& info) {
  auto transaction = Transaction::begin(db);
  if (!transaction) return transaction.error();
  const std::pair<const char*, std::string> entries[] = {
      {"embedder_id", info.embedder_id},
      {"dimension", std::to_string(info.dimension)},
      {"chunk_tokens", std::to_string(info.chunk_tokens)},
      {"overlap_tokens", std::to_string(info.overlap_tokens)},
      {"format_version", std::to_string(kFormatVersion)},
      {"vector_log_trimmed_through", "0"},
  };
  for (const auto& [key, value] : entries) {
    if (auto written = write_meta(db, key, value); !written) return written;
  }
  return transaction->commit();
}

// Loads the document and chunk maps that filters and consistency checks use.
Result<void> load_maps(State& state) {
  auto documents = state.writer->prepare("SELECT id, path, format FROM documents");
  if (!documents) return documents.error();
  while (true) {
    auto row = documents->step();
    if (!row) return row.error();
    if (!*row) break;
    state.documents[documents->column_int64(0)] =
        DocumentEntry{std::string(documents->column_text(1)), std::string(documents->column_text(2)), {}};
  }
  auto chunks = state.writer->prepare(
      "SELECT id, document_id, text, heading_path FROM chunks ORDER BY document_id, ordinal");
  if (!chunks) return chunks.error();
  while (true) {
    auto row = chunks->step();
    if (!row) return row.error();
    if (!*row) break;
    const std::int64_t chunk_id = chunks->column_int64(0), document_id = chunks->column_int64(1);
    state.chunk_document[chunk_id] = document_id;
    state.documents[document_id].chunk_ids.push_back(chunk_id);
    state.bm25.add(chunk_id, document_id, chunks->column_text(2), chunks->column_text(3));
  }
  return {};
}

// A fresh index over every stored embedding, built in batches with all cores.
Result<std::unique_ptr<VectorIndex>> build_index(Database& db, std::size_t dimension) {
  auto made = VectorIndex::create(dimension);
  if (!made) return made.error();
  std::unique_ptr<VectorIndex> index = std::move(*made);
  auto statement = db.prepare("SELECT id, embedding FROM chunks ORDER BY id");
  if (!statement) return statement.error();
  std::vector<std::int64_t> keys;
  std::vector<float> vectors;
  auto flush = [&]() -> Result<void> {
    auto added = index->add_many(keys, vectors, worker_threads());
    keys.clear();
    vectors.clear();
    return added;
  };
  while (true) {
    auto row = statement->step();
    if (!row) return row.error();
    if (!*row) break;
    const std::int64_t id = statement->column_int64(0);
    keys.push_back(id);
    vectors.resize(keys.size() * dimension);
    auto read = read_embedding(statement->column_blob(1), dimension, id, db.path(),
                               vectors.data() + (keys.size() - 1) * dimension);
    if (!read) return read.error();
    if (keys.size() == kRebuildBatch) {
      if (auto added = flush(); !added) return added.error();
    }
  }
  if (auto added = flush(); !added) return added.error();
  return index;
}

// Brings a loaded index up to the database: every chunk touched after `position` is dropped from
// the index and, when it still exists, added again from its stored embedding. Order does not
// matter (an add followed by a remove ends absent) and keys are never reused (AUTOINCREMENT).
Result<void> replay_log(State& state, std::int64_t position) {
  Database& db = *state.writer;
  auto touched = db.prepare("SELECT DISTINCT chunk_id FROM vector_log WHERE seq > ?");
  if (!touched) return touched.error();
  touched->bind(1, position);
  std::vector<std::int64_t> chunk_ids;
  while (true) {
    auto row = touched->step();
    if (!row) return row.error();
    if (!*row) break;
    chunk_ids.push_back(touched->column_int64(0));
  }
  auto embedding = db.prepare("SELECT embedding FROM chunks WHERE id = ?");
  if (!embedding) return embedding.error();
  const std::size_t dimension = state.info.dimension;
  std::vector<std::int64_t> keys;
  std::vector<float> vectors;
  for (const std::int64_t chunk_id : chunk_ids) {
    state.index->remove(chunk_id);
    if (!state.chunk_document.contains(chunk_id)) continue;
    embedding->reset();
    embedding->bind(1, chunk_id);
    auto row = embedding->step();
    if (!row) return row.error();
    if (!*row) continue;
    keys.push_back(chunk_id);
    vectors.resize(keys.size() * dimension);
    auto read = read_embedding(embedding->column_blob(0), dimension, chunk_id, db.path(),
                               vectors.data() + (keys.size() - 1) * dimension);
    if (!read) return read.error();
  }
  return state.index->add_many(keys, vectors, worker_threads());
}

// The chunks another process's commits touched since `state` last caught up: from the change log,
// or, when that process trimmed the log past this position (it saved vectors.index), by comparing
// the chunk ids stored with the ones held (ids are never reused, and a changed chunk gets a new id).
Result<std::vector<std::int64_t>> chunks_touched_elsewhere(State& state, std::int64_t last_seq) {
  Database& db = *state.writer;
  auto trimmed_text = read_meta(db, "vector_log_trimmed_through");
  if (!trimmed_text) return trimmed_text.error();
  const std::int64_t trimmed = (*trimmed_text ? parse_int(**trimmed_text) : std::nullopt).value_or(0);
  std::vector<std::int64_t> touched;
  if (trimmed <= state.applied_seq) {
    auto logged = db.prepare("SELECT DISTINCT chunk_id FROM vector_log WHERE seq > ? AND seq <= ?");
    if (!logged) return logged.error();
    logged->bind(1, state.applied_seq).bind(2, last_seq);
    while (true) {
      auto row = logged->step();
      if (!row) return row.error();
      if (!*row) return touched;
      touched.push_back(logged->column_int64(0));
    }
  }
  auto stored = db.prepare("SELECT id FROM chunks");
  if (!stored) return stored.error();
  std::unordered_set<std::int64_t> held;
  held.reserve(state.chunk_document.size());
  for (const auto& entry : state.chunk_document) held.insert(entry.first);
  while (true) {
    auto row = stored->step();
    if (!row) return row.error();
    if (!*row) break;
    const std::int64_t id = stored->column_int64(0);
    if (!held.erase(id)) touched.push_back(id);  // new here
  }
  touched.insert(touched.end(), held.begin(), held.end());  // removed there
  return touched;
}

// Brings the maps, BM25 and the vector index up to what other processes committed since (the CLI
// indexing a collection a server has open): every touched chunk is dropped and, when it still
// exists, added again with its document. Cheap when nothing changed (one PRAGMA). The caller holds
// writer_mutex; inside a write transaction nobody else can commit meanwhile, and outside one a
// commit that lands during the catch-up changes data_version again, so the next one sees it.
Result<void> catch_up(State& state) {
  Database& db = *state.writer;
  auto version = db.query_int64("PRAGMA data_version");
  if (!version) return version.error();
  if (version->value_or(0) == state.data_version) return {};
  state.data_version = version->value_or(0);
  auto last_seq = last_log_seq(db);
  if (!last_seq) return last_seq.error();
  if (*last_seq == state.applied_seq) return {};
  auto touched = chunks_touched_elsewhere(state, *last_seq);
  if (!touched) return touched.error();

  struct Row {
    std::int64_t id, document_id;
    std::string text, heading_path;
  };
  std::vector<Row> rows;
  std::vector<float> vectors;
  std::unordered_map<std::int64_t, DocumentEntry> new_documents;
  auto chunk = db.prepare("SELECT document_id, text, heading_path, embedding FROM chunks WHERE id = ?");
  auto document = db.prepare("SELECT path, format FROM documents WHERE id = ?");
  if (!chunk) return chunk.error();
  if (!document) return document.error();
  const std::size_t dimension = state.info.dimension;
  for (const std::int64_t id : *touched) {
    chunk->reset();
    chunk->bind(1, id);
    auto row = chunk->step();
    if (!row) return row.error();
    if (!*row) continue;  // removed
    Row& r = rows.emplace_back(Row{id, chunk->column_int64(0), std::string(chunk->column_text(1)),
                                   std::string(chunk->column_text(2))});
    vectors.resize(rows.size() * dimension);
    auto read = read_embedding(chunk->column_blob(3), dimension, id, db.path(), vectors.data() + (rows.size() - 1) * dimension);
    if (!read) return read.error();
    if (new_documents.contains(r.document_id)) continue;
    document->reset();
    document->bind(1, r.document_id);
    auto found = document->step();
    if (!found) return found.error();
    if (*found) new_documents[r.document_id] = {std::string(document->column_text(0)), std::string(document->column_text(1)), {}};
  }

  std::unique_lock index_lock(state.index_mutex);
  for (const std::int64_t id : *touched) {
    const auto held = state.chunk_document.find(id);
    if (held == state.chunk_document.end()) continue;
    state.index->remove(id);
    state.bm25.remove(id);
    if (auto entry = state.documents.find(held->second); entry != state.documents.end()) {
      std::erase(entry->second.chunk_ids, id);
      if (entry->second.chunk_ids.empty()) state.documents.erase(entry);
    }
    state.chunk_document.erase(held);
  }
  std::vector<std::int64_t> keys;
  for (const Row& r : rows) {
    keys.push_back(r.id);
    state.chunk_document[r.id] = r.document_id;
    state.bm25.add(r.id, r.document_id, r.text, r.heading_path);
    auto [entry, added] = state.documents.try_emplace(r.document_id, new_documents[r.document_id]);
    entry->second.chunk_ids.push_back(r.id);
  }
  state.applied_seq = *last_seq;
  return state.index->add_many(keys, vectors, keys.size() >= 32 ? worker_threads() : 1);
}

// Before a search: catches up unless this process is writing now (it caught up when it began, and
// the writer lock keeps other processes from committing while it writes). Searches running side by
// side (BM25 and vectors) wait for each other, so neither reads before the other's catch-up.
Result<void> catch_up_before_reading(State& state) {
  std::lock_guard one_at_a_time(state.reader_catch_up_mutex);
  std::unique_lock writer_lock(state.writer_mutex, std::try_to_lock);
  if (!writer_lock.owns_lock()) return {};
  return catch_up(state);
}

// Loads vectors.index and catches it up with the change log, or rebuilds it when it is missing,
// damaged, from another database (a position this database never reached, or older than the
// log it trimmed), or disagrees with the chunk count after catching up.
Result<void> open_vector_index(State& state) {
  Database& db = *state.writer;
  auto last_seq = last_log_seq(db);
  if (!last_seq) return last_seq.error();
  auto trimmed_text = read_meta(db, "vector_log_trimmed_through");
  if (!trimmed_text) return trimmed_text.error();
  const std::int64_t trimmed = (*trimmed_text ? parse_int(**trimmed_text) : std::nullopt).value_or(0);

  auto loaded = VectorIndex::load(state.index_path(), state.info.dimension);
  if (loaded && loaded->log_position <= *last_seq && loaded->log_position >= trimmed) {
    state.index = std::move(loaded->index);
    state.saved_seq = loaded->log_position;
    if (auto replayed = replay_log(state, loaded->log_position); !replayed) return replayed;
    state.applied_seq = *last_seq;
    if (state.index->size() == state.chunk_document.size()) return {};
    state.index_rebuilt_because = "it held " + std::to_string(state.index->size()) + " vectors for " +
                                  std::to_string(state.chunk_document.size()) + " chunks";
  } else if (loaded) {
    state.index_rebuilt_because = "it was saved at change " + std::to_string(loaded->log_position) +
                                  ", which does not fit this database's log (changes " + std::to_string(trimmed) +
                                  " to " + std::to_string(*last_seq) + ")";
  } else if (loaded.error().code == ErrorCode::io) {
    return loaded.error();  // unreadable for a reason a rebuild would not fix (permissions)
  } else {
    state.index_rebuilt_because = loaded.error().code == ErrorCode::not_found ? "the file is missing" : loaded.error().message;
  }

  if (state.chunk_document.empty()) state.index_rebuilt_because.clear();  // nothing to rebuild: not news
  auto built = build_index(db, state.info.dimension);
  if (!built) return built.error();
  state.index = std::move(*built);
  state.applied_seq = *last_seq;
  state.saved_seq = -1;
  return {};
}

}  // namespace

// --- opening ---------------------------------------------------------------------------------------

namespace {

Result<void> open_state(State& state, const std::filesystem::path& dir, const CollectionInfo* create_with) {
  state.dir = dir;
  const std::filesystem::path database = state.database_path();
  std::error_code error;
  const bool exists = std::filesystem::exists(database, error);
  if (!exists) {
    if (create_with == nullptr) return make_error(ErrorCode::not_found, "no collection at " + dir.string());
    if (create_with->embedder_id.empty() || create_with->dimension == 0) {
      return make_error(ErrorCode::invalid_argument,
                        "a new collection needs an embedder id and a dimension above 0 (" + dir.string() + ")");
    }
    std::filesystem::create_directories(dir, error);
    if (error) return make_error(ErrorCode::io, "cannot create " + dir.string() + ": " + error.message());
  }
  auto opened = Database::open(database, exists ? Database::Mode::read_write : Database::Mode::read_write_create);
  if (!opened) return opened.error();
  state.writer = std::move(*opened);
  if (auto migrated = migrate_schema(*state.writer); !migrated) return migrated.error();

  auto stored = read_info(*state.writer);
  if (!stored) return stored.error();
  if (!*stored) {
    // A database without settings: new, or its creation was interrupted before they were written.
    if (create_with == nullptr) return corrupt(database, "not a Kotae collection (no settings in its meta table)");
    if (auto written = write_info(*state.writer, *create_with); !written) return written.error();
    if (auto written = write_file_atomically(dir / kManifestFile, manifest_json(*create_with)); !written) {
      return written.error();
    }
    state.info = *create_with;
  } else {
    state.info = **stored;
    if (create_with != nullptr &&
        (create_with->embedder_id != state.info.embedder_id || create_with->dimension != state.info.dimension)) {
      return make_error(ErrorCode::invalid_argument,
                        "collection " + dir.string() + " was built with embedder " + state.info.embedder_id +
                            " (dimension " + std::to_string(state.info.dimension) + "), not " +
                            create_with->embedder_id + " (dimension " + std::to_string(create_with->dimension) + ")");
    }
  }

  state.readers = std::make_unique<ReaderPool>(database);
  // Read before the maps: a commit by another process after this point is caught up later.
  auto version = state.writer->query_int64("PRAGMA data_version");
  if (!version) return version.error();
  state.data_version = version->value_or(0);
  if (auto loaded = load_maps(state); !loaded) return loaded.error();
  return open_vector_index(state);
}

}  // namespace

Result<std::unique_ptr<Collection>> Collection::open_or_create(const std::filesystem::path& dir,
                                                               const CollectionInfo& info) {
  auto state = std::make_unique<State>();
  if (auto opened = open_state(*state, dir, &info); !opened) return opened.error();
  std::unique_ptr<Collection> collection(new Collection(std::move(state)));
  if (collection->state_->saved_seq < 0 && collection->state_->index->size() > 0) {
    (void)collection->save_vector_index();  // a rebuild is worth keeping; failing to is not fatal
  }
  return collection;
}

Result<std::unique_ptr<Collection>> Collection::open(const std::filesystem::path& dir) {
  auto state = std::make_unique<State>();
  if (auto opened = open_state(*state, dir, nullptr); !opened) return opened.error();
  std::unique_ptr<Collection> collection(new Collection(std::move(state)));
  if (collection->state_->saved_seq < 0 && collection->state_->index->size() > 0) {
    (void)collection->save_vector_index();
  }
  return collection;
}

Collection::Collection(std::unique_ptr<State> state) : state_(std::move(state)) {}

Collection::~Collection() {
  if (state_ != nullptr) (void)save_vector_index();  // best effort; the change log covers a failure
}

const CollectionInfo& Collection::info() const { return state_->info; }
const std::string& Collection::vector_index_rebuilt_because() const { return state_->index_rebuilt_because; }
const std::filesystem::path& Collection::dir() const { return state_->dir; }

// --- documents -------------------------------------------------------------------------------------

Result<std::optional<DocumentRecord>> Collection::find_document(std::string_view path) const {
  auto reader = state_->readers->acquire();
  if (!reader) return reader.error();
  auto statement = (*reader)->prepare(std::string("SELECT ") + kDocumentColumns + " FROM documents WHERE path = ?");
  if (!statement) return statement.error();
  statement->bind_text(1, path);
  auto row = statement->step();
  if (!row) return row.error();
  if (!*row) return std::optional<DocumentRecord>();
  return std::optional<DocumentRecord>(read_document(*statement));
}

Result<std::optional<DocumentRecord>> Collection::document(std::int64_t id) const {
  auto reader = state_->readers->acquire();
  if (!reader) return reader.error();
  auto statement =
      (*reader)->prepare(std::string("SELECT ") + kDocumentColumns + ", text FROM documents WHERE id = ?");
  if (!statement) return statement.error();
  statement->bind(1, id);
  auto row = statement->step();
  if (!row) return row.error();
  if (!*row) return std::optional<DocumentRecord>();
  DocumentRecord document = read_document(*statement);
  document.text = statement->column_text(9);
  return std::optional<DocumentRecord>(std::move(document));
}

Result<std::vector<DocumentRecord>> Collection::documents() const {
  auto reader = state_->readers->acquire();
  if (!reader) return reader.error();
  auto statement = (*reader)->prepare(std::string("SELECT ") + kDocumentColumns + " FROM documents ORDER BY path");
  if (!statement) return statement.error();
  std::vector<DocumentRecord> documents;
  while (true) {
    auto row = statement->step();
    if (!row) return row.error();
    if (!*row) break;
    documents.push_back(read_document(*statement));
  }
  return documents;
}

Result<std::vector<DocumentRecord>> Collection::documents(std::span<const std::int64_t> ids) const {
  auto found = rows_by_id<DocumentRecord>(*state_->readers, "documents", kDocumentColumns, ids,
                                          [](const Statement& row) -> Result<DocumentRecord> { return read_document(row); });
  if (!found) return found.error();
  std::vector<DocumentRecord> documents;
  documents.reserve(ids.size());
  for (const std::int64_t id : ids) {
    auto it = found->find(id);
    // Removed since the search that named it: an empty record keeps the order.
    documents.push_back(it == found->end() ? DocumentRecord{} : it->second);
  }
  return documents;
}

Result<std::int64_t> Collection::put_document(const DocumentRecord& document, std::span<const ChunkRecord> chunks,
                                              std::span<const float> embeddings,
                                              std::span<const std::vector<SentenceVector>> sentences) {
  State& state = *state_;
  const std::size_t dimension = state.info.dimension;
  if (document.path.empty()) return make_error(ErrorCode::invalid_argument, "a document needs a path");
  if (embeddings.size() != chunks.size() * dimension) {
    return make_error(ErrorCode::invalid_argument,
                      document.path + ": " + std::to_string(embeddings.size()) + " embedding values for " +
                          std::to_string(chunks.size()) + " chunks of dimension " + std::to_string(dimension));
  }
  if (!sentences.empty() && sentences.size() != chunks.size()) {
    return make_error(ErrorCode::invalid_argument, document.path + ": sentences for " + std::to_string(sentences.size()) +
                                                       " of " + std::to_string(chunks.size()) + " chunks");
  }
  for (std::size_t i = 0; i < sentences.size(); ++i) {
    for (const auto& s : sentences[i]) {
      if (s.begin > s.end || s.end > chunks[i].text.size() || s.vector.size() != dimension) {
        return make_error(ErrorCode::invalid_argument,
                          document.path + ": a sentence of chunk " + std::to_string(i) + " is outside it or has the wrong dimension");
      }
    }
  }
  for (const auto& chunk : chunks) {
    if (chunk.begin > chunk.end) {
      return make_error(ErrorCode::invalid_argument,
                        document.path + ": chunk " + std::to_string(chunk.ordinal) + " ends before it begins");
    }
  }

  std::lock_guard writer_lock(state.writer_mutex);
  Database& db = *state.writer;
  auto transaction = Transaction::begin(db);
  if (!transaction) return transaction.error();
  if (auto caught_up = catch_up(state); !caught_up) return caught_up.error();

  std::optional<std::int64_t> replaced;
  {
    auto old = db.prepare("SELECT id FROM documents WHERE path = ?");
    if (!old) return old.error();
    old->bind_text(1, document.path);
    auto row = old->step();
    if (!row) return row.error();
    if (*row) replaced = old->column_int64(0);
  }
  if (replaced) {
    // Cascades to the chunks; their triggers drop the FTS rows and log the vectors' removal.
    auto removed = db.prepare("DELETE FROM documents WHERE id = ?");
    if (!removed) return removed.error();
    removed->bind(1, *replaced);
    if (auto run = removed->run(); !run) return run.error();
  }

  auto insert_document = db.prepare(
      "INSERT INTO documents(path, sha256, size, modified_ns, title, format, metadata_json, text, chunk_count) "
      "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)");
  if (!insert_document) return insert_document.error();
  insert_document->bind_text(1, document.path)
      .bind_text(2, document.sha256)
      .bind(3, document.size)
      .bind(4, document.modified_ns)
      .bind_text(5, document.title)
      .bind_text(6, document.format)
      .bind_text(7, document.metadata_json.empty() ? std::string_view("{}") : std::string_view(document.metadata_json))
      .bind_text(8, document.text)
      .bind(9, static_cast<std::int64_t>(chunks.size()));
  if (auto run = insert_document->run(); !run) return run.error();
  const std::int64_t document_id = db.last_insert_rowid();

  auto insert_chunk = db.prepare(
      "INSERT INTO chunks(document_id, ordinal, begin, end, page_first, page_last, heading_path, token_count, text, "
      "embedding, sentences) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  if (!insert_chunk) return insert_chunk.error();
  std::vector<std::int64_t> chunk_ids;
  chunk_ids.reserve(chunks.size());
  std::vector<std::string> chunk_heading_json;
  chunk_heading_json.reserve(chunks.size());
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    const ChunkRecord& chunk = chunks[i];
    insert_chunk->reset();
    insert_chunk->bind(1, document_id)
        .bind(2, static_cast<std::int64_t>(chunk.ordinal))
        .bind(3, static_cast<std::int64_t>(chunk.begin))
        .bind(4, static_cast<std::int64_t>(chunk.end))
        .bind(5, static_cast<std::int64_t>(chunk.page_first))
        .bind(6, static_cast<std::int64_t>(chunk.page_last))
        .bind_text(7, chunk_heading_json.emplace_back(nlohmann::json(chunk.heading_path)
                                                          .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)))
        .bind(8, static_cast<std::int64_t>(chunk.token_count))
        .bind_text(9, chunk.text)
        .bind_blob(10, as_bytes(embeddings.subspan(i * dimension, dimension)));
    const std::vector<std::byte> sentence_blob =
        sentences.empty() ? std::vector<std::byte>() : encode_sentence_vectors(sentences[i], dimension);
    insert_chunk->bind_blob(11, sentence_blob);
    if (auto run = insert_chunk->run(); !run) return run.error();
    chunk_ids.push_back(db.last_insert_rowid());
  }
  auto seq = last_log_seq(db);
  if (!seq) return seq.error();
  if (auto committed = transaction->commit(); !committed) return committed.error();

  // Committed: bring the in-memory index and maps along. (Not saved here: that would rewrite the
  // whole index per document; the change log covers a crash until save_vector_index().)
  std::unique_lock index_lock(state.index_mutex);
  if (replaced) {
    if (auto old = state.documents.find(*replaced); old != state.documents.end()) {
      for (const std::int64_t chunk_id : old->second.chunk_ids) {
        state.index->remove(chunk_id);
        state.bm25.remove(chunk_id);
        state.chunk_document.erase(chunk_id);
      }
      state.documents.erase(old);
    }
  }
  auto added = state.index->add_many(chunk_ids, embeddings, chunks.size() >= 32 ? worker_threads() : 1);
  for (std::size_t i = 0; i < chunk_ids.size(); ++i) {
    state.chunk_document[chunk_ids[i]] = document_id;
    // The heading path as chunks_fts indexes it: its JSON text, as stored.
    state.bm25.add(chunk_ids[i], document_id, chunks[i].text, chunk_heading_json[i]);
  }
  state.documents[document_id] = DocumentEntry{document.path, document.format, chunk_ids};
  state.applied_seq = *seq;
  if (!added) return added.error();
  return document_id;
}

Result<bool> Collection::remove_document(std::string_view path) {
  State& state = *state_;
  std::lock_guard writer_lock(state.writer_mutex);
  Database& db = *state.writer;
  auto transaction = Transaction::begin(db);
  if (!transaction) return transaction.error();
  if (auto caught_up = catch_up(state); !caught_up) return caught_up.error();
  auto removed = db.prepare("DELETE FROM documents WHERE path = ? RETURNING id");
  if (!removed) return removed.error();
  removed->bind_text(1, path);
  auto row = removed->step();
  if (!row) return row.error();
  if (!*row) return false;
  const std::int64_t document_id = removed->column_int64(0);
  if (auto rest = removed->run(); !rest) return rest.error();
  auto seq = last_log_seq(db);
  if (!seq) return seq.error();
  if (auto committed = transaction->commit(); !committed) return committed.error();

  std::unique_lock index_lock(state.index_mutex);
  if (auto old = state.documents.find(document_id); old != state.documents.end()) {
    for (const std::int64_t chunk_id : old->second.chunk_ids) {
      state.index->remove(chunk_id);
      state.bm25.remove(chunk_id);
      state.chunk_document.erase(chunk_id);
    }
    state.documents.erase(old);
  }
  state.applied_seq = *seq;
  return true;
}

// --- chunks ----------------------------------------------------------------------------------------

Result<std::vector<ChunkRecord>> Collection::chunks(std::span<const std::int64_t> ids) const {
  const auto& database = state_->database_path();
  auto found = rows_by_id<ChunkRecord>(*state_->readers, "chunks", kChunkColumns, ids,
                                       [&](const Statement& row) { return read_chunk(row, database); });
  if (!found) return found.error();
  std::vector<ChunkRecord> chunks;
  chunks.reserve(ids.size());
  for (const std::int64_t id : ids) {
    auto it = found->find(id);
    if (it != found->end()) chunks.push_back(it->second);  // else removed since the search that named it
  }
  return chunks;
}

Result<std::vector<ChunkRecord>> Collection::document_chunks(std::int64_t document_id) const {
  auto reader = state_->readers->acquire();
  if (!reader) return reader.error();
  auto statement = (*reader)->prepare(std::string("SELECT ") + kChunkColumns +
                                      " FROM chunks WHERE document_id = ? ORDER BY ordinal");
  if (!statement) return statement.error();
  statement->bind(1, document_id);
  std::vector<ChunkRecord> chunks;
  while (true) {
    auto row = statement->step();
    if (!row) return row.error();
    if (!*row) break;
    auto chunk = read_chunk(*statement, state_->database_path());
    if (!chunk) return chunk.error();
    chunks.push_back(std::move(*chunk));
  }
  return chunks;
}

Result<std::vector<float>> Collection::embeddings(std::span<const std::int64_t> chunk_ids) const {
  auto reader = state_->readers->acquire();
  if (!reader) return reader.error();
  auto statement = (*reader)->prepare("SELECT embedding FROM chunks WHERE id = ?");
  if (!statement) return statement.error();
  const std::size_t dimension = state_->info.dimension;
  std::vector<float> values(chunk_ids.size() * dimension);
  for (std::size_t i = 0; i < chunk_ids.size(); ++i) {
    statement->reset();
    statement->bind(1, chunk_ids[i]);
    auto row = statement->step();
    if (!row) return row.error();
    if (!*row) return make_error(ErrorCode::not_found, "no chunk " + std::to_string(chunk_ids[i]));
    auto read = read_embedding(statement->column_blob(0), dimension, chunk_ids[i], state_->database_path(),
                               values.data() + i * dimension);
    if (!read) return read.error();
  }
  return values;
}

Result<std::vector<std::vector<SentenceVector>>> Collection::chunk_sentences(std::span<const std::int64_t> chunk_ids) const {
  auto reader = state_->readers->acquire();
  if (!reader) return reader.error();
  auto statement = (*reader)->prepare("SELECT sentences FROM chunks WHERE id = ?");
  if (!statement) return statement.error();
  std::vector<std::vector<SentenceVector>> out;
  out.reserve(chunk_ids.size());
  for (const std::int64_t id : chunk_ids) {
    statement->reset();
    statement->bind(1, id);
    auto row = statement->step();
    if (!row) return row.error();
    if (!*row) return make_error(ErrorCode::not_found, "no chunk " + std::to_string(id));
    auto sentences = decode_sentence_vectors(statement->column_blob(0), state_->info.dimension);
    if (!sentences) return corrupt(state_->database_path(), "chunk " + std::to_string(id) + ": " + sentences.error().message);
    out.push_back(std::move(*sentences));
  }
  return out;
}

std::size_t Collection::chunk_count() const {
  std::shared_lock lock(state_->index_mutex);
  return state_->chunk_document.size();
}

std::size_t Collection::document_count() const {
  std::shared_lock lock(state_->index_mutex);
  return state_->documents.size();
}

// --- search ----------------------------------------------------------------------------------------

Result<std::vector<ScoredChunk>> Collection::search_bm25(std::string_view query, std::size_t k,
                                                         const SearchFilter& filter) const {
  const State& state = *state_;
  const std::vector<std::string> terms = Bm25Index::query_terms(query);
  if (terms.empty() || k == 0) return std::vector<ScoredChunk>();
  if (auto caught_up = catch_up_before_reading(*state_); !caught_up) return caught_up.error();
  std::shared_lock lock(state.index_mutex);
  std::vector<Bm25Hit> hits;
  if (filter.empty()) {
    hits = state.bm25.search(terms, k);
  } else {
    std::unordered_set<std::int64_t> allowed_documents;
    for (const auto& [id, entry] : state.documents) {
      if (!filter.path_prefix.empty() && !entry.path.starts_with(filter.path_prefix)) continue;
      if (!filter.formats.empty() &&
          std::find(filter.formats.begin(), filter.formats.end(), entry.format) == filter.formats.end()) {
        continue;
      }
      allowed_documents.insert(id);
    }
    if (allowed_documents.empty()) return std::vector<ScoredChunk>();
    const Bm25Index::DocumentPredicate allow = [&](std::int64_t document_id) {
      return allowed_documents.contains(document_id);
    };
    hits = state.bm25.search(terms, k, &allow);
  }
  std::vector<ScoredChunk> results;
  results.reserve(hits.size());
  for (const Bm25Hit& hit : hits) results.push_back({hit.chunk_id, hit.document_id, hit.score});
  return results;
}

Result<std::vector<ScoredChunk>> Collection::search_vector(std::span<const float> query, std::size_t k,
                                                           const SearchFilter& filter) const {
  const State& state = *state_;
  if (query.size() != state.info.dimension) {
    return make_error(ErrorCode::invalid_argument, "a query vector of dimension " + std::to_string(query.size()) +
                                                       " for a collection of dimension " +
                                                       std::to_string(state.info.dimension));
  }
  if (auto caught_up = catch_up_before_reading(*state_); !caught_up) return caught_up.error();
  std::shared_lock lock(state.index_mutex);
  auto scored = [&](const std::vector<Neighbour>& neighbours) {
    std::vector<ScoredChunk> results;
    results.reserve(neighbours.size());
    for (const auto& neighbour : neighbours) {
      const auto document = state.chunk_document.find(neighbour.key);
      KOTAE_ASSERT(document != state.chunk_document.end());  // index and map change together
      results.push_back({neighbour.key, document->second, neighbour.similarity});
    }
    return results;
  };
  if (filter.empty()) {
    auto found = state.index->search(query, k);
    if (!found) return found.error();
    return scored(*found);
  }

  std::unordered_set<std::int64_t> allowed_documents;
  std::size_t allowed_chunks = 0;
  for (const auto& [id, entry] : state.documents) {
    if (!filter.path_prefix.empty() && !entry.path.starts_with(filter.path_prefix)) continue;
    if (!filter.formats.empty() &&
        std::find(filter.formats.begin(), filter.formats.end(), entry.format) == filter.formats.end()) {
      continue;
    }
    allowed_documents.insert(id);
    allowed_chunks += entry.chunk_ids.size();
  }
  if (allowed_chunks == 0 || k == 0) return std::vector<ScoredChunk>();

  if (allowed_chunks > kExactSearchBelow && allowed_chunks * 50 > state.chunk_document.size()) {
    const VectorIndex::Predicate allow = [&](std::int64_t key) {
      const auto document = state.chunk_document.find(key);
      return document != state.chunk_document.end() && allowed_documents.contains(document->second);
    };
    auto found = state.index->search(query, k, &allow);
    if (!found) return found.error();
    // A graph walk may run out of allowed nodes before it finds k; then compare them all.
    if (found->size() >= std::min(k, allowed_chunks)) return scored(*found);
  }

  std::vector<Neighbour> neighbours;
  neighbours.reserve(allowed_chunks);
  std::vector<float> vector(state.info.dimension);
  for (const std::int64_t document_id : allowed_documents) {
    for (const std::int64_t chunk_id : state.documents.at(document_id).chunk_ids) {
      if (!state.index->get(chunk_id, vector)) continue;
      neighbours.push_back({chunk_id, cosine_similarity(query, vector)});
    }
  }
  const std::size_t keep = std::min(k, neighbours.size());
  std::partial_sort(neighbours.begin(), neighbours.begin() + static_cast<std::ptrdiff_t>(keep), neighbours.end(),
                    [](const Neighbour& a, const Neighbour& b) {
                      return a.similarity != b.similarity ? a.similarity > b.similarity : a.key < b.key;
                    });
  neighbours.resize(keep);
  return scored(neighbours);
}

Result<std::vector<ScoredChunk>> Collection::search_vector_exact(std::span<const float> query, std::size_t k) const {
  const State& state = *state_;
  if (query.size() != state.info.dimension) {
    return make_error(ErrorCode::invalid_argument, "a query vector of dimension " + std::to_string(query.size()) +
                                                       " for a collection of dimension " +
                                                       std::to_string(state.info.dimension));
  }
  std::shared_lock lock(state.index_mutex);
  auto found = state.index->search_exact(query, k);
  if (!found) return found.error();
  std::vector<ScoredChunk> results;
  for (const auto& neighbour : *found) {
    const auto document = state.chunk_document.find(neighbour.key);
    KOTAE_ASSERT(document != state.chunk_document.end());
    results.push_back({neighbour.key, document->second, neighbour.similarity});
  }
  return results;
}

// --- the vector index on disk, and checks -------------------------------------------------------------

Result<void> Collection::save_vector_index() {
  State& state = *state_;
  std::lock_guard writer_lock(state.writer_mutex);  // no commit between the snapshot and the trim
  if (auto caught_up = catch_up(state); !caught_up) return caught_up;
  std::int64_t position = 0;
  {
    std::shared_lock index_lock(state.index_mutex);
    position = state.applied_seq;
    if (position == state.saved_seq) return {};
    if (auto saved = state.index->save(state.index_path(), position); !saved) return saved;
  }
  state.saved_seq = position;
  Database& db = *state.writer;
  auto transaction = Transaction::begin(db);
  if (!transaction) return transaction.error();
  auto trim = db.prepare("DELETE FROM vector_log WHERE seq <= ?");
  if (!trim) return trim.error();
  trim->bind(1, position);
  if (auto run = trim->run(); !run) return run.error();
  if (auto written = write_meta(db, "vector_log_trimmed_through", std::to_string(position)); !written) return written;
  return transaction->commit();
}

Result<void> Collection::rebuild_vector_index() {
  State& state = *state_;
  {
    std::lock_guard writer_lock(state.writer_mutex);
    auto seq = last_log_seq(*state.writer);
    if (!seq) return seq.error();
    // Built beside the current one, so searches carry on until the swap.
    auto built = build_index(*state.writer, state.info.dimension);
    if (!built) return built.error();
    std::unique_lock index_lock(state.index_mutex);
    state.index = std::move(*built);
    state.applied_seq = *seq;
    state.saved_seq = -1;
  }
  return save_vector_index();
}

Result<ConsistencyReport> Collection::check() const {
  const State& state = *state_;
  std::lock_guard writer_lock(state.writer_mutex);
  Database& db = *state.writer;
  ConsistencyReport report;
  std::vector<std::string> problems;

  auto integrity = db.prepare("PRAGMA integrity_check");
  if (!integrity) return integrity.error();
  std::vector<std::string> integrity_messages;
  while (true) {
    auto row = integrity->step();
    if (!row) return row.error();
    if (!*row) break;
    integrity_messages.emplace_back(integrity->column_text(0));
  }
  report.integrity_ok = integrity_messages.size() == 1 && integrity_messages[0] == "ok";
  if (!report.integrity_ok) {
    std::string joined;
    for (std::size_t i = 0; i < integrity_messages.size() && i < 5; ++i) {
      joined += (i ? "; " : "") + integrity_messages[i];
    }
    problems.push_back("integrity_check: " + joined);
  }

  auto fts = db.execute("INSERT INTO chunks_fts(chunks_fts, rank) VALUES('integrity-check', 1)");
  report.fts_ok = fts.ok();
  if (!fts) problems.push_back("FTS index: " + fts.error().message);

  auto documents = db.query_int64("SELECT count(*) FROM documents");
  if (!documents) return documents.error();
  report.documents = static_cast<std::size_t>(documents->value_or(0));

  std::vector<std::int64_t> chunk_ids;
  {
    auto statement = db.prepare("SELECT id FROM chunks ORDER BY id");
    if (!statement) return statement.error();
    while (true) {
      auto row = statement->step();
      if (!row) return row.error();
      if (!*row) break;
      chunk_ids.push_back(statement->column_int64(0));
    }
  }
  std::vector<std::int64_t> keys;
  {
    std::shared_lock index_lock(state.index_mutex);
    keys = state.index->keys();
  }
  report.chunks = chunk_ids.size();
  report.vectors = keys.size();
  std::vector<std::int64_t> difference;
  std::set_difference(chunk_ids.begin(), chunk_ids.end(), keys.begin(), keys.end(), std::back_inserter(difference));
  report.chunks_without_vector = difference.size();
  difference.clear();
  std::set_difference(keys.begin(), keys.end(), chunk_ids.begin(), chunk_ids.end(), std::back_inserter(difference));
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
