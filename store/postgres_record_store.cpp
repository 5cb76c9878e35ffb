#include "store/postgres_record_store.h"

#include <cstring>
#include <nlohmann/json.hpp>

#include "store/line_boxes.h"
#include "store/postgres_schema.h"
#include "store/schema.h"

namespace kotae::store {

namespace {

// The collections' records (version 1). Every integer is bigint, so binary results read one way.
// `change_log` is the collection's sequence of chunk additions (op 1) and removals (op 0); its seq is
// global but grows in commit order within a collection (writers take the collection's advisory lock).
constexpr const char* kRecordsVersion1 = R"sql(
CREATE TABLE IF NOT EXISTS collections(
  id bigserial PRIMARY KEY,
  tenant text NOT NULL,
  name text NOT NULL,
  embedder_id text NOT NULL,
  dimension bigint NOT NULL,
  chunk_tokens bigint NOT NULL,
  overlap_tokens bigint NOT NULL,
  format_version bigint NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (tenant, name));
CREATE TABLE IF NOT EXISTS documents(
  id bigserial PRIMARY KEY,
  collection_id bigint NOT NULL REFERENCES collections(id) ON DELETE CASCADE,
  path text NOT NULL,
  sha256 text NOT NULL,
  size bigint NOT NULL,
  modified_ns bigint NOT NULL,
  title text NOT NULL,
  format text NOT NULL,
  metadata_json text NOT NULL,
  text text NOT NULL,
  chunk_count bigint NOT NULL,
  stored_bytes bigint NOT NULL DEFAULT 0,  -- its text and its chunks' rows: what quotas count
  UNIQUE (collection_id, path));
CREATE TABLE IF NOT EXISTS chunks(
  id bigserial PRIMARY KEY,
  collection_id bigint NOT NULL REFERENCES collections(id) ON DELETE CASCADE,
  document_id bigint NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
  ordinal bigint NOT NULL,
  begin_byte bigint NOT NULL,
  end_byte bigint NOT NULL,
  page_first bigint NOT NULL,
  page_last bigint NOT NULL,
  heading_path text NOT NULL,
  token_count bigint NOT NULL,
  text text NOT NULL,
  embedding bytea NOT NULL,
  sentences bytea NOT NULL);
CREATE INDEX IF NOT EXISTS chunks_by_document ON chunks(document_id, ordinal);
CREATE INDEX IF NOT EXISTS chunks_by_collection ON chunks(collection_id, id);
CREATE TABLE IF NOT EXISTS change_log(
  seq bigserial PRIMARY KEY,
  collection_id bigint NOT NULL REFERENCES collections(id) ON DELETE CASCADE,
  chunk_id bigint NOT NULL,
  op bigint NOT NULL);
CREATE INDEX IF NOT EXISTS change_log_by_collection ON change_log(collection_id, seq);
)sql";
// Version 2: the table (or sheet) a chunk holds rows of, and which rows (text::Chunk).
constexpr const char* kRecordsVersion2 = R"sql(
ALTER TABLE chunks ADD COLUMN table_name text NOT NULL DEFAULT '',
  ADD COLUMN row_first bigint NOT NULL DEFAULT 0,
  ADD COLUMN row_last bigint NOT NULL DEFAULT 0;
)sql";
// Version 3: the OCR'd lines a chunk touches, with their boxes (store/line_boxes.h).
constexpr const char* kRecordsVersion3 = "ALTER TABLE chunks ADD COLUMN boxes text NOT NULL DEFAULT '[]';";
constexpr const char* kRecordsSteps[] = {kRecordsVersion1, kRecordsVersion2, kRecordsVersion3};

// pg_advisory_lock's two-key form: this class, and 0 (the schema) or a collection id.
constexpr std::int64_t kLockClass = 0x4b6f7461;  // "Kota"
constexpr std::size_t kChunksPerInsert = 500;    // rows per INSERT (17 parameters each)
constexpr std::size_t kScanBatch = 4096;         // rows per FETCH while scanning

// A bigint[] literal: '{1,2,3}'.
std::string id_array(std::span<const std::int64_t> ids) {
  std::string text = "{";
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (i) text += ',';
    text += std::to_string(ids[i]);
  }
  return text + "}";
}

constexpr const char* kDocumentColumns =
    "id, path, sha256, size, modified_ns, title, format, metadata_json, chunk_count";

DocumentRecord read_document(const PgResult& rows, std::size_t row) {
  DocumentRecord document;
  document.id = rows.int64(row, 0);
  document.path = rows.text(row, 1);
  document.sha256 = rows.text(row, 2);
  document.size = rows.int64(row, 3);
  document.modified_ns = rows.int64(row, 4);
  document.title = rows.text(row, 5);
  document.format = rows.text(row, 6);
  document.metadata_json = rows.text(row, 7);
  document.chunk_count = rows.int64(row, 8);
  return document;
}

constexpr const char* kChunkColumns =
    "id, document_id, ordinal, begin_byte, end_byte, page_first, page_last, heading_path, token_count, text, "
    "table_name, row_first, row_last, boxes";

Result<ChunkRecord> read_chunk(const PgResult& rows, std::size_t row, const std::string& location) {
  ChunkRecord chunk;
  chunk.id = rows.int64(row, 0);
  chunk.document_id = rows.int64(row, 1);
  chunk.ordinal = static_cast<std::uint32_t>(rows.int64(row, 2));
  chunk.begin = static_cast<std::size_t>(rows.int64(row, 3));
  chunk.end = static_cast<std::size_t>(rows.int64(row, 4));
  chunk.page_first = static_cast<std::uint32_t>(rows.int64(row, 5));
  chunk.page_last = static_cast<std::uint32_t>(rows.int64(row, 6));
  auto headings = nlohmann::json::parse(rows.text(row, 7), nullptr, /*allow_exceptions=*/false);
  if (!headings.is_array()) {
    return make_error(ErrorCode::corrupt, location + ": chunk " + std::to_string(chunk.id) +
                                              " has a heading path that is not a JSON array");
  }
  for (const auto& heading : headings) {
    if (heading.is_string()) chunk.heading_path.push_back(heading.get<std::string>());
  }
  chunk.token_count = static_cast<std::size_t>(rows.int64(row, 8));
  chunk.text = rows.text(row, 9);
  chunk.table = rows.text(row, 10);
  chunk.row_first = static_cast<std::uint32_t>(rows.int64(row, 11));
  chunk.row_last = static_cast<std::uint32_t>(rows.int64(row, 12));
  auto boxes = line_boxes_from_json(rows.text(row, 13));
  if (!boxes) {
    return make_error(ErrorCode::corrupt,
                      location + ": chunk " + std::to_string(chunk.id) + " has " + boxes.error().message);
  }
  chunk.boxes = std::move(*boxes);
  return chunk;
}

Result<void> check_embedding(std::span<const std::byte> bytes, std::size_t dimension, std::int64_t chunk_id,
                             const std::string& location) {
  if (bytes.size() == dimension * sizeof(float)) return {};
  return make_error(ErrorCode::corrupt, location + ": chunk " + std::to_string(chunk_id) + " has an embedding of " +
                                            std::to_string(bytes.size()) + " bytes, expected " +
                                            std::to_string(dimension * sizeof(float)));
}

}  // namespace

const SchemaSteps& postgres_records_schema() {
  static const SchemaSteps schema{"records", kRecordsSteps};
  return schema;
}

struct PostgresRecordStore::State {
  std::shared_ptr<PgPool> pool;
  std::int64_t collection_id = 0;
  std::string tenant, name;  // as opened: a rename elsewhere reads as deleted here (last_change)
  CollectionInfo info;
  std::string location;
};

namespace {

class PostgresWriteTransaction final : public WriteTransaction {
 public:
  PostgresWriteTransaction(PgPool::Lease lease, PgTransaction transaction, std::int64_t collection_id)
      : lease_(std::move(lease)), transaction_(std::move(transaction)), collection_id_(collection_id) {}

  Result<std::optional<std::int64_t>> remove_document(std::string_view path) override {
    auto found = KOTAE_TRY_VALUE(lease_->query("SELECT id FROM documents WHERE collection_id = $1 AND path = $2",
                                               PgParams().add(collection_id_).add(path)));
    if (found.rows() == 0) return std::optional<std::int64_t>();
    const std::int64_t id = found.int64(0, 0);
    KOTAE_TRY(
        lease_->query("INSERT INTO change_log(collection_id, chunk_id, op) "
                      "SELECT $1, id, 0 FROM chunks WHERE document_id = $2 ORDER BY id",
                      PgParams().add(collection_id_).add(id)));
    KOTAE_TRY(lease_->query("DELETE FROM documents WHERE id = $1", PgParams().add(id)));  // cascades to chunks
    return std::optional<std::int64_t>(id);
  }

  Result<std::int64_t> insert_document(const DocumentRecord& document, std::size_t chunk_count) override {
    auto inserted = KOTAE_TRY_VALUE(lease_->query(
        "INSERT INTO documents(collection_id, path, sha256, size, modified_ns, title, format, metadata_json, text, "
        "chunk_count, stored_bytes) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, octet_length($9)) RETURNING id",
        PgParams()
            .add(collection_id_)
            .add(document.path)
            .add(document.sha256)
            .add(document.size)
            .add(document.modified_ns)
            .add(document.title)
            .add(document.format)
            .add(document.metadata_json.empty() ? std::string_view("{}") : std::string_view(document.metadata_json))
            .add(document.text)
            .add(static_cast<std::int64_t>(chunk_count))));
    return inserted.int64(0, 0);
  }

  Result<std::vector<std::int64_t>> insert_chunks(std::int64_t document_id, std::span<const ChunkRecord> chunks,
                                                  std::span<const std::string> heading_paths,
                                                  std::span<const float> embeddings,
                                                  std::span<const std::vector<std::byte>> sentences) override {
    std::vector<std::int64_t> ids;
    if (chunks.empty()) return ids;
    // Ids first (one round trip), then the rows in a few multi-row INSERTs.
    auto allocated = KOTAE_TRY_VALUE(lease_->query("SELECT nextval('chunks_id_seq') FROM generate_series(1, $1)",
                                                   PgParams().add(static_cast<std::int64_t>(chunks.size()))));
    for (std::size_t i = 0; i < allocated.rows(); ++i) ids.push_back(allocated.int64(i, 0));
    const std::size_t dimension = embeddings.size() / chunks.size();
    for (std::size_t first = 0; first < chunks.size(); first += kChunksPerInsert) {
      const std::size_t last = std::min(chunks.size(), first + kChunksPerInsert);
      std::string sql =
          "INSERT INTO chunks(id, collection_id, document_id, ordinal, begin_byte, end_byte, page_first, page_last, "
          "heading_path, token_count, text, embedding, sentences, table_name, row_first, row_last, boxes) VALUES ";
      PgParams params;
      for (std::size_t i = first; i < last; ++i) {
        const std::size_t p = (i - first) * 17;
        sql += i == first ? "(" : ", (";
        for (std::size_t c = 1; c <= 17; ++c) sql += (c > 1 ? ", $" : "$") + std::to_string(p + c);
        sql += ")";
        const ChunkRecord& chunk = chunks[i];
        params.add(ids[i])
            .add(collection_id_)
            .add(document_id)
            .add(static_cast<std::int64_t>(chunk.ordinal))
            .add(static_cast<std::int64_t>(chunk.begin))
            .add(static_cast<std::int64_t>(chunk.end))
            .add(static_cast<std::int64_t>(chunk.page_first))
            .add(static_cast<std::int64_t>(chunk.page_last))
            .add(heading_paths[i])
            .add(static_cast<std::int64_t>(chunk.token_count))
            .add(chunk.text)
            .add_bytes(std::as_bytes(embeddings.subspan(i * dimension, dimension)))
            .add_bytes(sentences.empty() ? std::span<const std::byte>() : std::span<const std::byte>(sentences[i]))
            .add(chunk.table)
            .add(static_cast<std::int64_t>(chunk.row_first))
            .add(static_cast<std::int64_t>(chunk.row_last))
            .add(line_boxes_json(chunk.boxes));
      }
      KOTAE_TRY(lease_->query(sql, params));
    }
    KOTAE_TRY(lease_->query("INSERT INTO change_log(collection_id, chunk_id, op) SELECT $1, unnest($2::bigint[]), 1",
                            PgParams().add(collection_id_).add(id_array(ids))));
    std::int64_t bytes = static_cast<std::int64_t>(embeddings.size_bytes());
    for (std::size_t i = 0; i < chunks.size(); ++i) {
      bytes += static_cast<std::int64_t>(chunks[i].text.size() + heading_paths[i].size() +
                                         (sentences.empty() ? 0 : sentences[i].size()));
    }
    KOTAE_TRY(lease_->query("UPDATE documents SET stored_bytes = stored_bytes + $2 WHERE id = $1",
                            PgParams().add(document_id).add(bytes)));
    return ids;
  }

  Result<bool> update_document_metadata(std::int64_t id, std::string_view metadata_json) override {
    auto updated = KOTAE_TRY_VALUE(
        lease_->query("UPDATE documents SET metadata_json = $3 WHERE id = $2 AND collection_id = $1 RETURNING id",
                      PgParams().add(collection_id_).add(id).add(metadata_json)));
    if (updated.rows() == 0) return false;
    KOTAE_TRY(
        lease_->query("INSERT INTO change_log(collection_id, chunk_id, op) "
                      "SELECT $1, id, 1 FROM chunks WHERE document_id = $2 ORDER BY id",
                      PgParams().add(collection_id_).add(id)));
    return true;
  }

  Result<std::int64_t> commit() override {
    auto last =
        KOTAE_TRY_VALUE(lease_->query("SELECT coalesce(max(seq), 0)::bigint FROM change_log WHERE collection_id = $1",
                                      PgParams().add(collection_id_)));
    const std::int64_t position = last.int64(0, 0);
    // Delivered to every listener when (and only if) the transaction commits.
    KOTAE_TRY(lease_->query("SELECT pg_notify($1, $2)",
                            PgParams()
                                .add(std::string_view(kChangeChannel))
                                .add(std::to_string(collection_id_) + " " + std::to_string(position))));
    KOTAE_TRY(transaction_.commit());
    return position;
  }

 private:
  PgPool::Lease lease_;  // declared first: destroyed after the transaction that uses it
  PgTransaction transaction_;
  std::int64_t collection_id_;
};

}  // namespace

Result<std::unique_ptr<PostgresRecordStore>> PostgresRecordStore::open(const std::shared_ptr<PgPool>& pool,
                                                                       const std::string& tenant,
                                                                       const std::string& name,
                                                                       const CollectionInfo* create_with) {
  auto state = std::make_unique<State>();
  state->pool = pool;
  state->tenant = tenant;
  state->name = name;
  auto lease = KOTAE_TRY_VALUE(pool->acquire());
  state->location = "collection " + name + (tenant.empty() ? "" : " of tenant " + tenant) + " in PostgreSQL (" +
                    lease->server() + ")";
  if (create_with != nullptr) {
    if (create_with->embedder_id.empty() || create_with->dimension == 0) {
      return make_error(ErrorCode::invalid_argument,
                        "a new collection needs an embedder id and a dimension above 0 (" + state->location + ")");
    }
    KOTAE_TRY(lease->query(
        "INSERT INTO collections(tenant, name, embedder_id, dimension, chunk_tokens, overlap_tokens, format_version) "
        "VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (tenant, name) DO NOTHING",
        PgParams()
            .add(tenant)
            .add(name)
            .add(create_with->embedder_id)
            .add(static_cast<std::int64_t>(create_with->dimension))
            .add(static_cast<std::int64_t>(create_with->chunk_tokens))
            .add(static_cast<std::int64_t>(create_with->overlap_tokens))
            .add(kFormatVersion)));
  }
  auto found = KOTAE_TRY_VALUE(
      lease->query("SELECT id, embedder_id, dimension, chunk_tokens, overlap_tokens, format_version FROM collections "
                   "WHERE tenant = $1 AND name = $2",
                   PgParams().add(tenant).add(name)));
  if (found.rows() == 0) return make_error(ErrorCode::not_found, "no " + state->location);
  state->collection_id = found.int64(0, 0);
  state->info.embedder_id = found.text(0, 1);
  state->info.dimension = static_cast<std::size_t>(found.int64(0, 2));
  state->info.chunk_tokens = static_cast<std::size_t>(found.int64(0, 3));
  state->info.overlap_tokens = static_cast<std::size_t>(found.int64(0, 4));
  if (found.int64(0, 5) > kFormatVersion) {
    return make_error(ErrorCode::unsupported, state->location + " has format version " +
                                                  std::to_string(found.int64(0, 5)) +
                                                  ", newer than this build of Kotae reads");
  }
  if (create_with != nullptr &&
      (create_with->embedder_id != state->info.embedder_id || create_with->dimension != state->info.dimension)) {
    return make_error(ErrorCode::invalid_argument,
                      state->location + " was built with embedder " + state->info.embedder_id + " (dimension " +
                          std::to_string(state->info.dimension) + "), not " + create_with->embedder_id +
                          " (dimension " + std::to_string(create_with->dimension) + ")");
  }
  return std::unique_ptr<PostgresRecordStore>(new PostgresRecordStore(std::move(state)));
}

PostgresRecordStore::PostgresRecordStore(std::unique_ptr<State> state) : state_(std::move(state)) {}
PostgresRecordStore::~PostgresRecordStore() = default;

std::int64_t PostgresRecordStore::collection_id() const {
  return state_->collection_id;
}
const CollectionInfo& PostgresRecordStore::info() const {
  return state_->info;
}
const std::string& PostgresRecordStore::location() const {
  return state_->location;
}

// --- records ---------------------------------------------------------------------------------------

Result<std::optional<DocumentRecord>> PostgresRecordStore::find_document(std::string_view path) {
  auto lease = KOTAE_TRY_VALUE(state_->pool->acquire());
  auto rows = KOTAE_TRY_VALUE(lease->prepared(
      std::string("SELECT ") + kDocumentColumns + " FROM documents WHERE collection_id = $1 AND path = $2",
      PgParams().add(state_->collection_id).add(path)));
  if (rows.rows() == 0) return std::optional<DocumentRecord>();
  return std::optional<DocumentRecord>(read_document(rows, 0));
}

Result<std::optional<DocumentRecord>> PostgresRecordStore::document(std::int64_t id) {
  auto lease = KOTAE_TRY_VALUE(state_->pool->acquire());
  auto rows = KOTAE_TRY_VALUE(lease->prepared(
      std::string("SELECT ") + kDocumentColumns + ", text FROM documents WHERE collection_id = $1 AND id = $2",
      PgParams().add(state_->collection_id).add(id)));
  if (rows.rows() == 0) return std::optional<DocumentRecord>();
  DocumentRecord document = read_document(rows, 0);
  document.text = rows.text(0, 9);
  return std::optional<DocumentRecord>(std::move(document));
}

Result<std::vector<DocumentRecord>> PostgresRecordStore::documents() {
  auto lease = KOTAE_TRY_VALUE(state_->pool->acquire());
  // COLLATE "C": ordered by bytes, as SQLite orders text.
  auto rows = KOTAE_TRY_VALUE(lease->query(std::string("SELECT ") + kDocumentColumns +
                                               " FROM documents WHERE collection_id = $1 ORDER BY path COLLATE \"C\"",
                                           PgParams().add(state_->collection_id)));
  std::vector<DocumentRecord> documents;
  for (std::size_t i = 0; i < rows.rows(); ++i) documents.push_back(read_document(rows, i));
  return documents;
}

Result<std::unordered_map<std::int64_t, DocumentRecord>> PostgresRecordStore::documents_by_id(
    std::span<const std::int64_t> ids) {
  auto lease = KOTAE_TRY_VALUE(state_->pool->acquire());
  auto rows = KOTAE_TRY_VALUE(lease->prepared(
      std::string("SELECT ") + kDocumentColumns + " FROM documents WHERE collection_id = $1 AND id = ANY($2::bigint[])",
      PgParams().add(state_->collection_id).add(id_array(ids))));
  std::unordered_map<std::int64_t, DocumentRecord> found;
  for (std::size_t i = 0; i < rows.rows(); ++i) {
    DocumentRecord document = read_document(rows, i);
    found.emplace(document.id, std::move(document));
  }
  return found;
}

Result<std::unordered_map<std::int64_t, ChunkRecord>> PostgresRecordStore::chunks_by_id(
    std::span<const std::int64_t> ids) {
  auto lease = KOTAE_TRY_VALUE(state_->pool->acquire());
  auto rows = KOTAE_TRY_VALUE(lease->prepared(
      std::string("SELECT ") + kChunkColumns + " FROM chunks WHERE collection_id = $1 AND id = ANY($2::bigint[])",
      PgParams().add(state_->collection_id).add(id_array(ids))));
  std::unordered_map<std::int64_t, ChunkRecord> found;
  for (std::size_t i = 0; i < rows.rows(); ++i) {
    ChunkRecord chunk = KOTAE_TRY_VALUE(read_chunk(rows, i, state_->location));
    found.emplace(chunk.id, std::move(chunk));
  }
  return found;
}

Result<std::vector<ChunkRecord>> PostgresRecordStore::document_chunks(std::int64_t document_id) {
  auto lease = KOTAE_TRY_VALUE(state_->pool->acquire());
  auto rows =
      KOTAE_TRY_VALUE(lease->prepared(std::string("SELECT ") + kChunkColumns +
                                          " FROM chunks WHERE collection_id = $1 AND document_id = $2 ORDER BY ordinal",
                                      PgParams().add(state_->collection_id).add(document_id)));
  std::vector<ChunkRecord> chunks;
  for (std::size_t i = 0; i < rows.rows(); ++i)
    chunks.push_back(KOTAE_TRY_VALUE(read_chunk(rows, i, state_->location)));
  return chunks;
}

Result<std::vector<float>> PostgresRecordStore::embeddings(std::span<const std::int64_t> chunk_ids) {
  auto lease = KOTAE_TRY_VALUE(state_->pool->acquire());
  auto rows = KOTAE_TRY_VALUE(
      lease->prepared("SELECT id, embedding FROM chunks WHERE collection_id = $1 AND id = ANY($2::bigint[])",
                      PgParams().add(state_->collection_id).add(id_array(chunk_ids))));
  std::unordered_map<std::int64_t, std::size_t> row_of;
  for (std::size_t i = 0; i < rows.rows(); ++i) row_of[rows.int64(i, 0)] = i;
  const std::size_t dimension = state_->info.dimension;
  std::vector<float> values(chunk_ids.size() * dimension);
  for (std::size_t i = 0; i < chunk_ids.size(); ++i) {
    const auto row = row_of.find(chunk_ids[i]);
    if (row == row_of.end()) return make_error(ErrorCode::not_found, "no chunk " + std::to_string(chunk_ids[i]));
    const auto bytes = rows.bytes(row->second, 1);
    KOTAE_TRY(check_embedding(bytes, dimension, chunk_ids[i], state_->location));
    std::memcpy(values.data() + i * dimension, bytes.data(), bytes.size());
  }
  return values;
}

Result<std::vector<std::vector<SentenceVector>>> PostgresRecordStore::chunk_sentences(
    std::span<const std::int64_t> chunk_ids) {
  auto lease = KOTAE_TRY_VALUE(state_->pool->acquire());
  auto rows = KOTAE_TRY_VALUE(
      lease->prepared("SELECT id, sentences FROM chunks WHERE collection_id = $1 AND id = ANY($2::bigint[])",
                      PgParams().add(state_->collection_id).add(id_array(chunk_ids))));
  std::unordered_map<std::int64_t, std::size_t> row_of;
  for (std::size_t i = 0; i < rows.rows(); ++i) row_of[rows.int64(i, 0)] = i;
  std::vector<std::vector<SentenceVector>> out;
  out.reserve(chunk_ids.size());
  for (const std::int64_t id : chunk_ids) {
    const auto row = row_of.find(id);
    if (row == row_of.end()) return make_error(ErrorCode::not_found, "no chunk " + std::to_string(id));
    auto sentences = decode_sentence_vectors(rows.bytes(row->second, 1), state_->info.dimension);
    if (!sentences) {
      return make_error(ErrorCode::corrupt,
                        state_->location + ": chunk " + std::to_string(id) + ": " + sentences.error().message);
    }
    out.push_back(std::move(*sentences));
  }
  return out;
}

// --- the change log and index feeds ---------------------------------------------------------------

Result<std::int64_t> PostgresRecordStore::last_change() {
  auto lease = KOTAE_TRY_VALUE(state_->pool->acquire());
  auto rows =
      KOTAE_TRY_VALUE(lease->prepared("SELECT (SELECT coalesce(max(seq), 0) FROM change_log WHERE collection_id = "
                                      "$1)::bigint FROM collections WHERE id = $1 AND tenant = $2 AND name = $3",
                                      PgParams().add(state_->collection_id).add(state_->tenant).add(state_->name)));
  // Deleted or renamed (by another replica): whoever holds it open under this name closes it; the new
  // name opens afresh on demand.
  if (rows.rows() == 0) return make_error(ErrorCode::not_found, state_->location + " was deleted or renamed");
  return rows.int64(0, 0);
}

Result<std::optional<std::vector<std::int64_t>>> PostgresRecordStore::chunks_changed(std::int64_t after,
                                                                                     std::int64_t through) {
  auto lease = KOTAE_TRY_VALUE(state_->pool->acquire());
  auto rows = KOTAE_TRY_VALUE(
      lease->prepared("SELECT DISTINCT chunk_id FROM change_log WHERE collection_id = $1 AND seq > $2 AND seq <= $3",
                      PgParams().add(state_->collection_id).add(after).add(through)));
  std::vector<std::int64_t> touched;
  touched.reserve(rows.rows());
  for (std::size_t i = 0; i < rows.rows(); ++i) touched.push_back(rows.int64(i, 0));
  return std::optional<std::vector<std::int64_t>>(std::move(touched));
}

Result<std::vector<std::int64_t>> PostgresRecordStore::chunk_ids() {
  auto lease = KOTAE_TRY_VALUE(state_->pool->acquire());
  auto rows = KOTAE_TRY_VALUE(lease->query("SELECT id FROM chunks WHERE collection_id = $1 ORDER BY id",
                                           PgParams().add(state_->collection_id)));
  std::vector<std::int64_t> ids;
  ids.reserve(rows.rows());
  for (std::size_t i = 0; i < rows.rows(); ++i) ids.push_back(rows.int64(i, 0));
  return ids;
}

Result<void> PostgresRecordStore::scan_documents(const std::function<void(IndexedDocument)>& visit) {
  auto lease = KOTAE_TRY_VALUE(state_->pool->acquire());
  auto rows =
      KOTAE_TRY_VALUE(lease->query("SELECT id, path, format, metadata_json FROM documents WHERE collection_id = $1",
                                   PgParams().add(state_->collection_id)));
  for (std::size_t i = 0; i < rows.rows(); ++i) {
    visit(IndexedDocument{rows.int64(i, 0), std::string(rows.text(i, 1)), std::string(rows.text(i, 2)),
                          std::string(rows.text(i, 3))});
  }
  return {};
}

namespace {

constexpr const char* kIndexedChunkColumns = "c.id, c.document_id, c.text, c.heading_path, d.path, d.format";

Result<void> visit_rows(const PgResult& rows, bool with_embeddings, std::size_t dimension, const std::string& location,
                        std::vector<float>& aligned, const ChunkVisitor& visit) {
  for (std::size_t i = 0; i < rows.rows(); ++i) {
    IndexedChunk chunk{
        rows.int64(i, 0), rows.int64(i, 1), rows.text(i, 2), rows.text(i, 3), rows.text(i, 4), rows.text(i, 5), {}};
    if (with_embeddings) {
      const auto bytes = rows.bytes(i, 6);
      KOTAE_TRY(check_embedding(bytes, dimension, chunk.id, location));
      aligned.resize(dimension);  // libpq aligns binary values, but promises nothing
      std::memcpy(aligned.data(), bytes.data(), bytes.size());
      chunk.embedding = aligned;
    }
    KOTAE_TRY(visit(chunk));
  }
  return {};
}

}  // namespace

Result<void> PostgresRecordStore::scan_chunks(bool with_embeddings, const ChunkVisitor& visit) {
  // A cursor in one snapshot, fetched in batches: a 100k-chunk collection never sits in memory whole.
  auto lease = KOTAE_TRY_VALUE(state_->pool->acquire());
  auto transaction = KOTAE_TRY_VALUE(PgTransaction::begin(*lease));
  KOTAE_TRY(lease->query(std::string("DECLARE kotae_scan NO SCROLL CURSOR FOR SELECT ") + kIndexedChunkColumns +
                         (with_embeddings ? ", c.embedding" : "") +
                         " FROM chunks c JOIN documents d ON d.id = c.document_id WHERE c.collection_id = " +
                         std::to_string(state_->collection_id) + " ORDER BY c.document_id, c.ordinal"));
  std::vector<float> aligned;
  while (true) {
    auto rows = KOTAE_TRY_VALUE(lease->query("FETCH " + std::to_string(kScanBatch) + " FROM kotae_scan"));
    if (rows.rows() == 0) break;
    KOTAE_TRY(visit_rows(rows, with_embeddings, state_->info.dimension, state_->location, aligned, visit));
  }
  return transaction.commit();
}

Result<void> PostgresRecordStore::read_chunks(std::span<const std::int64_t> ids, const ChunkVisitor& visit) {
  auto lease = KOTAE_TRY_VALUE(state_->pool->acquire());
  std::vector<float> aligned;
  for (std::size_t first = 0; first < ids.size(); first += kScanBatch) {
    const auto some = ids.subspan(first, std::min(kScanBatch, ids.size() - first));
    auto rows = KOTAE_TRY_VALUE(lease->query(std::string("SELECT ") + kIndexedChunkColumns +
                                                 ", c.embedding FROM chunks c JOIN documents d ON d.id = c.document_id "
                                                 "WHERE c.collection_id = $1 AND c.id = ANY($2::bigint[])",
                                             PgParams().add(state_->collection_id).add(id_array(some))));
    KOTAE_TRY(visit_rows(rows, true, state_->info.dimension, state_->location, aligned, visit));
  }
  return {};
}

// --- writes and checks ----------------------------------------------------------------------------

Result<std::unique_ptr<WriteTransaction>> PostgresRecordStore::begin_write() {
  auto lease = KOTAE_TRY_VALUE(state_->pool->acquire());
  auto transaction = KOTAE_TRY_VALUE(PgTransaction::begin(*lease));
  // Writers of this collection take turns until commit: the log's order is the commits' order.
  KOTAE_TRY(lease->query("SELECT pg_advisory_xact_lock($1::int, $2::int)",
                         PgParams().add(kLockClass).add(state_->collection_id)));
  return std::unique_ptr<WriteTransaction>(
      new PostgresWriteTransaction(std::move(lease), std::move(transaction), state_->collection_id));
}

Result<RecordCheck> PostgresRecordStore::check_records() {
  RecordCheck check;  // PostgreSQL checks its own pages; there is no full-text table to compare
  auto lease = KOTAE_TRY_VALUE(state_->pool->acquire());
  auto documents = KOTAE_TRY_VALUE(lease->query("SELECT count(*)::bigint FROM documents WHERE collection_id = $1",
                                                PgParams().add(state_->collection_id)));
  check.documents = static_cast<std::size_t>(documents.int64(0, 0));
  check.chunk_ids = KOTAE_TRY_VALUE(chunk_ids());
  return check;
}

}  // namespace kotae::store
