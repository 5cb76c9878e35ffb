// POST /v1/ask {question, collection, conversation_id?, backends?, k?, mode?, rerank?, filters?,
//               min_relevance?, max_tokens?, temperature?, top_p?, seed?, stop?, stream?, async?}
// With "stream": true the answer comes as Server-Sent Events: sources, token..., (restart), citations,
// timings, done (the whole answer); an error after the stream began is an "error" event.
// With "async": true the answer is 202 {id, status}; GET /v1/tasks/{id} (on any replica, with a work
// queue) gives the status, then the answer as POST /v1/ask returns it (server/ask_tasks.h).

#include <chrono>

#include "core/random_id.h"
#include "rag/answer_cache.h"
#include "rag/answer_json.h"
#include "server/ask_request.h"
#include "server/json_body.h"
#include "server/json_log.h"
#include "server/search_request.h"
#include "server/server_context.h"

namespace kotae::server {

namespace {

struct AskCall {
  std::string question;
  std::shared_ptr<ServedCollection> collection;
  std::string conversation_id;
  std::shared_ptr<StoredConversation> conversation;
  rag::AnswerOptions options;
  std::vector<rag::AnswerBackend> backends;
};

AskCall read_ask(const nlohmann::json& body, const Call& call, ServerContext& context) {
  auto request = read_ask_request(body, context.limits, context.models->backends().order);
  AskCall ask;
  ask.question = std::move(request.question);
  ask.collection = value_or_throw(context.collections->get(call.tenant, request.collection));
  ask.options = std::move(request.options);
  ask.backends = std::move(request.backends);
  ask.conversation_id = std::move(request.conversation_id);
  if (ask.conversation_id.empty()) {
    std::tie(ask.conversation_id, ask.conversation) = context.conversations->create(call.tenant, ask.collection->name);
  } else {
    ask.conversation = context.conversations->find(ask.conversation_id, call.tenant);
    if (!ask.conversation) throw ApiError{404, "not_found", "no conversation '" + ask.conversation_id + "' (it may have expired)"};
    if (ask.conversation->collection != ask.collection->name) {
      throw bad_request("conversation '" + ask.conversation_id + "' is about collection '" + ask.conversation->collection + "'");
    }
  }
  return ask;
}

nlohmann::json error_json(const ApiError& e) { return {{"error", {{"code", e.code}, {"type", e.code}, {"message", e.message}}}}; }

std::string dump(const nlohmann::json& j) { return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace); }

// What a client sees of an async question's record: all but the tenant.
nlohmann::json task_json(nlohmann::json record) {
  record.erase("tenant");
  return record;
}

// An async question's record (server/ask_tasks.h), written where every replica reads it.
void keep(ServerContext& context, const nlohmann::json& record) {
  if (auto kept = context.ask_tasks->put(record); !kept) {
    log_event("ask_task_unrecorded", {{"task", record["id"]}, {"reason", kept.error().message}});
  }
}

}  // namespace

void add_ask_routes(Router& router, ServerContext& context) {
  router.add("POST", "/v1/ask", [&context](Call& call) {
    const auto body = parse_json_object(call.request);
    const bool stream = bool_field(body, "stream", false);
    const bool async = bool_field(body, "async", false);
    if (stream && async) throw bad_request("\"stream\" and \"async\" cannot both be true");
    AskCall ask = read_ask(body, call, context);
    on_behalf_of(ask.options.generation, call, async);

    nlohmann::json record;  // an async question's (server/ask_tasks.h)
    auto run = [&] {
      rag::AnswerPipeline pipeline(*ask.collection->encoder, context.models->cross_encoder(), ask.backends);
      std::lock_guard one_question(ask.conversation->mutex);
      auto& conversation = ask.conversation->conversation;
      if (conversation.turns.size() >= ConversationStore::kMaxTurns) {
        throw bad_request("conversation '" + ask.conversation_id + "' has " + std::to_string(conversation.turns.size()) +
                          " turns, the most one may have: start a new one");
      }
      // A first question may be answered from the cache (a follow-up depends on its conversation). The
      // collection's generation is read before answering: a change meanwhile leaves the entry unreachable.
      const bool cacheable = bool_field(body, "cache", true) && conversation.turns.empty();
      std::string key;
      std::optional<rag::Answer> cached;
      if (cacheable) {
        key = rag::answer_cache_key(call.tenant + "/" + ask.collection->name + "/" + ask.collection->instance + "@" +
                                        std::to_string(ask.collection->generation.load()),
                                    ask.question, ask.options, ask.backends);
        cached = context.answer_cache->find(key);
        context.metrics.cache_lookup(cached.has_value());
      }
      const std::string cache_state = !cacheable ? "off" : cached ? "hit" : "miss";
      auto whole = [&](const rag::Answer& a) {
        auto json = rag::to_json(a, ask.question);
        json["conversation_id"] = ask.conversation_id;
        json["collection"] = ask.collection->name;
        json["cache"] = cache_state;
        return json;
      };
      auto remember = [&](const rag::Answer& a) {
        context.metrics.answer(a, cached.has_value());
        if (cached) {
          if (a.covered) conversation.turns.push_back({ask.question, a.text, a.sources});
        } else if (cacheable && a.fallbacks.empty() && a.generation.finish_reason != "cancelled") {
          context.answer_cache->put(key, a);  // not an answer a failing back-end degraded
        }
      };

      auto answer_whole = [&] {
        auto answer = cached ? *cached
                             : value_or_throw(pipeline.ask(ask.question, *ask.collection->store, ask.options, &conversation));
        remember(answer);
        return whole(answer);
      };
      if (async) {
        record["answer"] = answer_whole();
        record["status"] = "succeeded";
        return;
      }
      if (!stream) {
        auto response = json_response(200, answer_whole());
        response.headers.emplace_back("X-Kotae-Cache", cache_state);
        return call.responder->send(std::move(response));
      }

      auto& out = *call.responder;
      out.begin_events({{"X-Kotae-Cache", cache_state}});
      using Kind = rag::AnswerEvent::Kind;
      auto sink = [&](const rag::AnswerEvent& e) {
        switch (e.kind) {
          case Kind::sources:
            return out.event("sources", dump({{"conversation_id", ask.conversation_id}, {"sources", rag::sources_json(e.answer->sources)}}));
          case Kind::token: return out.event("token", dump({{"text", e.token}}));
          case Kind::restart: return out.event("restart", "{}");
          case Kind::citations:
            return out.event("citations", dump({{"answer", e.answer->text}, {"citations", rag::citations_json(e.answer->citations)}}));
          case Kind::timings: return out.event("timings", dump({{"timings_ms", rag::to_json(e.answer->timings)}}));
          case Kind::done: return true;  // the whole answer follows
        }
        return true;
      };
      Result<rag::Answer> answer = make_error(ErrorCode::internal, "");
      if (cached) {  // the same events, from the stored answer
        answer = *cached;
        sink({Kind::sources, {}, &*cached});
        sink({Kind::token, cached->text, &*cached});
        sink({Kind::citations, {}, &*cached});
        sink({Kind::timings, {}, &*cached});
      } else {
        answer = pipeline.ask(ask.question, *ask.collection->store, ask.options, &conversation, sink);
      }
      if (!answer) {
        out.event("error", dump(error_json(from_error(answer.error()))));
      } else {
        remember(*answer);
        out.event("done", dump(whole(*answer)));
      }
      out.end_events();
    };
    if (!async) return run();

    // Accepted now, answered after the 202; what becomes of it is in its record.
    record = {{"id", random_id("ask_")}, {"object", "ask.task"}, {"tenant", call.tenant}, {"status", "queued"},
              {"collection", ask.collection->name}, {"conversation_id", ask.conversation_id}, {"created_at", unix_seconds()}};
    ok_or_throw(context.ask_tasks->put(record));
    auto accepted = json_response(202, task_json(record));
    accepted.headers.emplace_back("Location", "/v1/tasks/" + record["id"].get<std::string>());
    call.responder->send(std::move(accepted));
    record["status"] = "running";
    keep(context, record);
    try {
      run();
    } catch (const ApiError& e) {
      record["error"] = error_json(e)["error"];
      record["status"] = "failed";
    } catch (const std::exception& e) {
      record["error"] = error_json(ApiError{500, "internal", e.what()})["error"];
      record["status"] = "failed";
    }
    record["finished_at"] = unix_seconds();
    keep(context, record);
  });

  router.add("GET", "/v1/tasks/{id}", [&context](Call& call) {
    const std::string& id = call.request.path_params.at("id");
    auto record = value_or_throw(context.ask_tasks->get(id));
    // Another tenant's task is as absent as one that never was.
    if (!record || record->value("tenant", "") != call.tenant) {
      throw ApiError{404, "not_found", "no task '" + id + "' (tasks are kept an hour after they finish)"};
    }
    call.responder->send(json_response(200, task_json(*record)));
  });
}

}  // namespace kotae::server
