#pragma once
// Helpers for the store tests: a temporary folder that cleans up after itself, deterministic
// embeddings, documents with chunks, and raw SQL against a collection's database (to damage it
// behind the store's back, as a crash or another program would).

#include <sqlite3.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "store/collection.h"

namespace kotae::store::testing {

class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    std::random_device random;
    path_ = std::filesystem::path("/tmp") / ("kotae-store-test-" + std::to_string(::getpid()) + "-" +
                                             std::to_string(counter++) + "-" + std::to_string(random()));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

inline std::vector<float> random_unit_vector(std::size_t dimension, std::mt19937& rng) {
  std::normal_distribution<float> normal;
  std::vector<float> vector(dimension);
  double norm = 0;
  for (auto& x : vector) {
    x = normal(rng);
    norm += double(x) * x;
  }
  for (auto& x : vector) x = static_cast<float>(x / std::sqrt(norm));
  return vector;
}

// A document whose chunks are `texts` (laid end to end in its text, separated by a blank line),
// with one random unit embedding per chunk.
struct DocumentInput {
  DocumentRecord document;
  std::vector<ChunkRecord> chunks;
  std::vector<float> embeddings;  // row-major

  std::span<const float> embedding(std::size_t chunk) const {
    const std::size_t dimension = embeddings.size() / chunks.size();
    return std::span<const float>(embeddings).subspan(chunk * dimension, dimension);
  }
};

inline DocumentInput make_document(const std::string& path, const std::string& format,
                                   const std::vector<std::string>& texts, std::size_t dimension, std::mt19937& rng,
                                   std::vector<std::string> heading_path = {"Guide", "Section"}) {
  DocumentInput input;
  input.document.path = path;
  input.document.format = format;
  input.document.title = "Title of " + path;
  input.document.sha256 = std::string(64, 'a');
  input.document.size = 1234;
  input.document.modified_ns = 1'700'000'000'000'000'000;
  input.document.metadata_json = R"({"source":"test"})";
  for (std::size_t i = 0; i < texts.size(); ++i) {
    if (i > 0) input.document.text += "\n\n";
    ChunkRecord chunk;
    chunk.ordinal = static_cast<std::uint32_t>(i);
    chunk.begin = input.document.text.size();
    input.document.text += texts[i];
    chunk.end = input.document.text.size();
    chunk.page_first = static_cast<std::uint32_t>(i + 1);
    chunk.page_last = static_cast<std::uint32_t>(i + 2);
    chunk.heading_path = heading_path;
    if (i % 2 == 1) {  // every other chunk holds rows of a table
      chunk.table = "Prices";
      chunk.row_first = static_cast<std::uint32_t>(i + 1);
      chunk.row_last = static_cast<std::uint32_t>(i + 9);
      chunk.boxes.push_back({chunk.begin, chunk.end, static_cast<std::uint32_t>(i + 1), 0.125f, 0.25f, 0.9375f, 0.5f});
    }
    chunk.token_count = texts[i].size() / 4 + 1;
    chunk.text = texts[i];
    input.chunks.push_back(chunk);
    auto embedding = random_unit_vector(dimension, rng);
    input.embeddings.insert(input.embeddings.end(), embedding.begin(), embedding.end());
  }
  return input;
}

inline Result<std::int64_t> put(Collection& collection, const DocumentInput& input) {
  return collection.put_document(input.document, input.chunks, input.embeddings);
}

// Runs SQL on the database file with a connection of its own; returns SQLite's error message, or
// an empty string when it succeeded.
inline std::string raw_sql(const std::filesystem::path& database, const std::string& sql) {
  sqlite3* db = nullptr;
  if (sqlite3_open(database.c_str(), &db) != SQLITE_OK) {
    std::string message = sqlite3_errmsg(db);
    sqlite3_close(db);
    return message;
  }
  sqlite3_busy_timeout(db, 5000);
  char* error = nullptr;
  std::string message;
  if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error) != SQLITE_OK) {
    message = error != nullptr ? error : "failed";
    sqlite3_free(error);
  }
  sqlite3_close(db);
  return message;
}

inline std::int64_t raw_count(const std::filesystem::path& database, const std::string& sql) {
  sqlite3* db = nullptr;
  std::int64_t count = -1;
  if (sqlite3_open(database.c_str(), &db) == SQLITE_OK) {
    sqlite3_stmt* statement = nullptr;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &statement, nullptr) == SQLITE_OK &&
        sqlite3_step(statement) == SQLITE_ROW) {
      count = sqlite3_column_int64(statement, 0);
    }
    sqlite3_finalize(statement);
  }
  sqlite3_close(db);
  return count;
}

}  // namespace kotae::store::testing
