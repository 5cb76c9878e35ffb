#pragma once
// What the API handlers share: the models, the open collections, the conversations, and the limits the
// server was started with. The models arrive after start-up (readiness); handlers that need them run
// only once `ready` is set.

#include <atomic>
#include <memory>
#include <string>

#include "assembly/collection_registry.h"
#include "assembly/model_pool.h"
#include "jobs/ask_tasks.h"
#include "jobs/ingest_jobs.h"
#include "jobs/queued_jobs.h"
#include "jobs/shared_job_records.h"
#include "rag/answer_cache.h"
#include "server/api_limits.h"
#include "server/audit_recorder.h"
#include "server/busy_conversations.h"
#include "server/document_files.h"
#include "server/router.h"
#include "server/server_metrics.h"
#include "server/web_sessions.h"
#include "server/work_pool.h"
#include "store/conversation_store.h"
#include "store/member_store.h"

namespace kotae::server {

struct ServerContext {
  std::unique_ptr<assembly::ModelPool> models;  // set once, before `ready`
  std::unique_ptr<assembly::CollectionRegistry> collections;
  std::unique_ptr<store::ConversationStore> conversations;  // set at start: SQLite in the data directory, or PostgreSQL
  BusyConversations busy_conversations;                     // those this replica is answering a question of
  std::unique_ptr<DocumentFiles> document_files;            // set at start
  std::unique_ptr<jobs::IngestJobs> jobs;
  std::shared_ptr<jobs::SharedJobRecords> shared_jobs;  // over a shared store: every replica's jobs
  std::shared_ptr<jobs::QueuedJobs> queued_jobs;        // with a work queue: uploads go to the workers
  std::shared_ptr<queue::WorkQueuePool> answer_queues;  // with a work queue: answer tasks (for /metrics)
  std::shared_ptr<jobs::AskTasks> ask_tasks;            // set at start: questions asked with "async"
  std::unique_ptr<rag::AnswerCache> answer_cache;
  std::unique_ptr<AuditRecorder> audit;         // set at start
  std::shared_ptr<store::MemberStore> members;  // set at start: who may use which collection
  WebSessions* sessions = nullptr;              // with sign-in configured
  ServerMetrics metrics;
  WorkPool* work = nullptr;  // for its queue gauges, and where continuations of model work run
  ApiLimits limits;
  std::atomic<bool> ready{false};

  // Where a model's callback hands on work that must not run on the model's thread: the work pool, or
  // the caller when its queue is full (a continuation is never dropped).
  rag::Executor continuations() {
    return [this](std::function<void()> task) {
      if (!work || !work->try_post(task)) task();
    };
  }
};

void add_health_routes(Router& router, ServerContext& context);
void add_collection_routes(Router& router, ServerContext& context);
void add_document_routes(Router& router, ServerContext& context);
void add_search_routes(Router& router, ServerContext& context);
void add_ask_routes(Router& router, ServerContext& context);
void add_openai_routes(Router& router, ServerContext& context);
void add_rerank_routes(Router& router, ServerContext& context);
void add_tei_routes(Router& router, ServerContext& context);
void add_job_routes(Router& router, ServerContext& context);
void add_conversation_routes(Router& router, ServerContext& context);
void add_audit_routes(Router& router, ServerContext& context);
void add_member_routes(Router& router, ServerContext& context);
void add_session_routes(Router& router, ServerContext& context);
void add_web_routes(Router& router);

}  // namespace kotae::server
