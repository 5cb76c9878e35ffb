#pragma once
// The collection database's tables, FTS5 index and triggers, and their migrations. The schema
// version is SQLite's user_version: 0 is a new file, each migration moves it up by one.

#include <cstdint>

#include "core/result.h"
#include "store/sqlite_database.h"

namespace kotae::store {

// Tokenizer of the BM25 index: Porter stemming over Unicode words, accents folded.
inline constexpr const char* kFtsTokenizer = "porter unicode61 remove_diacritics 2";
// BM25 column weights (text, heading_path): a heading repeats over every chunk of its section,
// so it counts half as much as the chunk's own words.
inline constexpr const char* kFtsRank = "bm25(1.0, 0.5)";

// The on-disk format this build writes (manifest.json and the meta table both record it).
inline constexpr std::int64_t kFormatVersion = 1;

// Brings the database to the current schema, inside a transaction. A database from a newer
// Kotae is an unsupported error; one without any Kotae table is set up from scratch.
Result<void> migrate_schema(Database& db);

}  // namespace kotae::store
