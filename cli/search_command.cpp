#include "cli/search_command.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <iostream>

#include <nlohmann/json.hpp>

#include "assembly/collection_access.h"
#include "cli/report_error.h"
#include "search/hybrid_retriever.h"
#include "search/search_json.h"
#include "store/metadata_filter.h"

namespace kotae::cli {
namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

// The chunk text with the query's words in bold (ASCII case-insensitive, whole words).
std::string highlight(const std::string& text, const std::string& query) {
  std::vector<std::string> words;
  std::string word;
  for (char c : query + " ") {
    if (std::isalnum(static_cast<unsigned char>(c)) || (c & 0x80)) {
      word += c;
    } else if (!word.empty()) {
      if (word.size() > 2) words.push_back(lower(word));
      word.clear();
    }
  }
  std::string out;
  std::size_t i = 0;
  const std::string lowered = lower(text);
  auto is_word = [&](std::size_t p) {
    return p < text.size() && (std::isalnum(static_cast<unsigned char>(text[p])) || (text[p] & 0x80));
  };
  while (i < text.size()) {
    bool matched = false;
    if (i == 0 || !is_word(i - 1)) {
      for (const auto& w : words) {
        if (lowered.compare(i, w.size(), w) == 0 && !is_word(i + w.size())) {
          out += "\033[1m" + text.substr(i, w.size()) + "\033[0m";
          i += w.size();
          matched = true;
          break;
        }
      }
    }
    if (!matched) out += text[i++];
  }
  return out;
}

std::string pages(const store::ChunkRecord& chunk) {
  if (chunk.page_first == 0) return "-";
  if (chunk.page_first == chunk.page_last) return std::to_string(chunk.page_first);
  return std::to_string(chunk.page_first) + "-" + std::to_string(chunk.page_last);
}

std::string join_path(const std::vector<std::string>& headings) {
  std::string out;
  for (const auto& h : headings) out += (out.empty() ? "" : " > ") + h;
  return out;
}

}  // namespace

Result<void> add_filter_flags(store::SearchFilter& filter, const std::string& where_filter,
                              const std::vector<std::int64_t>& documents, const store::Collection& collection) {
  filter.documents = documents;
  if (where_filter.find_first_not_of(" \t\r\n") == std::string::npos) return {};
  auto parsed = store::MetadataFilter::parse(where_filter);
  if (!parsed) return make_error(ErrorCode::invalid_argument, "--where: " + parsed.error().message);
  filter.where = *parsed;
  if (auto checked = collection.check_filter(filter); !checked) {
    return make_error(checked.error().code, "--where: " + checked.error().message);
  }
  return {};
}

int run_search(const SearchCommandOptions& options) {
  auto mode = search::parse_search_mode(options.mode);
  if (!mode) return report_error(make_error(ErrorCode::invalid_argument, "--mode must be bm25, vector or hybrid"));
  auto open = assembly::open_for_search(options.where, options.collection, *mode != search::SearchMode::bm25);
  if (!open) return report_error(open.error());
  auto reranker = assembly::load_reranker(options.where.data_dir, options.rerank_model);
  if (!reranker) return report_error(reranker.error());
  auto retriever = search::HybridRetriever::create(*open->collection, open->encoder.get(), reranker->get());
  if (!retriever) return report_error(retriever.error());

  search::SearchOptions search;
  search.mode = *mode;
  search.k = options.k;
  search.candidates = options.candidates;
  search.rrf_k = options.rrf_k;
  search.filter = {options.path_prefix, options.formats};
  if (auto added = add_filter_flags(search.filter, options.where_filter, options.documents, *open->collection);
      !added) {
    return report_error(added.error());
  }
  auto result = retriever->search(options.query, search);
  if (!result) return report_error(result.error());

  if (options.json) {
    std::cout << search::to_json(*result, options.query, search.mode).dump(2) << "\n";
    return 0;
  }

  const bool tty = isatty(STDOUT_FILENO) == 1;
  if (result->hits.empty()) std::printf("no results\n");
  for (std::size_t i = 0; i < result->hits.size(); ++i) {
    const auto& h = result->hits[i];
    std::printf("%2zu. %.4f  %s  page %s  bytes %zu-%zu\n", i + 1, h.score, h.document_path.c_str(),
                pages(h.chunk).c_str(), h.chunk.begin, h.chunk.end);
    if (!h.chunk.heading_path.empty()) std::printf("    %s\n", join_path(h.chunk.heading_path).c_str());
    std::string text = h.chunk.text;
    std::replace(text.begin(), text.end(), '\n', ' ');
    std::printf("    %s\n\n", tty ? highlight(text, options.query).c_str() : text.c_str());
  }
  std::printf("%s search, %zu hits in %.1f ms (embed %.1f, bm25 %.1f, vector %.1f, rerank %.1f)\n",
              options.mode.c_str(), result->hits.size(), result->timing.total, result->timing.embed,
              result->timing.bm25, result->timing.vector, result->timing.rerank);
  return 0;
}

}  // namespace kotae::cli
