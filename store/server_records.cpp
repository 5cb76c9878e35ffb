#include "store/server_records.h"

#include "store/folder_document_files.h"
#include "store/postgres_api_keys.h"
#include "store/postgres_audit_trail.h"
#include "store/postgres_conversations.h"
#include "store/postgres_document_files.h"
#include "store/postgres_members.h"
#include "store/postgres_sessions.h"
#include "store/sqlite_api_keys.h"
#include "store/sqlite_audit_trail.h"
#include "store/sqlite_conversations.h"
#include "store/sqlite_job_records.h"
#include "store/sqlite_members.h"
#include "store/sqlite_sessions.h"

namespace kotae::store {

Result<ServerRecords> open_server_records(Catalog& catalog, const std::filesystem::path& folder,
                                          std::size_t conversations_per_tenant) {
  ServerRecords records;
  records.own_jobs = KOTAE_TRY_VALUE(SqliteJobRecords::open(folder));
  if (catalog.shared()) {
    records.shared_pool = std::make_shared<PgPool>(catalog.url());
    records.conversations = std::make_unique<PostgresConversations>(records.shared_pool, conversations_per_tenant);
    records.api_keys = std::make_shared<PostgresApiKeys>(records.shared_pool);
    records.document_files = std::make_shared<PostgresDocumentFiles>(records.shared_pool);
    records.audit = std::make_shared<PostgresAuditTrail>(records.shared_pool);
    records.members = std::make_shared<PostgresMembers>(records.shared_pool);
    records.sessions = std::make_shared<PostgresSessions>(records.shared_pool);
  } else {
    records.conversations = KOTAE_TRY_VALUE(SqliteConversations::open(folder, conversations_per_tenant));
    records.api_keys = KOTAE_TRY_VALUE(SqliteApiKeys::open(folder));
    records.document_files = std::make_shared<FolderDocumentFiles>(catalog);
    records.audit = KOTAE_TRY_VALUE(SqliteAuditTrail::open(folder));
    records.members = KOTAE_TRY_VALUE(SqliteMembers::open(folder));
    records.sessions = KOTAE_TRY_VALUE(SqliteSessions::open(folder));
  }
  return records;
}

}  // namespace kotae::store
