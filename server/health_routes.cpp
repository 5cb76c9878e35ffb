// GET /healthz (the process answers), GET /readyz (models loaded and warmed up), GET /metrics
// (Prometheus), GET /openapi.json.

#include "queue/queue_metrics.h"
#include "server/api_error.h"
#include "server/openapi_document.h"
#include "server/redaction.h"
#include "server/server_context.h"

namespace kotae::server {

void add_health_routes(Router& router, ServerContext& context) {
  const RouteOptions open{.quick = true, .access = Access::open};
  router.add(
      "GET", "/healthz",
      [](Call& call) {
        call.responder->send(json_response(200, {{"status", "ok"}}));
      },
      open);

  router.add(
      "GET", "/readyz",
      [&context](Call& call) {
        if (!context.ready.load()) return call.responder->send(json_response(503, {{"status", "loading"}}));
        nlohmann::json embedders = nlohmann::json::array(), backends = nlohmann::json::array();
        for (const auto& e : context.models->embedders())
          embedders.push_back({{"model", e.model}, {"id", e.id}, {"provider", e.provider}, {"precision", e.precision}});
        nlohmann::json answers_with = nullptr;  // the back-end a question goes to first: a failed one is passed over
        for (const auto& b : context.models->backends().order) {
          const bool available = b.answerer != nullptr;
          if (available && answers_with.is_null()) answers_with = b.name;
          backends.push_back({{"name", b.name},
                              {"available", available},
                              {"reason", call.admin ? b.unavailable : redact_locations(b.unavailable)}});
        }
        call.responder->send(json_response(
            200,
            {{"status", "ready"}, {"embedders", embedders}, {"backends", backends}, {"answers_with", answers_with}}));
      },
      open);

  router.add("GET", "/metrics",
             [&context](Call& call) {
               // Queue gauges are read now, not when something last changed them.
               if (context.work) context.metrics.set_work_queue(context.work->queued(), context.work->busy());
               if (context.audit) context.metrics.set_audit_dropped(context.audit->dropped());
               if (context.ready.load()) {
                 for (const auto& e : context.models->embedders())
                   context.metrics.set_batch_queue(e.model, e.queue_depth);
                 if (const auto* service = context.models->rerank_service())
                   context.metrics.set_rerank_service(service->stats());
               }
               std::string text = context.metrics.text();
               // The work queues' figures; with Redis unreachable they are left out, the rest still served.
               std::vector<queue::NamedQueueStats> queues;
               for (const auto& pool :
                    {context.queued_jobs ? context.queued_jobs->queues() : nullptr, context.answer_queues}) {
                 if (!pool) continue;
                 if (auto figures = pool->stats()) queues.push_back({pool->options().name, std::move(*figures)});
               }
               text += queue::queue_metrics_text(queues);
               call.responder->send({200, "text/plain; version=0.0.4; charset=utf-8", std::move(text), {}});
             },
             {.quick = true, .access = Access::admin});

  router.add(
      "GET", "/openapi.json",
      [](Call& call) {
        call.responder->send({200, "application/json", std::string(openapi_document()), {}});
      },
      open);
}

}  // namespace kotae::server
