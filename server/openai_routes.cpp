// The OpenAI-compatible API, so existing clients (the openai packages, LangChain, LlamaIndex) work:
//   POST /v1/embeddings         {input: string | [string], model?, encoding_format?: float | base64}
//   GET  /v1/models             installed embedders, the reranker, the generators, and their aliases
//   POST /v1/chat/completions   plain chat with the generator "model" names (or the first one), or, when
//                               the request names a "collection", a grounded answer with its citations
//                               (in "kotae")

#include <openssl/evp.h>

#include <chrono>

#include "core/random_id.h"
#include "rag/answer_json.h"
#include "server/ask_request.h"
#include "server/json_body.h"
#include "server/openai_request.h"
#include "server/redaction.h"
#include "server/search_request.h"
#include "server/server_context.h"

namespace kotae::server {
namespace {

std::string base64_floats(std::span<const float> values) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(values.data());  // little-endian, as OpenAI's clients read
  const int n = static_cast<int>(values.size_bytes());
  std::string out(static_cast<std::size_t>(4 * ((n + 2) / 3)), '\0');
  const int written = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()), bytes, n);
  out.resize(static_cast<std::size_t>(written));
  return out;
}

long long unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// OpenAI's finish reasons: "stop" or "length".
std::string finish_reason(const std::string& ours) {
  return ours == "length" ? "length" : "stop";
}

nlohmann::json usage(const GenerationStats& stats) {
  return {{"prompt_tokens", stats.prompt_tokens},
          {"completion_tokens", stats.generated_tokens},
          {"total_tokens", stats.prompt_tokens + stats.generated_tokens}};
}

struct Completion {
  std::string id = random_id("chatcmpl-");
  long long created = unix_now();
  std::string model;
  bool include_usage = false;

  nlohmann::json chunk(nlohmann::json delta, const nlohmann::json& finish = nullptr) const {
    return {
        {"id", id},
        {"object", "chat.completion.chunk"},
        {"created", created},
        {"model", model},
        {"choices", nlohmann::json::array({{{"index", 0}, {"delta", std::move(delta)}, {"finish_reason", finish}}})}};
  }
  nlohmann::json whole(const std::string& text, const std::string& finish, const GenerationStats& stats) const {
    return {{"id", id},
            {"object", "chat.completion"},
            {"created", created},
            {"model", model},
            {"choices", nlohmann::json::array({{{"index", 0},
                                                {"message", {{"role", "assistant"}, {"content", text}}},
                                                {"finish_reason", finish_reason(finish)}}})},
            {"usage", usage(stats)}};
  }
  // The stream's end: with stream_options.include_usage, a chunk with no choices and the token counts
  // (as OpenAI sends it), then [DONE].
  void finish_stream(Responder& out, const GenerationStats* stats) const {
    if (include_usage && stats) {
      out.event("", json_text({{"id", id},
                               {"object", "chat.completion.chunk"},
                               {"created", created},
                               {"model", model},
                               {"choices", nlohmann::json::array()},
                               {"usage", usage(*stats)}}));
    }
    out.event("", "[DONE]");
    out.end_events();
  }
};

nlohmann::json error_chunk(const Error& error) {
  return error_envelope(from_error(error));
}

// The handler returns once the generation is under way; the callbacks (on the model's thread) answer.
void plain_chat(Call& call, ServerContext& context, const nlohmann::json& body, std::vector<ChatMessage> messages,
                bool stream, const Completion& completion) {
  // Clients send a model name they were written for ("gpt-4o-mini"): one Kotae does not know gets the
  // first generator, as a single-model server does; --alias gives such a name to another generator.
  Generator* generator = context.models->generator(completion.model);
  if (!generator) generator = context.models->backends().first_generator();
  if (!generator) {
    throw ApiError{400, "no_generator",
                   "this server has no generator for plain chat (start it with --model or --openai-url); name a "
                   "\"collection\" for a grounded answer, which the extractive back-end can give"};
  }
  auto options = answer_options(body, context.limits).generation;
  on_behalf_of(options, call);  // a client resends the history: KV reuse within the tenant only
  auto out = call.responder;
  auto* metrics = &context.metrics;
  const std::string backend = generator->id().substr(0, generator->id().find(':'));  // "llama.cpp", "openai", ...
  if (!stream) {
    return generator->start(
        std::move(messages), std::move(options), {}, [out, completion, metrics, backend](Result<Generation> generated) {
          if (!generated) return out->send(error_response(from_error(generated.error())));
          metrics->generation(backend, generated->stats);
          out->send(
              json_response(200, completion.whole(generated->text, generated->stats.finish_reason, generated->stats)));
        });
  }
  out->begin_events();
  out->event("", json_text(completion.chunk({{"role", "assistant"}, {"content", ""}})));
  generator->start(
      std::move(messages), std::move(options),
      [out, completion](std::string_view piece) {
        return out->event("", json_text(completion.chunk({{"content", piece}})));
      },
      [out, completion, metrics, backend](Result<Generation> generated) {
        if (generated) metrics->generation(backend, generated->stats);
        out->event("", json_text(generated ? completion.chunk(nlohmann::json::object(),
                                                              finish_reason(generated->stats.finish_reason))
                                           : error_chunk(generated.error())));
        completion.finish_stream(*out, generated ? &generated->stats : nullptr);
      });
}

// The last user message is the question; earlier user/assistant pairs are the conversation.
void grounded_chat(Call& call, ServerContext& context, const nlohmann::json& body,
                   const std::vector<ChatMessage>& messages, bool stream, const Completion& completion) {
  if (messages.back().role != "user") throw bad_request("the last message must be the user's question");
  const auto& question = messages.back().content;
  if (question.find_first_not_of(" \t\r\n") == std::string::npos) throw bad_request("the question is empty");
  auto collection = value_or_throw(context.collections->get(call.tenant, string_field(body, "collection")));
  auto conversation = std::make_shared<rag::Conversation>();  // lives until the answer is sent
  for (std::size_t i = 0; i + 1 < messages.size(); ++i) {
    if (messages[i].role == "user" && messages[i + 1].role == "assistant") {
      conversation->turns.push_back({messages[i].content, messages[i + 1].content, {}});
    }
  }
  auto options = answer_options(body, context.limits);
  check_filter_fields(collection->store->check_filter(options.search.filter));
  on_behalf_of(options.generation, call);
  rag::AnswerPipeline pipeline(*collection->encoder, context.models->cross_encoder(),
                               requested_backends(body, context.models->backends()));
  auto kotae_part = [collection](const rag::Answer& a) {
    return nlohmann::json{{"backend", a.backend},
                          {"covered", a.covered},
                          {"collection", collection->name},
                          {"citations", rag::citations_json(a.citations)},
                          {"sources", rag::sources_json(a.sources)},
                          {"timings_ms", rag::to_json(a.timings)}};
  };
  auto out = call.responder;
  auto post = context.continuations();
  if (!stream) {
    return pipeline.ask_async(
        question, *collection->store, std::move(options), conversation.get(), {},
        [out, completion, kotae_part, conversation](Result<rag::Answer> answer) {
          if (!answer) return out->send(error_response(from_error(answer.error())));
          auto json = completion.whole(answer->text, answer->generation.finish_reason, answer->generation);
          json["choices"][0]["message"]["citations"] = rag::citations_json(answer->citations);
          json["kotae"] = kotae_part(*answer);
          out->send(json_response(200, json));
        },
        post);
  }
  out->begin_events();
  out->event("", json_text(completion.chunk({{"role", "assistant"}, {"content", ""}})));
  using Kind = rag::AnswerEvent::Kind;
  auto sink = [out, completion](const rag::AnswerEvent& e) {
    if (e.kind == Kind::token) return out->event("", json_text(completion.chunk({{"content", e.token}})));
    if (e.kind == Kind::restart) {  // a back-end failed mid-answer: clients should drop what they showed
      auto chunk = completion.chunk(nlohmann::json::object());
      chunk["kotae"] = {{"restart", true}};
      return out->event("", json_text(chunk));
    }
    return true;
  };
  pipeline.ask_async(
      question, *collection->store, std::move(options), conversation.get(), sink,
      [out, completion, kotae_part, conversation](Result<rag::Answer> answer) {
        if (!answer) {
          out->event("", json_text(error_chunk(answer.error())));
        } else {
          auto last = completion.chunk(nlohmann::json::object(), finish_reason(answer->generation.finish_reason));
          last["kotae"] = kotae_part(*answer);
          out->event("", json_text(last));
        }
        completion.finish_stream(*out, answer ? &answer->generation : nullptr);
      },
      post);
}

}  // namespace

void add_openai_routes(Router& router, ServerContext& context) {
  router.add("POST", "/v1/embeddings", [&context](Call& call) {
    const auto request =
        read_embeddings_request(parse_json_object(call.request), context.limits, context.models->default_embedder());
    const auto& texts = request.texts;
    const auto& model = request.model;
    auto encoder = context.models->encoder(context.models->resolve(model));
    if (!encoder) {
      if (encoder.error().code == ErrorCode::not_found)
        throw ApiError{404, "model_not_found", "no embedding model '" + model + "' on this server"};
      throw from_error(encoder.error());
    }
    std::vector<text::Encoding> encodings;
    std::size_t tokens = 0;
    for (const auto& t : texts) {
      encodings.push_back((*encoder)->tokenize_as(request.role, t));
      tokens += encodings.back().size();
    }
    // The vectors come back on the batcher's thread; the response is written on the work pool.
    (*encoder)->embed_encoded_async(std::move(encodings), [&context, out = call.responder, base64 = request.base64,
                                                           model, tokens, keep = *encoder](Result<Embeddings> vectors) {
      context.continuations()([out, base64, model, tokens, vectors = std::move(vectors)] {
        if (!vectors) return out->send(error_response(from_error(vectors.error())));
        nlohmann::json data = nlohmann::json::array();
        for (std::size_t i = 0; i < vectors->size(); ++i) {
          nlohmann::json item{{"object", "embedding"}, {"index", i}};
          if (base64) {
            item["embedding"] = base64_floats(vectors->row(i));
          } else {
            item["embedding"] = vectors->row_copy(i);
          }
          data.push_back(std::move(item));
        }
        out->send(json_response(200, {{"object", "list"},
                                      {"data", data},
                                      {"model", model},
                                      {"usage", {{"prompt_tokens", tokens}, {"total_tokens", tokens}}}}));
      });
    });
  });

  router.add("GET", "/v1/models", [&context](Call& call) {
    const auto& models = *context.models;
    nlohmann::json data = nlohmann::json::array();
    auto add = [&](const std::string& id, const std::string& kind, const std::string& name) {
      nlohmann::json entry{{"id", call.admin ? id : redact_locations(id)},
                           {"object", "model"},
                           {"created", 0},
                           {"owned_by", "kotae"},
                           {"kind", kind}};
      nlohmann::json aliases = nlohmann::json::array();
      for (const auto& [alias, target] : models.aliases()) {
        if (target == name || target == id) aliases.push_back(alias);
      }
      if (!aliases.empty()) entry["aliases"] = aliases;
      data.push_back(std::move(entry));
      for (const auto& alias : aliases) {
        data.push_back({{"id", alias},
                        {"object", "model"},
                        {"created", 0},
                        {"owned_by", "kotae"},
                        {"kind", kind},
                        {"alias_of", data.back()["id"]}});
      }
    };
    // Every installed embedder: /v1/embeddings loads one on first use.
    for (const auto& m : models.installed()) {
      if (m.manifest.kind == "embedding") add(m.name, "embedding", m.name);
    }
    if (const auto* cross = models.cross_encoder()) add(cross->id(), "rerank", models.reranker_model());
    for (const auto& b : models.backends().order) {
      const Generator* g = b.answerer ? b.answerer->generator() : nullptr;
      if (!g) continue;
      add(g->id(), "chat", models.generator_model(*g));
    }
    call.responder->send(json_response(200, {{"object", "list"}, {"data", data}}));
  });

  router.add("POST", "/v1/chat/completions",
             [&context](Call& call) {
               const auto request = read_chat_request(parse_json_object(call.request), context.limits);
               Completion completion;
               completion.model = request.model;
               completion.include_usage = request.include_usage;
               if (request.grounded)
                 return grounded_chat(call, context, request.options, request.messages, request.stream, completion);
               plain_chat(call, context, request.options, request.messages, request.stream, completion);
             },
             {.audit = "chat", .collection = collection_in_body()});
}

}  // namespace kotae::server
