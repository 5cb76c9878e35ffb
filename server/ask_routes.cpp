// POST /v1/ask {question, collection, conversation_id?, backends?, k?, mode?, rerank?, filters?,
//               min_relevance?, max_tokens?, temperature?, top_p?, seed?, stop?, stream?, async?}
// With "stream": true the answer comes as Server-Sent Events: sources, token..., (restart), citations,
// timings, done (the whole answer); an error after the stream began is an "error" event.
// With "async": true the answer is 202 {id, status}; GET /v1/tasks/{id} (on any replica, with a work
// queue) gives the status, then the answer as POST /v1/ask returns it (jobs/ask_tasks.h).
// Each answered question is a turn of its conversation (conversation_id; a new one without it), stored
// before the answer goes out (store/conversation_store.h), so a follow-up may go to any replica, at
// any later time.

#include <chrono>
#include <optional>

#include "core/log.h"
#include "core/random_id.h"
#include "rag/answer_json.h"
#include "server/ask_request.h"
#include "server/conversation_record.h"
#include "server/conversation_request.h"
#include "server/json_body.h"
#include "server/search_request.h"
#include "server/server_context.h"

namespace kotae::server {

namespace {

struct AskCall {
  std::string question;
  store::ConversationOwner owner{""};
  std::shared_ptr<assembly::ServedCollection> collection;
  bool follow_up = false;           // a conversation_id was given
  ConversationRecord conversation;  // as stored before this question (a new one: its id alone)
  rag::Conversation history;        // what the question builds on, rebuilt from the stored turns
  rag::AnswerOptions options;
  std::vector<rag::AnswerBackend> backends;

  const std::string& conversation_id() const { return conversation.summary.id; }
};

AskCall read_ask(const nlohmann::json& body, const Call& call, ServerContext& context) {
  auto request = read_ask_request(body, context.limits, context.models->backends().order);
  AskCall ask;
  ask.question = std::move(request.question);
  ask.owner = conversation_owner(call);
  ask.collection = value_or_throw(context.collections->get(call.tenant, request.collection));
  check_filter_fields(ask.collection->store->check_filter(request.options.search.filter));
  ask.options = std::move(request.options);
  ask.backends = std::move(request.backends);
  ask.follow_up = !request.conversation_id.empty();
  ask.conversation.summary.id = ask.follow_up ? conversation_id(request.conversation_id) : random_id("conv_");
  ask.conversation.summary.collection = ask.collection->name;
  return ask;
}

// A follow-up's conversation from the store (whichever replica answered before, whenever), and the
// history its question builds on.
void load_conversation(AskCall& ask, ServerContext& context) {
  const std::string& id = ask.conversation_id();
  auto stored = value_or_throw(context.conversations->get(ask.owner, id));
  if (!stored) throw unknown_conversation(id);
  if (stored->summary.collection != ask.collection->name) {
    throw bad_request("conversation '" + id + "' is about collection '" + stored->summary.collection + "'");
  }
  if (stored->summary.turns >= store::ConversationStore::kMaxTurns) {
    throw bad_request("conversation '" + id + "' has " + std::to_string(stored->summary.turns) +
                      " turns, the most one may have: start a new one");
  }
  if (const std::size_t bytes = stored->turns.dump().size(); bytes >= store::ConversationStore::kMaxStoredBytes) {
    throw bad_request("conversation '" + id + "' holds " + std::to_string(bytes) +
                      " bytes, the most one may: start a new one");
  }
  ask.history = value_or_throw(conversation_history(stored->turns));
  ask.conversation = std::move(*stored);
}

// What a client sees of an async question's record: all but the tenant.
nlohmann::json task_json(nlohmann::json record) {
  record.erase("tenant");
  record.erase("actor");
  return record;
}

// An async question's record (jobs/ask_tasks.h), written where every replica reads it.
void keep(ServerContext& context, const nlohmann::json& record) {
  if (auto kept = context.ask_tasks->put(record); !kept) {
    log_event("ask_task_unrecorded", {{"task", record["id"]}, {"reason", kept.error().message}}, LogLevel::warn);
  }
}

// One question at a time per conversation (server/busy_conversations.h): a second one while the first
// is answered is refused (409) rather than left holding a thread until it may go.
class ConversationTurn {
 public:
  ConversationTurn(BusyConversations& busy, std::string tenant, std::string id)
      : busy_(busy), tenant_(std::move(tenant)), id_(std::move(id)) {
    if (!busy_.claim(tenant_, id_)) {
      throw ApiError{409, "conversation_busy", "this conversation is answering another question; ask after it"};
    }
  }
  ~ConversationTurn() { busy_.release(tenant_, id_); }
  ConversationTurn(const ConversationTurn&) = delete;
  ConversationTurn& operator=(const ConversationTurn&) = delete;

 private:
  BusyConversations& busy_;
  std::string tenant_, id_;
};

// A question from the moment its request is read until its answer is sent: the pipeline's callbacks
// hold it, so it outlives the handler that started it.
struct AskInFlight {
  AskCall ask;
  std::unique_ptr<ConversationTurn> turn;
  std::shared_ptr<Responder> out;
  bool streaming = false;  // the event stream has begun (at the first event: its header tells the cache state)
  nlohmann::json record;   // an async question's (jobs/ask_tasks.h)

  nlohmann::json whole(const rag::Answer& a) const {
    auto json = rag::to_json(a, ask.question);
    json["conversation_id"] = ask.conversation_id();
    json["collection"] = ask.collection->name;
    json["cache"] = a.cache;
    return json;
  }
  // The answer as the conversation's next turn, stored before the client hears of it (its follow-up
  // may come at once, to any replica). A turn that cannot be stored is logged; the answer still goes.
  void record_turn(ServerContext& context, const rag::Answer& a) {
    auto& c = ask.conversation;
    const std::size_t before = c.turns.size();
    const double now = unix_seconds();
    c.turns.push_back(turn_json(ask.question, a, now));
    c.summary.turns = c.turns.size();
    c.summary.updated_at = now;
    Result<bool> stored = true;
    if (!ask.follow_up) {
      c.summary.title = title_of_question(ask.question);
      c.summary.created_at = now;
      if (auto created = context.conversations->create(ask.owner, c); !created) stored = created.error();
    } else {
      stored = context.conversations->update_turns(ask.owner, c, before);
    }
    if (!stored || !*stored) {
      log_event("conversation_turn_unrecorded",
                {{"conversation", c.summary.id},
                 {"reason", stored ? "deleted, or answered meanwhile on another replica" : stored.error().message}},
                LogLevel::warn);
    }
  }
  // After the answer: metrics; then, on the work pool (a store's round trip), the turn recorded and the
  // conversation free for its next question before `reply` tells the client.
  static void conclude(ServerContext& context, std::shared_ptr<AskInFlight> q, Result<rag::Answer> a,
                       std::function<void(const Result<rag::Answer>&)> reply) {
    if (a) {
      if (a->cache != "off") context.metrics.cache_lookup(a->cache == "hit");
      context.metrics.answer(*a, a->cache == "hit");
    }
    context.continuations()([&context, q = std::move(q), a = std::move(a), reply = std::move(reply)] {
      if (a) q->record_turn(context, *a);
      q->turn.reset();
      reply(a);
    });
  }
  static rag::AnswerSink events(const std::shared_ptr<AskInFlight>& self) {
    using Kind = rag::AnswerEvent::Kind;
    return [self](const rag::AnswerEvent& e) {
      auto& stream = *self->out;
      if (!std::exchange(self->streaming, true)) stream.begin_events({{"X-Kotae-Cache", e.answer->cache}});
      switch (e.kind) {
        case Kind::sources:
          return stream.event("sources", json_text({{"conversation_id", self->ask.conversation_id()},
                                                    {"sources", rag::sources_json(e.answer->sources)}}));
        case Kind::token: return stream.event("token", json_text({{"text", e.token}}));
        case Kind::restart: return stream.event("restart", "{}");
        case Kind::citations:
          return stream.event("citations", json_text({{"answer", e.answer->text},
                                                      {"citations", rag::citations_json(e.answer->citations)}}));
        case Kind::timings:
          return stream.event("timings", json_text({{"timings_ms", rag::to_json(e.answer->timings)}}));
        case Kind::done: return true;  // the whole answer follows
      }
      return true;
    };
  }
};

}  // namespace

void add_ask_routes(Router& router, ServerContext& context) {
  router.add(
      "POST", "/v1/ask",
      [&context](Call& call) {
        const auto body = parse_json_object(call.request);
        const bool stream = bool_field(body, "stream", false);
        const bool async = bool_field(body, "async", false);
        if (stream && async) throw bad_request("\"stream\" and \"async\" cannot both be true");
        auto q = std::make_shared<AskInFlight>();
        q->ask = read_ask(body, call, context);
        q->out = call.responder;
        auto& ask = q->ask;
        on_behalf_of(ask.options.generation, call, async);
        q->turn = std::make_unique<ConversationTurn>(context.busy_conversations, call.tenant, ask.conversation_id());
        if (ask.follow_up) load_conversation(ask, context);
        // A first question may be answered from the cache (a follow-up depends on its conversation). The
        // scope names the collection as it is now, its generation (this server's changes) and the change-log
        // position it reads, caught up first with what another process (the CLI) committed: a change meanwhile
        // leaves the entry unreachable. (Where the catch-up fails, the search says why, uncached.)
        const auto& c = *ask.collection;
        if (bool_field(body, "cache", true) && c.store->catch_up_before_reading()) {
          ask.options.cache = context.answer_cache.get();
          ask.options.cache_scope = call.tenant + "/" + c.name + "/" + c.instance + "@" +
                                    std::to_string(c.generation.load()) + "." +
                                    std::to_string(c.store->change_position());
        }

        // `done` runs where the answer was finished (a model's thread, or here), once.
        auto answer = [&context, q](rag::AnswerSink sink, rag::AnswerDone done) {
          rag::AnswerPipeline pipeline(*q->ask.collection->encoder, context.models->cross_encoder(), q->ask.backends);
          pipeline.ask_async(q->ask.question, *q->ask.collection->store, q->ask.options, &q->ask.history,
                             std::move(sink), std::move(done), context.continuations());
        };

        if (async) {
          // Accepted now, answered after the 202; what becomes of it is in its record.
          q->record = {{"id", random_id("ask_")},
                       {"object", "ask.task"},
                       {"tenant", call.tenant},
                       {"actor", call.actor},
                       {"status", "queued"},
                       {"collection", ask.collection->name},
                       {"conversation_id", ask.conversation_id()},
                       {"created_at", unix_seconds()}};
          ok_or_throw(context.ask_tasks->put(q->record));
          auto accepted = json_response(202, task_json(q->record));
          accepted.headers.emplace_back("Location", "/v1/tasks/" + q->record["id"].get<std::string>());
          call.responder->send(std::move(accepted));
          q->record["status"] = "running";
          keep(context, q->record);
          return answer({}, [&context, q](Result<rag::Answer> answered) {
            AskInFlight::conclude(context, q, std::move(answered), [&context, q](const Result<rag::Answer>& a) {
              if (a) {
                q->record["answer"] = q->whole(*a);
                q->record["status"] = "succeeded";
              } else {
                q->record["error"] = error_envelope(from_error(a.error()))["error"];
                q->record["status"] = "failed";
              }
              q->record["finished_at"] = unix_seconds();
              keep(context, q->record);
            });
          });
        }
        if (!stream) {
          return answer({}, [&context, q](Result<rag::Answer> answered) {
            AskInFlight::conclude(context, q, std::move(answered), [q](const Result<rag::Answer>& a) {
              if (!a) return q->out->send(error_response(from_error(a.error())));
              auto response = json_response(200, q->whole(*a));
              response.headers.emplace_back("X-Kotae-Cache", a->cache);
              q->out->send(std::move(response));
            });
          });
        }
        answer(AskInFlight::events(q), [&context, q](Result<rag::Answer> answered) {
          AskInFlight::conclude(context, q, std::move(answered), [q](const Result<rag::Answer>& a) {
            if (!q->streaming) {  // failed before its first event: a plain error response, with its status
              if (!a) return q->out->send(error_response(from_error(a.error())));
            }
            if (!a) {
              q->out->event("error", json_text(error_envelope(from_error(a.error()))));
            } else {
              q->out->event("done", json_text(q->whole(*a)));
            }
            q->out->end_events();
          });
        });
      },
      {.audit = "ask", .collection = collection_in_body()});

  router.add("GET", "/v1/tasks/{id}", [&context](Call& call) {
    const std::string& id = call.request.path_params.at("id");
    auto record = value_or_throw(context.ask_tasks->get(id));
    // Another tenant's or another person's task is as absent as one that never was.
    if (!record || record->value("tenant", "") != call.tenant || record->value("actor", call.actor) != call.actor) {
      throw ApiError{404, "not_found", "no task '" + id + "' (tasks are kept an hour after they finish)"};
    }
    call.responder->send(json_response(200, task_json(*record)));
  });
}

}  // namespace kotae::server
