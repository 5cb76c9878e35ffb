#pragma once
// The records a collection holds, as every back-end stores them and every caller sees them.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "text/document.h"

namespace kotae::store {

// What built the collection. Opening it with another embedder or dimension is an error.
struct CollectionInfo {
  std::string embedder_id;  // Encoder::id(), e.g. "all-minilm-l6-v2/fp32"
  std::size_t dimension = 0;
  std::size_t chunk_tokens = 0;  // chunking settings, recorded for reproducibility
  std::size_t overlap_tokens = 0;
};

struct DocumentRecord {
  std::int64_t id = 0;  // assigned by the store
  std::string path;     // the document's identity in the collection: absolute path, or a name
  std::string sha256;   // of the file's bytes (hex)
  std::int64_t size = 0;
  std::int64_t modified_ns = 0;  // file mtime, nanoseconds since the epoch
  std::string title;
  std::string format;  // "txt", "md", "html", "pdf", "docx"
  std::string metadata_json = "{}";
  std::string text;  // the normalised text chunks point into (filled by document(), not documents())
  std::int64_t chunk_count = 0;
};

struct ChunkRecord {
  std::int64_t id = 0;  // assigned by the store; also the chunk's key in the vector index
  std::int64_t document_id = 0;
  std::uint32_t ordinal = 0;  // position in its document
  std::size_t begin = 0;      // byte span in the document's text
  std::size_t end = 0;
  std::uint32_t page_first = 0;
  std::uint32_t page_last = 0;
  std::vector<std::string> heading_path;
  std::size_t token_count = 0;
  std::string table;  // the table (or sheet) the chunk holds rows of, "" when none (text::Chunk)
  std::uint32_t row_first = 0, row_last = 0;
  std::vector<text::TextBox> boxes;  // the OCR'd lines it touches: document bytes, page, box
  // document.text.substr(begin, end - begin), after the table's header and a line break where the
  // chunk is a piece of a table (text::chunk_text): the first repeated_bytes() bytes are not in the span.
  std::string text;
  std::size_t repeated_bytes() const { return text.size() > end - begin ? text.size() - (end - begin) : 0; }
};

class MetadataFilter;  // store/metadata_filter.h

// Restricts a search to documents whose path starts with `path_prefix` (when not empty), whose
// format is one of `formats` (when not empty), whose id is one of `documents` (when not empty; an id
// no document has matches nothing) and whose metadata `where` allows (when set). Every part applies
// before ranking, so k hits come back when k allowed chunks exist.
struct SearchFilter {
  SearchFilter() = default;
  SearchFilter(std::string prefix, std::vector<std::string> only_formats = {})
      : path_prefix(std::move(prefix)), formats(std::move(only_formats)) {}

  std::string path_prefix;
  std::vector<std::string> formats;
  std::vector<std::int64_t> documents;
  std::shared_ptr<const MetadataFilter> where;  // MetadataFilter::parse
  bool empty() const { return path_prefix.empty() && formats.empty() && documents.empty() && !where; }
};

struct ScoredChunk {
  std::int64_t chunk_id = 0;
  std::int64_t document_id = 0;
  float score = 0;  // BM25 (store/bm25_index, the same terms and weights as chunks_fts); vector: cosine similarity
};

struct ConsistencyReport {
  bool integrity_ok = false;  // PRAGMA integrity_check said "ok"
  bool fts_ok = false;        // FTS5 'integrity-check' passed
  std::size_t documents = 0;
  std::size_t chunks = 0;   // rows in chunks
  std::size_t vectors = 0;  // keys in the vector index
  std::size_t chunks_without_vector = 0;
  std::size_t vectors_without_chunk = 0;
  std::string details;  // what failed, for the error message
  bool ok() const {
    return integrity_ok && fts_ok && chunks == vectors && chunks_without_vector == 0 && vectors_without_chunk == 0;
  }
};

}  // namespace kotae::store
