#include "store/postgres_change_follower.h"

#include <algorithm>
#include <memory>

#include "store/postgres_connection.h"
#include "store/postgres_record_store.h"

namespace kotae::store {

namespace {
// How long one wait for notifications lasts: the longest a stop waits.
constexpr std::chrono::milliseconds kWaitSlice{200};
}  // namespace

PostgresChangeFollower::PostgresChangeFollower(std::string url, std::chrono::milliseconds period,
                                               std::function<void()> on_change)
    : url_(std::move(url)), period_(period), on_change_(std::move(on_change)), thread_([this] { run(); }) {}

PostgresChangeFollower::~PostgresChangeFollower() {
  stopping_ = true;
  thread_.join();
}

void PostgresChangeFollower::run() {
  using clock = std::chrono::steady_clock;
  std::unique_ptr<PgConnection> connection;
  auto next_check = clock::now() + period_;
  while (!stopping_) {
    if (connection == nullptr || connection->broken()) {
      connection.reset();
      auto connected = PgConnection::connect(url_);
      if (connected && (*connected)->execute(std::string("LISTEN ") + kChangeChannel)) {
        connection = std::move(*connected);
        on_change_();  // whatever was announced while nobody listened
        next_check = clock::now() + period_;
      }
    }
    bool heard = false;
    if (connection != nullptr) {
      auto arrived = connection->wait_for_notifications(kWaitSlice);
      if (arrived && !arrived->empty()) {
        notifications_ += arrived->size();
        heard = true;
      }
    } else {
      std::this_thread::sleep_for(kWaitSlice);  // down: try again shortly
    }
    if (stopping_) break;
    if (heard || clock::now() >= next_check) {
      on_change_();
      next_check = clock::now() + period_;
    }
  }
}

}  // namespace kotae::store
