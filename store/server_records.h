#pragma once
// What a server keeps besides the collections, opened in the back-end its collections are in: the
// conversations, the API keys kept beside the --api-keys file, the records of the ingestion jobs it
// runs itself, the uploads' kept files, and (PostgreSQL) the connections every replica shares.
// server/ asks for them here and never names a back-end.

#include <cstddef>
#include <filesystem>
#include <memory>

#include "core/result.h"
#include "store/api_key_store.h"
#include "store/audit_trail.h"
#include "store/catalog.h"
#include "store/conversation_store.h"
#include "store/document_file_store.h"
#include "store/job_record_store.h"
#include "store/member_store.h"
#include "store/postgres_connection.h"
#include "store/session_store.h"

namespace kotae::store {

struct ServerRecords {
  std::unique_ptr<ConversationStore> conversations;
  std::shared_ptr<ApiKeyStore> api_keys;
  // The jobs this process runs, in FOLDER/server.db whatever the back-end: their files are on this
  // machine's disk, so only this machine resumes them.
  std::shared_ptr<JobRecordStore> own_jobs;
  std::shared_ptr<DocumentFileStore> document_files;  // the uploads' originals, once indexed
  std::shared_ptr<AuditTrail> audit;                  // who did what: every replica's, over PostgreSQL
  std::shared_ptr<MemberStore> members;               // who may use which collection
  std::shared_ptr<SessionStore> sessions;             // signed-in people, and sign-ins under way
  std::shared_ptr<PgPool> shared_pool;                // PostgreSQL: every replica's jobs, the work queue
};

// `folder`: where the SQLite back-end's server.db goes (the --store folder, else the data directory).
Result<ServerRecords> open_server_records(Catalog& catalog, const std::filesystem::path& folder,
                                          std::size_t conversations_per_tenant);

}  // namespace kotae::store
