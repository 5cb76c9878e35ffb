#include "rag/answer_json.h"

#include <cmath>

#include "search/search_json.h"

namespace kotae::rag {

namespace {

// Where OCR'd lines are: their page and box (fractions of the page from its top-left corner), for a
// viewer to draw; their bytes are the citation's or source's own.
nlohmann::json boxes_json(const std::vector<text::TextBox>& boxes) {
  const auto rounded = [](float f) { return std::round(static_cast<double>(f) * 1e4) / 1e4; };
  nlohmann::json out = nlohmann::json::array();
  for (const auto& b : boxes) {
    out.push_back({{"page", b.page},
                   {"left", rounded(b.left)},
                   {"top", rounded(b.top)},
                   {"right", rounded(b.right)},
                   {"bottom", rounded(b.bottom)}});
  }
  return out;
}

}  // namespace

nlohmann::json to_json(const Citation& c) {
  nlohmann::json j{{"number", c.number},
                   {"chunk_id", c.chunk_id},
                   {"document_id", c.document_id},
                   {"document", c.document},
                   {"title", c.title},
                   {"format", c.format},
                   {"page", c.page ? nlohmann::json(c.page) : nlohmann::json(nullptr)},
                   {"page_last", c.page_last ? nlohmann::json(c.page_last) : nlohmann::json(nullptr)},
                   {"start", c.start},
                   {"end", c.end},
                   {"text", c.text},
                   {"answer_start", c.answer_start},
                   {"answer_end", c.answer_end}};
  j["metadata"] = search::metadata_json(c.metadata_json);
  if (!c.table_header.empty()) j["table_header"] = c.table_header;
  if (!c.boxes.empty()) j["boxes"] = boxes_json(c.boxes);
  return j;
}

nlohmann::json to_json(const Source& s) {
  nlohmann::json j{{"number", s.number},
                   {"chunk_id", s.chunk_id},
                   {"document_id", s.document_id},
                   {"document", s.document},
                   {"title", s.title},
                   {"format", s.format},
                   {"page_first", s.page_first},
                   {"page_last", s.page_last},
                   {"start", s.begin},
                   {"end", s.end},
                   {"relevance", s.relevance},
                   {"score", s.score},
                   {"heading_path", s.heading_path},
                   {"text", s.text},
                   {"metadata", search::metadata_json(s.metadata_json)}};
  if (!s.table.empty()) {
    j["table"] = s.table;
    j["row_first"] = s.row_first;
    j["row_last"] = s.row_last;
  }
  return j;
}

nlohmann::json to_json(const StageTimings& t) {
  return {{"embed", t.embed},       {"retrieve", t.retrieve},       {"rerank", t.rerank}, {"prompt", t.prompt},
          {"generate", t.generate}, {"first_token", t.first_token}, {"total", t.total}};
}

nlohmann::json sources_json(std::span<const Source> sources) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& s : sources) out.push_back(to_json(s));
  return out;
}

Result<std::vector<Source>> sources_from_json(const nlohmann::json& sources) {
  if (!sources.is_array()) return make_error(ErrorCode::corrupt, "sources are not a JSON array");
  std::vector<Source> out;
  try {
    for (const auto& j : sources) {
      Source& s = out.emplace_back();
      j.at("number").get_to(s.number);
      j.at("chunk_id").get_to(s.chunk_id);
      s.document_id = j.value("document_id", std::int64_t{0});  // absent in turns stored before it was
      j.at("document").get_to(s.document);
      j.at("title").get_to(s.title);
      s.format = j.value("format", "");
      // absent in turns stored before it was
      if (const auto m = j.find("metadata"); m != j.end() && m->is_object()) s.metadata_json = m->dump();
      j.at("page_first").get_to(s.page_first);
      j.at("page_last").get_to(s.page_last);
      j.at("start").get_to(s.begin);
      j.at("end").get_to(s.end);
      j.at("relevance").get_to(s.relevance);
      j.at("score").get_to(s.score);
      j.at("heading_path").get_to(s.heading_path);
      j.at("text").get_to(s.text);
      s.table = j.value("table", "");
      s.row_first = j.value("row_first", std::uint32_t{0});
      s.row_last = j.value("row_last", std::uint32_t{0});
    }
  } catch (const nlohmann::json::exception& e) {
    return make_error(ErrorCode::corrupt, std::string("a source is not as sources_json writes it: ") + e.what());
  }
  return out;
}

nlohmann::json citations_json(std::span<const Citation> citations) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& c : citations) out.push_back(to_json(c));
  return out;
}

nlohmann::json to_json(const Answer& a, std::string_view question) {
  nlohmann::json fallbacks = nlohmann::json::array();
  for (const auto& f : a.fallbacks) fallbacks.push_back({{"backend", f.backend}, {"error", f.error}});
  return {{"question", question},
          {"answer", a.text},
          {"backend", a.backend},
          {"covered", a.covered},
          {"citations", citations_json(a.citations)},
          {"sources", sources_json(a.sources)},
          {"fallbacks", fallbacks},
          {"timings_ms", to_json(a.timings)},
          {"generation",
           {{"prompt_tokens", a.generation.prompt_tokens},
            {"reused_prompt_tokens", a.generation.reused_prompt_tokens},
            {"generated_tokens", a.generation.generated_tokens},
            {"finish_reason", a.generation.finish_reason}}}};
}

}  // namespace kotae::rag
