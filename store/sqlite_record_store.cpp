#include "store/sqlite_record_store.h"

#include <bit>
#include <charconv>
#include <cstring>
#include <nlohmann/json.hpp>

#include "store/atomic_file.h"
#include "store/line_boxes.h"
#include "store/reader_pool.h"
#include "store/schema.h"
#include "store/sqlite_database.h"

namespace kotae::store {

// Embeddings are stored as float32 little-endian blobs, copied as they are in memory.
static_assert(std::endian::native == std::endian::little, "the embedding blob format assumes a little-endian host");

namespace {

constexpr const char* kDatabaseFile = "kotae.db";
constexpr const char* kManifestFile = "manifest.json";

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
    "id, document_id, ordinal, begin, end, page_first, page_last, heading_path, token_count, text, table_name, "
    "row_first, row_last, boxes";

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
  chunk.table = row.column_text(10);
  chunk.row_first = static_cast<std::uint32_t>(row.column_int64(11));
  chunk.row_last = static_cast<std::uint32_t>(row.column_int64(12));
  auto boxes = line_boxes_from_json(row.column_text(13));
  if (!boxes) return corrupt(database, "chunk " + std::to_string(chunk.id) + " has " + boxes.error().message);
  chunk.boxes = std::move(*boxes);
  return chunk;
}

// The chunk's embedding blob as floats, checked against the collection's dimension.
Result<std::span<const float>> embedding_of(std::span<const std::byte> blob, std::size_t dimension,
                                            std::int64_t chunk_id, const std::filesystem::path& database) {
  if (blob.size() != dimension * sizeof(float)) {
    return corrupt(database, "chunk " + std::to_string(chunk_id) + " has an embedding of " +
                                 std::to_string(blob.size()) + " bytes, expected " +
                                 std::to_string(dimension * sizeof(float)));
  }
  // SQLite's blobs are 8-byte aligned in its page cache copy; copy when one is not.
  if (reinterpret_cast<std::uintptr_t>(blob.data()) % alignof(float) != 0) return std::span<const float>();
  return std::span<const float>(reinterpret_cast<const float*>(blob.data()), dimension);
}

Result<std::optional<std::string>> read_meta(Database& db, std::string_view key) {
  auto statement = KOTAE_TRY_VALUE(db.prepare("SELECT value FROM meta WHERE key = ?"));
  statement.bind_text(1, key);
  if (!KOTAE_TRY_VALUE(statement.step())) return std::optional<std::string>();
  return std::optional<std::string>(std::string(statement.column_text(0)));
}

Result<void> write_meta(Database& db, std::string_view key, std::string_view value) {
  auto statement = KOTAE_TRY_VALUE(
      db.prepare("INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value"));
  statement.bind_text(1, key).bind_text(2, value);
  return statement.run();
}

// Reads CollectionInfo from the meta table; nullopt when the collection was never set up.
Result<std::optional<CollectionInfo>> read_info(Database& db) {
  auto embedder = KOTAE_TRY_VALUE(read_meta(db, "embedder_id"));
  if (!embedder) return std::optional<CollectionInfo>();
  CollectionInfo info;
  info.embedder_id = *embedder;
  for (auto [key, field] : {std::pair{"dimension", &info.dimension}, std::pair{"chunk_tokens", &info.chunk_tokens},
                            std::pair{"overlap_tokens", &info.overlap_tokens}}) {
    auto value = KOTAE_TRY_VALUE(read_meta(db, key));
    const auto number = value ? parse_int(*value) : std::nullopt;
    if (!number || *number < 0) return corrupt(db.path(), std::string("meta has no valid ") + key);
    *field = static_cast<std::size_t>(*number);
  }
  if (info.dimension == 0) return corrupt(db.path(), "meta has dimension 0");
  auto format = KOTAE_TRY_VALUE(read_meta(db, "format_version"));
  const auto version = format ? parse_int(*format) : std::nullopt;
  if (!version) return corrupt(db.path(), "meta has no valid format_version");
  if (*version > kFormatVersion) {
    return make_error(ErrorCode::unsupported, db.path().string() + " has format version " + std::to_string(*version) +
                                                  ", newer than this build of Kotae reads (" +
                                                  std::to_string(kFormatVersion) + ")");
  }
  return std::optional<CollectionInfo>(info);
}

Result<void> write_info(Database& db, const CollectionInfo& info) {
  auto transaction = KOTAE_TRY_VALUE(Transaction::begin(db));
  const std::pair<const char*, std::string> entries[] = {
      {"embedder_id", info.embedder_id},
      {"dimension", std::to_string(info.dimension)},
      {"chunk_tokens", std::to_string(info.chunk_tokens)},
      {"overlap_tokens", std::to_string(info.overlap_tokens)},
      {"format_version", std::to_string(kFormatVersion)},
      {"vector_log_trimmed_through", "0"},
  };
  for (const auto& [key, value] : entries) KOTAE_TRY(write_meta(db, key, value));
  return transaction.commit();
}

Result<std::int64_t> last_log_seq(Database& db) {
  auto seq = KOTAE_TRY_VALUE(db.query_int64("SELECT seq FROM sqlite_sequence WHERE name = 'vector_log'"));
  return seq.value_or(0);
}

// Steps through every row of `statement`, calling `visit` on each.
template <class Visit>
Result<void> each_row(Statement& statement, Visit&& visit) {
  while (KOTAE_TRY_VALUE(statement.step())) KOTAE_TRY(visit(statement));
  return {};
}

}  // namespace

struct SqliteRecordStore::State {
  std::filesystem::path dir;
  std::filesystem::path database;
  std::string location;
  CollectionInfo info;
  std::unique_ptr<Database> writer;  // the writer side: writes, the change log, index builds
  std::unique_ptr<ReaderPool> readers;
  std::int64_t data_version = -1;  // PRAGMA data_version at the last changed_elsewhere()
};

namespace {

class SqliteWriteTransaction final : public WriteTransaction {
 public:
  SqliteWriteTransaction(Database& db, Transaction transaction) : db_(db), transaction_(std::move(transaction)) {}

  Result<std::optional<std::int64_t>> remove_document(std::string_view path) override {
    // Cascades to the chunks; their triggers drop the FTS rows and log the vectors' removal.
    auto removed = KOTAE_TRY_VALUE(db_.prepare("DELETE FROM documents WHERE path = ? RETURNING id"));
    removed.bind_text(1, path);
    if (!KOTAE_TRY_VALUE(removed.step())) return std::optional<std::int64_t>();
    const std::int64_t id = removed.column_int64(0);
    KOTAE_TRY(removed.run());
    return std::optional<std::int64_t>(id);
  }

  Result<std::int64_t> insert_document(const DocumentRecord& document, std::size_t chunk_count) override {
    auto insert = KOTAE_TRY_VALUE(db_.prepare(
        "INSERT INTO documents(path, sha256, size, modified_ns, title, format, metadata_json, text, chunk_count) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"));
    insert.bind_text(1, document.path)
        .bind_text(2, document.sha256)
        .bind(3, document.size)
        .bind(4, document.modified_ns)
        .bind_text(5, document.title)
        .bind_text(6, document.format)
        .bind_text(7,
                   document.metadata_json.empty() ? std::string_view("{}") : std::string_view(document.metadata_json))
        .bind_text(8, document.text)
        .bind(9, static_cast<std::int64_t>(chunk_count));
    KOTAE_TRY(insert.run());
    return db_.last_insert_rowid();
  }

  Result<std::vector<std::int64_t>> insert_chunks(std::int64_t document_id, std::span<const ChunkRecord> chunks,
                                                  std::span<const std::string> heading_paths,
                                                  std::span<const float> embeddings,
                                                  std::span<const std::vector<std::byte>> sentences) override {
    auto insert = KOTAE_TRY_VALUE(db_.prepare(
        "INSERT INTO chunks(document_id, ordinal, begin, end, page_first, page_last, heading_path, token_count, text, "
        "embedding, sentences, table_name, row_first, row_last, boxes) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
        "?, "
        "?)"));
    const std::size_t dimension = chunks.empty() ? 0 : embeddings.size() / chunks.size();
    std::vector<std::int64_t> ids;
    ids.reserve(chunks.size());
    for (std::size_t i = 0; i < chunks.size(); ++i) {
      const ChunkRecord& chunk = chunks[i];
      insert.reset();
      insert.bind(1, document_id)
          .bind(2, static_cast<std::int64_t>(chunk.ordinal))
          .bind(3, static_cast<std::int64_t>(chunk.begin))
          .bind(4, static_cast<std::int64_t>(chunk.end))
          .bind(5, static_cast<std::int64_t>(chunk.page_first))
          .bind(6, static_cast<std::int64_t>(chunk.page_last))
          .bind_text(7, heading_paths[i])
          .bind(8, static_cast<std::int64_t>(chunk.token_count))
          .bind_text(9, chunk.text)
          .bind_blob(10, std::as_bytes(embeddings.subspan(i * dimension, dimension)))
          .bind_blob(11, sentences.empty() ? std::span<const std::byte>() : std::span<const std::byte>(sentences[i]))
          .bind_text(12, chunk.table)
          .bind(13, static_cast<std::int64_t>(chunk.row_first))
          .bind(14, static_cast<std::int64_t>(chunk.row_last))
          .bind_text(15, line_boxes_json(chunk.boxes));
      KOTAE_TRY(insert.run());
      ids.push_back(db_.last_insert_rowid());
    }
    return ids;
  }

  Result<bool> update_document_metadata(std::int64_t id, std::string_view metadata_json) override {
    auto update = KOTAE_TRY_VALUE(db_.prepare("UPDATE documents SET metadata_json = ? WHERE id = ? RETURNING id"));
    update.bind_text(1, metadata_json).bind(2, id);
    if (!KOTAE_TRY_VALUE(update.step())) return false;
    KOTAE_TRY(update.run());
    auto logged = KOTAE_TRY_VALUE(
        db_.prepare("INSERT INTO vector_log(chunk_id, op) SELECT id, 1 FROM chunks WHERE document_id = ? ORDER BY id"));
    logged.bind(1, id);
    KOTAE_TRY(logged.run());
    return true;
  }

  Result<std::int64_t> commit() override {
    const std::int64_t seq = KOTAE_TRY_VALUE(last_log_seq(db_));
    KOTAE_TRY(transaction_.commit());
    return seq;
  }

 private:
  Database& db_;
  Transaction transaction_;
};

}  // namespace

Result<std::unique_ptr<SqliteRecordStore>> SqliteRecordStore::open(const std::filesystem::path& dir,
                                                                   const CollectionInfo* create_with) {
  auto state = std::make_unique<State>();
  state->dir = dir;
  state->database = dir / kDatabaseFile;
  state->location = state->database.string();
  std::error_code error;
  const bool exists = std::filesystem::exists(state->database, error);
  if (!exists) {
    if (create_with == nullptr) return make_error(ErrorCode::not_found, "no collection at " + dir.string());
    if (create_with->embedder_id.empty() || create_with->dimension == 0) {
      return make_error(ErrorCode::invalid_argument,
                        "a new collection needs an embedder id and a dimension above 0 (" + dir.string() + ")");
    }
    std::filesystem::create_directories(dir, error);
    if (error) return make_error(ErrorCode::io, "cannot create " + dir.string() + ": " + error.message());
  }
  state->writer = KOTAE_TRY_VALUE(
      Database::open(state->database, exists ? Database::Mode::read_write : Database::Mode::read_write_create));
  Database& db = *state->writer;
  KOTAE_TRY(migrate_schema(db));

  auto stored = KOTAE_TRY_VALUE(read_info(db));
  if (!stored) {
    // A database without settings: new, or its creation was interrupted before they were written (a
    // writer killed then). To a reader the collection does not exist yet; the next writer finishes it.
    if (create_with == nullptr) {
      return make_error(ErrorCode::not_found,
                        "no collection at " + dir.string() + " (its creation did not finish; indexing makes it again)");
    }
    KOTAE_TRY(write_info(db, *create_with));
    KOTAE_TRY(write_file_atomically(dir / kManifestFile, manifest_json(*create_with)));
    state->info = *create_with;
  } else {
    state->info = *stored;
    if (create_with != nullptr &&
        (create_with->embedder_id != state->info.embedder_id || create_with->dimension != state->info.dimension)) {
      return make_error(ErrorCode::invalid_argument,
                        "collection " + dir.string() + " was built with embedder " + state->info.embedder_id +
                            " (dimension " + std::to_string(state->info.dimension) + "), not " +
                            create_with->embedder_id + " (dimension " + std::to_string(create_with->dimension) + ")");
    }
  }
  state->readers = std::make_unique<ReaderPool>(state->database);
  return std::unique_ptr<SqliteRecordStore>(new SqliteRecordStore(std::move(state)));
}

SqliteRecordStore::SqliteRecordStore(std::unique_ptr<State> state) : state_(std::move(state)) {}
SqliteRecordStore::~SqliteRecordStore() = default;

const CollectionInfo& SqliteRecordStore::info() const {
  return state_->info;
}
const std::string& SqliteRecordStore::location() const {
  return state_->location;
}

// --- records ---------------------------------------------------------------------------------------

Result<std::optional<DocumentRecord>> SqliteRecordStore::find_document(std::string_view path) {
  auto reader = KOTAE_TRY_VALUE(state_->readers->acquire());
  auto statement =
      KOTAE_TRY_VALUE(reader->prepare(std::string("SELECT ") + kDocumentColumns + " FROM documents WHERE path = ?"));
  statement.bind_text(1, path);
  if (!KOTAE_TRY_VALUE(statement.step())) return std::optional<DocumentRecord>();
  return std::optional<DocumentRecord>(read_document(statement));
}

Result<std::optional<DocumentRecord>> SqliteRecordStore::document(std::int64_t id) {
  auto reader = KOTAE_TRY_VALUE(state_->readers->acquire());
  auto statement = KOTAE_TRY_VALUE(
      reader->prepare(std::string("SELECT ") + kDocumentColumns + ", text FROM documents WHERE id = ?"));
  statement.bind(1, id);
  if (!KOTAE_TRY_VALUE(statement.step())) return std::optional<DocumentRecord>();
  DocumentRecord document = read_document(statement);
  document.text = statement.column_text(9);
  return std::optional<DocumentRecord>(std::move(document));
}

Result<std::vector<DocumentRecord>> SqliteRecordStore::documents() {
  auto reader = KOTAE_TRY_VALUE(state_->readers->acquire());
  auto statement =
      KOTAE_TRY_VALUE(reader->prepare(std::string("SELECT ") + kDocumentColumns + " FROM documents ORDER BY path"));
  std::vector<DocumentRecord> documents;
  KOTAE_TRY(each_row(statement, [&](const Statement& row) -> Result<void> {
    documents.push_back(read_document(row));
    return {};
  }));
  return documents;
}

namespace {

// Rows of `table` with the given ids, by id, read by one statement: a point query per id would also
// pay a read transaction per id.
template <class Record, class Read>
Result<std::unordered_map<std::int64_t, Record>> rows_by_id(ReaderPool& readers, const char* table, const char* columns,
                                                            std::span<const std::int64_t> ids, Read&& read) {
  auto reader = KOTAE_TRY_VALUE(readers.acquire());
  auto statement = KOTAE_TRY_VALUE(reader->prepare(std::string("SELECT ") + columns + " FROM " + table +
                                                   " WHERE id IN (" + placeholders(ids.size()) + ")"));
  for (std::size_t i = 0; i < ids.size(); ++i) statement.bind(static_cast<int>(i + 1), ids[i]);
  std::unordered_map<std::int64_t, Record> found;
  KOTAE_TRY(each_row(statement, [&](const Statement& row) -> Result<void> {
    Record record = KOTAE_TRY_VALUE(read(row));
    const std::int64_t id = record.id;
    found.emplace(id, std::move(record));
    return {};
  }));
  return found;
}

}  // namespace

Result<std::unordered_map<std::int64_t, DocumentRecord>> SqliteRecordStore::documents_by_id(
    std::span<const std::int64_t> ids) {
  return rows_by_id<DocumentRecord>(*state_->readers, "documents", kDocumentColumns, ids,
                                    [](const Statement& row) -> Result<DocumentRecord> { return read_document(row); });
}

Result<std::unordered_map<std::int64_t, ChunkRecord>> SqliteRecordStore::chunks_by_id(
    std::span<const std::int64_t> ids) {
  return rows_by_id<ChunkRecord>(*state_->readers, "chunks", kChunkColumns, ids,
                                 [&](const Statement& row) { return read_chunk(row, state_->database); });
}

Result<std::vector<ChunkRecord>> SqliteRecordStore::document_chunks(std::int64_t document_id) {
  auto reader = KOTAE_TRY_VALUE(state_->readers->acquire());
  auto statement = KOTAE_TRY_VALUE(
      reader->prepare(std::string("SELECT ") + kChunkColumns + " FROM chunks WHERE document_id = ? ORDER BY ordinal"));
  statement.bind(1, document_id);
  std::vector<ChunkRecord> chunks;
  KOTAE_TRY(each_row(statement, [&](const Statement& row) -> Result<void> {
    chunks.push_back(KOTAE_TRY_VALUE(read_chunk(row, state_->database)));
    return {};
  }));
  return chunks;
}

Result<std::vector<float>> SqliteRecordStore::embeddings(std::span<const std::int64_t> chunk_ids) {
  auto reader = KOTAE_TRY_VALUE(state_->readers->acquire());
  auto statement = KOTAE_TRY_VALUE(reader->prepare("SELECT embedding FROM chunks WHERE id = ?"));
  const std::size_t dimension = state_->info.dimension;
  std::vector<float> values(chunk_ids.size() * dimension);
  for (std::size_t i = 0; i < chunk_ids.size(); ++i) {
    statement.reset();
    statement.bind(1, chunk_ids[i]);
    if (!KOTAE_TRY_VALUE(statement.step()))
      return make_error(ErrorCode::not_found, "no chunk " + std::to_string(chunk_ids[i]));
    const auto blob = statement.column_blob(0);
    KOTAE_TRY(embedding_of(blob, dimension, chunk_ids[i], state_->database));
    std::memcpy(values.data() + i * dimension, blob.data(), blob.size());
  }
  return values;
}

Result<std::vector<std::vector<SentenceVector>>> SqliteRecordStore::chunk_sentences(
    std::span<const std::int64_t> chunk_ids) {
  auto reader = KOTAE_TRY_VALUE(state_->readers->acquire());
  auto statement = KOTAE_TRY_VALUE(reader->prepare("SELECT sentences FROM chunks WHERE id = ?"));
  std::vector<std::vector<SentenceVector>> out;
  out.reserve(chunk_ids.size());
  for (const std::int64_t id : chunk_ids) {
    statement.reset();
    statement.bind(1, id);
    if (!KOTAE_TRY_VALUE(statement.step())) return make_error(ErrorCode::not_found, "no chunk " + std::to_string(id));
    auto sentences = decode_sentence_vectors(statement.column_blob(0), state_->info.dimension);
    if (!sentences) return corrupt(state_->database, "chunk " + std::to_string(id) + ": " + sentences.error().message);
    out.push_back(std::move(*sentences));
  }
  return out;
}

// --- the change log and index feeds ---------------------------------------------------------------

Result<bool> SqliteRecordStore::changed_elsewhere() {
  // data_version changes only when another connection commits: this process's own writes go
  // through the writer connection, and readers never write.
  const std::int64_t version = KOTAE_TRY_VALUE(state_->writer->query_int64("PRAGMA data_version")).value_or(0);
  if (version == state_->data_version) return false;
  state_->data_version = version;
  return true;
}

Result<std::int64_t> SqliteRecordStore::last_change() {
  return last_log_seq(*state_->writer);
}

Result<std::int64_t> SqliteRecordStore::log_trimmed_through() {
  auto text = KOTAE_TRY_VALUE(read_meta(*state_->writer, "vector_log_trimmed_through"));
  return (text ? parse_int(*text) : std::nullopt).value_or(0);
}

Result<std::optional<std::vector<std::int64_t>>> SqliteRecordStore::chunks_changed(std::int64_t after,
                                                                                   std::int64_t through) {
  if (KOTAE_TRY_VALUE(log_trimmed_through()) > after) return std::optional<std::vector<std::int64_t>>();
  auto logged =
      KOTAE_TRY_VALUE(state_->writer->prepare("SELECT DISTINCT chunk_id FROM vector_log WHERE seq > ? AND seq <= ?"));
  logged.bind(1, after).bind(2, through);
  std::vector<std::int64_t> touched;
  KOTAE_TRY(each_row(logged, [&](const Statement& row) -> Result<void> {
    touched.push_back(row.column_int64(0));
    return {};
  }));
  return std::optional<std::vector<std::int64_t>>(std::move(touched));
}

Result<void> SqliteRecordStore::snapshot_saved(std::int64_t position) {
  Database& db = *state_->writer;
  auto transaction = KOTAE_TRY_VALUE(Transaction::begin(db));
  auto trim = KOTAE_TRY_VALUE(db.prepare("DELETE FROM vector_log WHERE seq <= ?"));
  trim.bind(1, position);
  KOTAE_TRY(trim.run());
  KOTAE_TRY(write_meta(db, "vector_log_trimmed_through", std::to_string(position)));
  return transaction.commit();
}

Result<std::vector<std::int64_t>> SqliteRecordStore::chunk_ids() {
  auto statement = KOTAE_TRY_VALUE(state_->writer->prepare("SELECT id FROM chunks ORDER BY id"));
  std::vector<std::int64_t> ids;
  KOTAE_TRY(each_row(statement, [&](const Statement& row) -> Result<void> {
    ids.push_back(row.column_int64(0));
    return {};
  }));
  return ids;
}

Result<void> SqliteRecordStore::scan_documents(const std::function<void(IndexedDocument)>& visit) {
  auto statement = KOTAE_TRY_VALUE(state_->writer->prepare("SELECT id, path, format, metadata_json FROM documents"));
  return each_row(statement, [&](const Statement& row) -> Result<void> {
    visit(IndexedDocument{row.column_int64(0), std::string(row.column_text(1)), std::string(row.column_text(2)),
                          std::string(row.column_text(3))});
    return {};
  });
}

namespace {

constexpr const char* kIndexedChunkColumns = "c.id, c.document_id, c.text, c.heading_path, d.path, d.format";

Result<void> visit_indexed_chunk(const Statement& row, std::size_t dimension, bool with_embedding,
                                 const std::filesystem::path& database, std::vector<float>& aligned,
                                 const ChunkVisitor& visit) {
  IndexedChunk chunk{row.column_int64(0),
                     row.column_int64(1),
                     row.column_text(2),
                     row.column_text(3),
                     row.column_text(4),
                     row.column_text(5),
                     {}};
  if (with_embedding) {
    const auto blob = row.column_blob(6);
    chunk.embedding = KOTAE_TRY_VALUE(embedding_of(blob, dimension, chunk.id, database));
    if (chunk.embedding.empty()) {  // unaligned: copied
      aligned.resize(dimension);
      std::memcpy(aligned.data(), blob.data(), blob.size());
      chunk.embedding = aligned;
    }
  }
  return visit(chunk);
}

}  // namespace

Result<void> SqliteRecordStore::scan_chunks(bool with_embeddings, const ChunkVisitor& visit) {
  auto statement = KOTAE_TRY_VALUE(state_->writer->prepare(
      std::string("SELECT ") + kIndexedChunkColumns + (with_embeddings ? ", c.embedding" : "") +
      " FROM chunks c JOIN documents d ON d.id = c.document_id ORDER BY c.document_id, c.ordinal"));
  std::vector<float> aligned;
  return each_row(statement, [&](const Statement& row) {
    return visit_indexed_chunk(row, state_->info.dimension, with_embeddings, state_->database, aligned, visit);
  });
}

Result<void> SqliteRecordStore::read_chunks(std::span<const std::int64_t> ids, const ChunkVisitor& visit) {
  auto statement = KOTAE_TRY_VALUE(
      state_->writer->prepare(std::string("SELECT ") + kIndexedChunkColumns +
                              ", c.embedding FROM chunks c JOIN documents d ON d.id = c.document_id WHERE c.id = ?"));
  std::vector<float> aligned;
  for (const std::int64_t id : ids) {
    statement.reset();
    statement.bind(1, id);
    if (!KOTAE_TRY_VALUE(statement.step())) continue;  // removed since
    KOTAE_TRY(visit_indexed_chunk(statement, state_->info.dimension, true, state_->database, aligned, visit));
  }
  return {};
}

// --- writes and checks ----------------------------------------------------------------------------

Result<std::unique_ptr<WriteTransaction>> SqliteRecordStore::begin_write() {
  auto transaction = KOTAE_TRY_VALUE(Transaction::begin(*state_->writer));
  return std::unique_ptr<WriteTransaction>(new SqliteWriteTransaction(*state_->writer, std::move(transaction)));
}

Result<RecordCheck> SqliteRecordStore::check_records() {
  Database& db = *state_->writer;
  RecordCheck check;
  auto integrity = KOTAE_TRY_VALUE(db.prepare("PRAGMA integrity_check"));
  std::vector<std::string> messages;
  KOTAE_TRY(each_row(integrity, [&](const Statement& row) -> Result<void> {
    messages.emplace_back(row.column_text(0));
    return {};
  }));
  check.integrity_ok = messages.size() == 1 && messages[0] == "ok";
  if (!check.integrity_ok) {
    std::string joined;
    for (std::size_t i = 0; i < messages.size() && i < 5; ++i) joined += (i ? "; " : "") + messages[i];
    check.problems.push_back("integrity_check: " + joined);
  }
  auto fts = db.execute("INSERT INTO chunks_fts(chunks_fts, rank) VALUES('integrity-check', 1)");
  check.fts_ok = fts.ok();
  if (!fts) check.problems.push_back("FTS index: " + fts.error().message);
  check.documents =
      static_cast<std::size_t>(KOTAE_TRY_VALUE(db.query_int64("SELECT count(*) FROM documents")).value_or(0));
  check.chunk_ids = KOTAE_TRY_VALUE(chunk_ids());
  return check;
}

}  // namespace kotae::store
