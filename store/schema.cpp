#include "store/schema.h"

#include <string>

namespace kotae::store {

namespace {

// Version 1. chunks_fts is an external-content FTS5 table over chunks (text, heading_path), so
// the text is stored once; the triggers keep it in step, including the deletes that cascade from
// documents. heading_path is indexed as its JSON text: the tokenizer splits the brackets, quotes and
// commas away, so the words are those of the joined path, and FTS5's integrity check can compare the
// index with the content table column for column. vector_log records every chunk added or removed,
// in the same transaction, so the vector index (saved with the last seq it reflects) can be caught
// up after a crash. AUTOINCREMENT keeps ids from being reused: a chunk id is a vector index key.
std::string version_1() {
  return std::string(R"sql(
CREATE TABLE meta(
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL);

CREATE TABLE documents(
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  path TEXT UNIQUE NOT NULL,
  sha256 TEXT NOT NULL DEFAULT '',
  size INTEGER NOT NULL DEFAULT 0,
  modified_ns INTEGER NOT NULL DEFAULT 0,
  title TEXT NOT NULL DEFAULT '',
  format TEXT NOT NULL DEFAULT '',
  metadata_json TEXT NOT NULL DEFAULT '{}',
  text TEXT NOT NULL DEFAULT '',
  chunk_count INTEGER NOT NULL DEFAULT 0);

CREATE TABLE chunks(
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  document_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
  ordinal INTEGER NOT NULL,
  begin INTEGER NOT NULL,
  end INTEGER NOT NULL,
  page_first INTEGER NOT NULL DEFAULT 0,
  page_last INTEGER NOT NULL DEFAULT 0,
  heading_path TEXT NOT NULL DEFAULT '[]',
  token_count INTEGER NOT NULL DEFAULT 0,
  text TEXT NOT NULL,
  embedding BLOB NOT NULL);
CREATE INDEX chunks_by_document ON chunks(document_id, ordinal);

CREATE TABLE vector_log(
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  chunk_id INTEGER NOT NULL,
  op INTEGER NOT NULL);  -- 1 add, 0 remove

CREATE VIRTUAL TABLE chunks_fts USING fts5(
  text, heading_path, content='chunks', content_rowid='id', tokenize=')sql") +
         kFtsTokenizer + R"sql(');
INSERT INTO chunks_fts(chunks_fts, rank) VALUES('rank', ')sql" +
         kFtsRank + R"sql(');

CREATE TRIGGER chunks_after_insert AFTER INSERT ON chunks BEGIN
  INSERT INTO chunks_fts(rowid, text, heading_path) VALUES (new.id, new.text, new.heading_path);
  INSERT INTO vector_log(chunk_id, op) VALUES (new.id, 1);
END;
CREATE TRIGGER chunks_after_delete AFTER DELETE ON chunks BEGIN
  INSERT INTO chunks_fts(chunks_fts, rowid, text, heading_path) VALUES ('delete', old.id, old.text, old.heading_path);
  INSERT INTO vector_log(chunk_id, op) VALUES (old.id, 0);
END;
CREATE TRIGGER chunks_after_update AFTER UPDATE ON chunks BEGIN
  INSERT INTO chunks_fts(chunks_fts, rowid, text, heading_path) VALUES ('delete', old.id, old.text, old.heading_path);
  INSERT INTO chunks_fts(rowid, text, heading_path) VALUES (new.id, new.text, new.heading_path);
  INSERT INTO vector_log(chunk_id, op) VALUES (new.id, 1);
END;
)sql";
}

// Version 2: each chunk's sentences with their vectors (store/sentence_vectors.h). Chunks stored
// before have none (extractive answers pool them at query time, slowly); forgetting their documents'
// file stamps and hashes makes the next `kotae index` of those files store them again, with vectors.
constexpr const char* kVersion2 =
    "ALTER TABLE chunks ADD COLUMN sentences BLOB NOT NULL DEFAULT x'';"
    "UPDATE documents SET sha256 = '', modified_ns = 0;";

// Version 3: the table (or sheet) a chunk holds rows of, and which rows (text::Chunk).
constexpr const char* kVersion3 =
    "ALTER TABLE chunks ADD COLUMN table_name TEXT NOT NULL DEFAULT '';"
    "ALTER TABLE chunks ADD COLUMN row_first INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE chunks ADD COLUMN row_last INTEGER NOT NULL DEFAULT 0;";

// Version 4: the OCR'd lines a chunk touches, with their boxes (store/line_boxes.h).
constexpr const char* kVersion4 = "ALTER TABLE chunks ADD COLUMN boxes TEXT NOT NULL DEFAULT '[]';";

constexpr std::int64_t kSchemaVersion = 4;

}  // namespace

Result<void> migrate_schema(Database& db) {
  auto transaction = Transaction::begin(db);
  if (!transaction) return transaction.error();
  auto version = db.query_int64("PRAGMA user_version");
  if (!version) return version.error();
  const std::int64_t current = version->value_or(0);
  if (current > kSchemaVersion) {
    return make_error(ErrorCode::unsupported, db.path().string() + " has schema version " + std::to_string(current) +
                                                  ", newer than this build of Kotae reads (" +
                                                  std::to_string(kSchemaVersion) + ")");
  }
  if (current == kSchemaVersion) return {};
  if (current < 1) {
    auto tables = db.query_int64("SELECT count(*) FROM sqlite_master");
    if (!tables) return tables.error();
    if (tables->value_or(0) != 0) {
      return make_error(ErrorCode::corrupt, db.path().string() + " is a SQLite database but not a Kotae collection");
    }
    if (auto done = db.execute(version_1()); !done) return done.error();
  }
  if (current < 2) {
    if (auto done = db.execute(kVersion2); !done) return done.error();
  }
  if (current < 3) {
    if (auto done = db.execute(kVersion3); !done) return done.error();
  }
  if (current < 4) {
    if (auto done = db.execute(kVersion4); !done) return done.error();
  }
  // Later versions: `if (current < 5) { ALTER ... }`, each step bringing the previous one forward.
  if (auto done = db.execute("PRAGMA user_version=" + std::to_string(kSchemaVersion)); !done) return done.error();
  return transaction->commit();
}

}  // namespace kotae::store
