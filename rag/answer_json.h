#pragma once
// Answers as JSON: what `kotae ask --json` prints and what POST /v1/ask returns (and streams, event by
// event).

#include <nlohmann/json.hpp>

#include "rag/answer_pipeline.h"

namespace kotae::rag {

nlohmann::json to_json(const Citation& citation);
nlohmann::json to_json(const Source& source);
nlohmann::json to_json(const StageTimings& timings);
nlohmann::json sources_json(std::span<const Source> sources);
nlohmann::json citations_json(std::span<const Citation> citations);
// The reverse of sources_json, for sources kept as JSON (a stored conversation's turns): corrupt when
// one is not an object with every field of the right type.
Result<std::vector<Source>> sources_from_json(const nlohmann::json& sources);
// {"question", "answer", "backend", "covered", "citations", "sources", "fallbacks", "timings_ms", "generation"}
nlohmann::json to_json(const Answer& answer, std::string_view question);

}  // namespace kotae::rag
