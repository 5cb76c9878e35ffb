#include "store/change_follower.h"

#include "store/catalog.h"
#include "store/postgres_change_follower.h"
#include "store/sqlite_change_follower.h"

namespace kotae::store {

Result<std::unique_ptr<ChangeFollower>> follow_changes(const Catalog& catalog, const std::filesystem::path& folder,
                                                       std::chrono::milliseconds period,
                                                       std::function<void()> on_change) {
  if (catalog.shared()) {
    return std::unique_ptr<ChangeFollower>(new PostgresChangeFollower(catalog.url(), period, std::move(on_change)));
  }
  return std::unique_ptr<ChangeFollower>(
      KOTAE_TRY_VALUE(SqliteChangeFollower::start(folder, period, std::move(on_change))));
}

}  // namespace kotae::store
