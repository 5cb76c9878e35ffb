// Hugging Face text-embeddings-inference's (TEI's) API, so its clients (huggingface_hub's
// InferenceClient, LangChain's and LlamaIndex's TEI embeddings) work against Kotae unchanged:
//   POST /embed     {inputs: string | [string], normalize?, truncate?, truncation_direction?, prompt_name?}
//                   → [[float]]
//   POST /tokenize  {inputs, add_special_tokens?, prompt_name?} → [[{id, text, special, start, stop}]]
//   GET  /info      the default embedder and the server's limits, in TEI's fields
//   GET  /health    200 once the models are loaded, else 503
// (POST /rerank with TEI's body is in rerank_routes.cpp.) The default embedder answers; errors are
// TEI's {"error", "error_type"}.

#include "server/json_body.h"
#include "server/server_context.h"
#include "server/tei_api.h"

namespace kotae::server {
namespace {

struct TeiInputs {
  std::vector<std::string> texts;
  TextRole role = TextRole::passage;
  bool truncate = false;
};

TeiInputs read_inputs(const nlohmann::json& body, const ApiLimits& limits) {
  TeiInputs in;
  in.texts = texts_field(body, "inputs", limits.max_embedding_inputs, limits.max_text_bytes);
  if (in.texts.empty()) throw ApiError{400, "empty", "`inputs` cannot be empty"};
  in.truncate = bool_field(body, "truncate", false);
  if (const auto direction = string_field(body, "truncation_direction", "right");
      direction != "right" && direction != "Right") {
    throw bad_request("'truncation_direction' must be right: Kotae keeps a text's beginning");
  }
  // TEI names the sentence-transformers prompt to put first; Kotae's manifests know two.
  const auto prompt = string_field(body, "prompt_name", "");
  if (!prompt.empty() && prompt != "query" && prompt != "passage" && prompt != "document") {
    throw bad_request("'prompt_name' must be query, passage or document");
  }
  in.role = prompt == "query" ? TextRole::query : TextRole::passage;
  return in;
}

// The texts as the model reads them. Without truncate, one longer than the model's input is refused, as
// TEI refuses it (413), rather than embedded in part.
std::vector<text::Encoding> encode(const Encoder& encoder, const TeiInputs& in) {
  std::vector<text::Encoding> encodings;
  for (const auto& t : in.texts) {
    encodings.push_back(encoder.tokenize_as(in.role, t));
    if (in.truncate || encodings.back().size() < encoder.max_length()) continue;
    const auto& prefixes = encoder.prefixes();
    const auto whole =
        encoder.tokenizer().encode((in.role == TextRole::query ? prefixes.query : prefixes.passage) + t, 0).size();
    if (whole > encoder.max_length()) {
      throw ApiError{413, "validation",
                     "Input validation error: `inputs` must have less than " + std::to_string(encoder.max_length()) +
                         " tokens. Given: " + std::to_string(whole)};
    }
  }
  return encodings;
}

std::shared_ptr<const Encoder> default_encoder(ServerContext& context) {
  auto encoder = context.models->encoder(context.models->default_embedder());
  if (!encoder) throw from_error(encoder.error());
  return *encoder;
}

void embed(Call& call, ServerContext& context) {
  const auto body = parse_json_object(call.request);
  const auto in = read_inputs(body, context.limits);
  auto encoder = default_encoder(context);
  auto answer = [out = call.responder](const Result<Embeddings>& vectors) {
    if (!vectors) return out->send(tei_error(from_error(vectors.error())));
    nlohmann::json rows = nlohmann::json::array();
    for (std::size_t i = 0; i < vectors->size(); ++i) rows.push_back(vectors->row_copy(i));
    out->send(json_response(200, rows));
  };
  if (!bool_field(body, "normalize", true)) return answer(encoder->embed_encoded_unnormalized(encode(*encoder, in)));
  encoder->embed_encoded_async(encode(*encoder, in), [&context, answer, keep = encoder](Result<Embeddings> vectors) {
    context.continuations()([answer, vectors = std::move(vectors)] { answer(vectors); });
  });
}

void tokenize(Call& call, ServerContext& context) {
  const auto body = parse_json_object(call.request);
  auto in = read_inputs(body, context.limits);
  in.truncate = true;  // TEI tokenizes whatever it is given
  const bool special = bool_field(body, "add_special_tokens", true);
  const auto encoder = default_encoder(context);
  nlohmann::json out = nlohmann::json::array();
  for (const auto& t : in.texts) {
    const auto encoding = special ? encoder->tokenize_as(in.role, t) : encoder->tokenizer().tokenize(t);
    nlohmann::json tokens = nlohmann::json::array();
    for (std::size_t i = 0; i < encoding.size(); ++i) {
      const auto [start, stop] = encoding.offsets[i];
      const bool is_special = !encoding.special_tokens_mask.empty() && encoding.special_tokens_mask[i] != 0;
      tokens.push_back({{"id", encoding.ids[i]},
                        {"text", encoder->tokenizer().token_text(encoding.ids[i])},
                        {"special", is_special},
                        {"start", is_special ? nlohmann::json(nullptr) : nlohmann::json(start)},
                        {"stop", is_special ? nlohmann::json(nullptr) : nlohmann::json(stop)}});
    }
    out.push_back(std::move(tokens));
  }
  call.responder->send(json_response(200, out));
}

void info(Call& call, ServerContext& context) {
  const auto& models = *context.models;
  const auto encoder = default_encoder(context);
  std::string pooling = "mean";
  for (const auto& m : models.installed()) {
    if (m.name == models.default_embedder() && !m.manifest.pooling.empty()) pooling = m.manifest.pooling;
  }
  const auto& batch = models.batch_policy();
  nlohmann::json body{{"model_id", models.default_embedder()},
                      {"model_sha", nullptr},
                      {"model_dtype", encoder->precision() == "fp32"   ? "float32"
                                      : encoder->precision() == "fp16" ? "float16"
                                                                       : encoder->precision()},
                      {"model_type", {{"embedding", {{"pooling", pooling}}}}},
                      {"max_concurrent_requests", batch.max_queued},
                      {"max_input_length", encoder->max_length()},
                      {"max_batch_tokens", batch.max_tokens},
                      {"max_batch_requests", batch.max_items},
                      {"max_client_batch_size", context.limits.max_embedding_inputs},
                      {"auto_truncate", false},
                      {"tokenization_workers", 1},
                      {"version", KOTAE_VERSION}};
  if (const auto* cross = models.cross_encoder()) body["kotae"] = {{"reranker", cross->id()}};
  call.responder->send(json_response(200, body));
}

}  // namespace

void add_tei_routes(Router& router, ServerContext& context) {
  router.add("POST", "/embed", tei_errors([&context](Call& call) { embed(call, context); }));
  router.add("POST", "/tokenize", tei_errors([&context](Call& call) { tokenize(call, context); }));
  router.add("GET", "/info", tei_errors([&context](Call& call) { info(call, context); }));
  // TEI's health check: an empty 200 when the model answers. Open, like /healthz, for load balancers.
  router.add("GET", "/health",
             [&context](Call& call) {
               if (!context.ready.load())
                 return call.responder->send(tei_error(503, "Unhealthy", "the models are loading"));
               call.responder->send({200, "text/plain", "", {}});
             },
             {.quick = true, .access = Access::open});
}

}  // namespace kotae::server
