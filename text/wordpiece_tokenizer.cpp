#include "text/wordpiece_tokenizer.h"

#include <algorithm>
#include <fstream>

#include <nlohmann/json.hpp>

#include "text/unicode.h"

namespace kotae::text {
namespace {

void append_token(Encoding& out, std::int32_t id, std::int32_t type_id, std::uint32_t begin, std::uint32_t end,
                  bool special) {
  out.ids.push_back(id);
  out.type_ids.push_back(type_id);
  out.offsets.emplace_back(begin, end);
  out.special_tokens_mask.push_back(special ? 1 : 0);
}

void append_sequence(Encoding& out, const Encoding& part, std::size_t count, std::int32_t type_id) {
  for (std::size_t i = 0; i < count; ++i) {
    append_token(out, part.ids[i], type_id, part.offsets[i].first, part.offsets[i].second,
                 part.special_tokens_mask[i] != 0);
  }
}

// [CLS] first[:n1] [SEP] second[:n2] [SEP], the second text's tokens with type id 1.
Encoding assemble_pair(const Encoding& first, std::size_t n1, const Encoding& second, std::size_t n2,
                       std::int32_t cls_id, std::int32_t sep_id) {
  Encoding out;
  out.ids.reserve(n1 + n2 + 3);
  append_token(out, cls_id, 0, 0, 0, true);
  append_sequence(out, first, n1, 0);
  append_token(out, sep_id, 0, 0, 0, true);
  append_sequence(out, second, n2, 1);
  append_token(out, sep_id, 1, 0, 0, true);
  return out;
}

}  // namespace

WordPieceTokenizer::WordPieceTokenizer(std::unordered_map<std::string, std::int32_t> vocab, WordPieceOptions options)
    : vocab_(std::move(vocab)), options_(std::move(options)) {
  for (const auto& entry : vocab_) {
    if (entry.second >= 0 && entry.second < (1 << 24)) {  // a checked file; still, no huge allocation
      if (tokens_.size() <= static_cast<std::size_t>(entry.second))
        tokens_.resize(static_cast<std::size_t>(entry.second) + 1);
      tokens_[static_cast<std::size_t>(entry.second)] = entry.first;
    }
    const auto chars =
        std::count_if(entry.first.begin(), entry.first.end(), [](unsigned char c) { return (c & 0xC0) != 0x80; });
    longest_token_chars_ = std::max(longest_token_chars_, static_cast<std::size_t>(chars));
  }
}

const std::string& WordPieceTokenizer::token_text(std::int32_t id) const {
  static const std::string none;
  return id >= 0 && static_cast<std::size_t>(id) < tokens_.size() ? tokens_[static_cast<std::size_t>(id)] : none;
}

Result<void> WordPieceTokenizer::resolve_special_tokens() {
  unk_id_ = token_id(options_.unk_token);
  cls_id_ = token_id(options_.cls_token);
  sep_id_ = token_id(options_.sep_token);
  const std::int32_t pad = token_id(options_.pad_token);
  pad_id_ = pad < 0 ? 0 : pad;
  added_.clear();
  for (const auto& token : options_.added_tokens) {
    if (const std::int32_t id = token_id(token); id >= 0 && !token.empty()) {
      added_.emplace_back(token, id);
      added_first_byte_[static_cast<unsigned char>(token.front())] = true;
    }
  }
  if (unk_id_ < 0 || cls_id_ < 0 || sep_id_ < 0) {
    return make_error(ErrorCode::corrupt, "the vocabulary lacks one of " + options_.unk_token + ", " +
                                              options_.cls_token + ", " + options_.sep_token);
  }
  return {};
}

Result<WordPieceTokenizer> WordPieceTokenizer::from_tokenizer_json(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) return make_error(ErrorCode::not_found, "cannot open tokenizer " + path.string());
  nlohmann::json doc = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return make_error(ErrorCode::corrupt, path.string() + " is not valid JSON");
  const auto& model = doc["model"];
  if (!model.is_object() || model.value("type", "") != "WordPiece" || !model["vocab"].is_object()) {
    return make_error(ErrorCode::unsupported, path.string() + ": only WordPiece tokenizers are supported");
  }
  WordPieceOptions options;
  options.unk_token = model.value("unk_token", options.unk_token);
  options.continuing_prefix = model.value("continuing_subword_prefix", options.continuing_prefix);
  options.max_input_chars_per_word = model.value("max_input_chars_per_word", options.max_input_chars_per_word);
  if (const auto& n = doc["normalizer"]; n.is_object() && n.value("type", "") == "BertNormalizer") {
    options.normalizer.clean_text = n.value("clean_text", true);
    options.normalizer.handle_chinese_chars = n.value("handle_chinese_chars", true);
    options.normalizer.lowercase = n.value("lowercase", true);
    // strip_accents null means "follow lowercase", as in BERT.
    const auto& strip = n["strip_accents"];
    options.normalizer.strip_accents = strip.is_boolean() ? strip.get<bool>() : options.normalizer.lowercase;
  }
  if (const auto& pad = doc["padding"]; pad.is_object()) options.pad_token = pad.value("pad_token", options.pad_token);
  if (const auto& added = doc["added_tokens"]; added.is_array()) {
    for (const auto& token : added) {
      if (!token.value("normalized", true)) options.added_tokens.push_back(token.value("content", ""));
    }
  }

  std::unordered_map<std::string, std::int32_t> vocab;
  vocab.reserve(model["vocab"].size());
  for (const auto& [token, id] : model["vocab"].items()) vocab.emplace(token, id.get<std::int32_t>());
  WordPieceTokenizer tokenizer(std::move(vocab), std::move(options));
  if (auto r = tokenizer.resolve_special_tokens(); !r) return r.error();
  return tokenizer;
}

Result<WordPieceTokenizer> WordPieceTokenizer::from_vocab_txt(const std::filesystem::path& path,
                                                              WordPieceOptions options) {
  std::ifstream in(path);
  if (!in) return make_error(ErrorCode::not_found, "cannot open vocabulary " + path.string());
  std::unordered_map<std::string, std::int32_t> vocab;
  std::string line;
  for (std::int32_t id = 0; std::getline(in, line); ++id) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    vocab.emplace(line, id);
  }
  WordPieceTokenizer tokenizer(std::move(vocab), std::move(options));
  if (auto r = tokenizer.resolve_special_tokens(); !r) return r.error();
  return tokenizer;
}

std::int32_t WordPieceTokenizer::token_id(std::string_view token) const {
  const auto it = vocab_.find(std::string(token));
  return it == vocab_.end() ? -1 : it->second;
}

// Greedy longest-match-first over chars [first, last); a word with any unmatched piece becomes [UNK].
void WordPieceTokenizer::word_pieces(const NormalizedText& text, std::size_t first, std::size_t last,
                                     Encoding& out) const {
  const std::uint32_t word_begin = text.begin[first], word_end = text.end[last - 1];
  if (last - first > options_.max_input_chars_per_word) {
    append_token(out, unk_id_, 0, word_begin, word_end, false);
    return;
  }
  const std::size_t mark = out.size();
  std::string piece;
  for (std::size_t start = first; start < last;) {
    std::int32_t found = -1;
    // No piece longer than the longest vocabulary entry can match; trying only shorter ones keeps a long
    // word from costing the cube of its length (found by fuzz/tokenizer: 100-letter words took ms each).
    std::size_t stop = std::min(last, start + longest_token_chars_);
    for (; stop > start; --stop) {
      piece.assign(start > first ? options_.continuing_prefix : std::string());
      for (std::size_t i = start; i < stop; ++i) append_utf8(piece, text.chars[i]);
      if (const auto it = vocab_.find(piece); it != vocab_.end()) {
        found = it->second;
        break;
      }
    }
    if (found < 0) {
      out.ids.resize(mark);
      out.type_ids.resize(mark);
      out.offsets.resize(mark);
      out.special_tokens_mask.resize(mark);
      append_token(out, unk_id_, 0, word_begin, word_end, false);
      return;
    }
    append_token(out, found, 0, text.begin[start], text.end[stop - 1], false);
    start = stop;
  }
}

std::size_t WordPieceTokenizer::match_added_token(std::string_view input, std::size_t pos, std::int32_t& id) const {
  std::size_t best = 0;
  for (const auto& [token, token_id] : added_) {
    if (token.size() > best && input.compare(pos, token.size(), token) == 0) {
      best = token.size();
      id = token_id;
    }
  }
  return best;
}

void WordPieceTokenizer::tokenize_span(std::string_view input, std::size_t begin, std::size_t end,
                                       Encoding& out) const {
  if (begin >= end) return;
  const NormalizedText text = bert_normalize(input.substr(begin, end - begin), options_.normalizer);
  const std::size_t first_token = out.size();
  // BERT pre-tokenisation: whitespace separates words, each punctuation mark is a word of its own.
  std::size_t word_start = 0;
  for (std::size_t i = 0; i <= text.size(); ++i) {
    const bool at_end = i == text.size();
    const bool space = !at_end && is_whitespace(text.chars[i]);
    const bool punct = !at_end && !space && is_punctuation(text.chars[i]);
    if (at_end || space || punct) {
      if (i > word_start) word_pieces(text, word_start, i, out);
      if (punct) word_pieces(text, i, i + 1, out);
      word_start = i + 1;
    }
  }
  for (std::size_t t = first_token; t < out.size(); ++t) {
    out.offsets[t].first += static_cast<std::uint32_t>(begin);
    out.offsets[t].second += static_cast<std::uint32_t>(begin);
  }
}

Encoding WordPieceTokenizer::tokenize(std::string_view input) const {
  Encoding out;
  out.ids.reserve(input.size() / 3 + 4);
  std::size_t segment = 0;
  for (std::size_t pos = 0; pos < input.size();) {
    std::int32_t id = -1;
    const bool candidate = added_first_byte_[static_cast<unsigned char>(input[pos])];
    const std::size_t length = candidate ? match_added_token(input, pos, id) : 0;
    if (length == 0) {
      ++pos;
      continue;
    }
    tokenize_span(input, segment, pos, out);
    append_token(out, id, 0, static_cast<std::uint32_t>(pos), static_cast<std::uint32_t>(pos + length), true);
    pos += length;
    segment = pos;
  }
  tokenize_span(input, segment, input.size(), out);
  return out;
}

Encoding WordPieceTokenizer::tokenize_prefix(std::string_view text, std::size_t needed) const {
  // A prefix cut at white space tokenizes as the start of the whole text does (words never span white
  // space), so grow one until it holds enough tokens.
  for (std::size_t bytes = std::max<std::size_t>(needed * 8, 1024); bytes < text.size(); bytes *= 4) {
    const std::size_t cut = text.find_first_of(" \t\r\n", bytes);
    if (cut == std::string_view::npos) break;
    Encoding prefix = tokenize(text.substr(0, cut));
    if (prefix.ids.size() >= needed) return prefix;
  }
  return tokenize(text);
}

Encoding WordPieceTokenizer::encode(std::string_view text, std::size_t max_length) const {
  const Encoding tokens = max_length > 0 ? tokenize_prefix(text, max_length) : tokenize(text);
  std::size_t keep = tokens.size();
  if (max_length > 0) keep = std::min(keep, max_length > 2 ? max_length - 2 : 0);
  Encoding out;
  out.ids.reserve(keep + 2);
  append_token(out, cls_id_, 0, 0, 0, true);
  append_sequence(out, tokens, keep, 0);
  append_token(out, sep_id_, 0, 0, 0, true);
  return out;
}

Encoding WordPieceTokenizer::encode_pair(std::string_view a, std::string_view b, std::size_t max_length) const {
  const Encoding first = tokenize(a), second = tokenize(b);
  std::size_t n1 = first.size(), n2 = second.size();
  if (max_length > 0) {
    // Hugging Face's longest_first: shorten the longer text first, then both evenly.
    const std::size_t budget = max_length > 3 ? max_length - 3 : 0;
    if (n1 + n2 > budget) {
      const bool swapped = n1 > n2;
      std::size_t shorter = std::min(n1, n2), longer;
      longer = shorter > budget ? shorter : std::max(shorter, budget - shorter);
      if (shorter + longer > budget) {
        shorter = budget / 2;
        longer = shorter + budget % 2;
      }
      n1 = std::min(n1, swapped ? longer : shorter);
      n2 = std::min(n2, swapped ? shorter : longer);
    }
  }
  return assemble_pair(first, n1, second, n2, cls_id_, sep_id_);
}

// Hugging Face's only_second: the second text gives up what the pair has too much, provided one of
// its tokens remains. Otherwise tokenizers raises; we fall back to longest_first, as callers do.
Encoding WordPieceTokenizer::encode_pair(std::string_view a, std::string_view b, std::size_t max_length,
                                         PairTruncation truncation) const {
  if (truncation == PairTruncation::longest_first || max_length == 0) return encode_pair(a, b, max_length);
  const Encoding first = tokenize(a), second = tokenize(b);
  const std::size_t budget = max_length > 3 ? max_length - 3 : 0;
  std::size_t n2 = second.size();
  if (first.size() + n2 > budget) {
    if (first.size() >= budget) return encode_pair(a, b, max_length);  // rare: tokenises a second time
    n2 = budget - first.size();
  }
  return assemble_pair(first, first.size(), second, n2, cls_id_, sep_id_);
}

}  // namespace kotae::text
