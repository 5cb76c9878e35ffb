#include "store/sqlite_change_follower.h"

#include "store/sqlite_schema.h"

namespace kotae::store {
namespace {
// How often data_version is read: a commit is heard within this, and a stop waits at most this.
constexpr std::chrono::milliseconds kPoll{50};
}  // namespace

Result<std::unique_ptr<SqliteChangeFollower>> SqliteChangeFollower::start(const std::filesystem::path& folder,
                                                                          std::chrono::milliseconds period,
                                                                          std::function<void()> on_change) {
  std::error_code ignored;  // a folder that cannot be made is said by the open that follows
  std::filesystem::create_directories(folder, ignored);
  auto db = KOTAE_TRY_VALUE(Database::open(server_database_file(folder), Database::Mode::read_write_create,
                                           /*query_only=*/true));
  return std::unique_ptr<SqliteChangeFollower>(new SqliteChangeFollower(std::move(db), period, std::move(on_change)));
}

SqliteChangeFollower::SqliteChangeFollower(std::unique_ptr<Database> db, std::chrono::milliseconds period,
                                           std::function<void()> on_change)
    : db_(std::move(db)), period_(period), on_change_(std::move(on_change)), thread_([this] { run(); }) {}

SqliteChangeFollower::~SqliteChangeFollower() {
  stopping_ = true;
  thread_.join();
}

void SqliteChangeFollower::run() {
  using clock = std::chrono::steady_clock;
  auto read_version = [this] { return db_->query_int64("PRAGMA data_version"); };
  auto seen = read_version();
  auto next_call = clock::now() + period_;
  while (!stopping_) {
    std::this_thread::sleep_for(kPoll);
    if (stopping_) break;
    auto now = read_version();
    const bool heard = now && seen && *now != *seen;
    if (heard) ++notifications_;
    if (now) seen = std::move(now);
    if (heard || clock::now() >= next_call) {
      on_change_();
      next_call = clock::now() + period_;
    }
  }
}

}  // namespace kotae::store
