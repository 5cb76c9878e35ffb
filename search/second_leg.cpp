#include "search/second_leg.h"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

namespace kotae::search {

struct SecondLeg::State {
  std::mutex mutex;
  std::condition_variable finished;
  enum class Stage { waiting, running, done } stage = Stage::waiting;
  std::function<void()> work;

  // Runs the work unless someone else has; true when this call ran it.
  bool run() {
    {
      std::lock_guard lock(mutex);
      if (stage != Stage::waiting) return false;
      stage = Stage::running;
    }
    work();
    {
      std::lock_guard lock(mutex);
      stage = Stage::done;
    }
    finished.notify_all();
    return true;
  }
};

namespace {

// Threads for second legs, started once; each takes offered legs and runs the ones not taken back.
class LegPool {
 public:
  static LegPool& instance() {
    // Never destroyed: its threads outlive every static (they wait on wake_ until the process ends).
    static LegPool* pool = new LegPool(std::max(1u, std::thread::hardware_concurrency()) - 1);
    return *pool;
  }
  // false when the pool has no thread (one core): the caller runs the leg.
  bool offer(std::shared_ptr<SecondLeg::State> leg) {
    if (threads_.empty()) return false;
    {
      std::lock_guard lock(mutex_);
      offered_.push_back(std::move(leg));
    }
    wake_.notify_one();
    return true;
  }

 private:
  explicit LegPool(unsigned threads) {
    for (unsigned i = 0; i < threads; ++i) {
      threads_.emplace_back([this] {
        for (;;) {
          std::shared_ptr<SecondLeg::State> leg;
          {
            std::unique_lock lock(mutex_);
            wake_.wait(lock, [&] { return !offered_.empty(); });
            leg = std::move(offered_.front());
            offered_.pop_front();
          }
          leg->run();  // nothing to do when the caller took it back
        }
      });
      threads_.back().detach();
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::shared_ptr<SecondLeg::State>> offered_;
  std::vector<std::thread> threads_;
};

}  // namespace

SecondLeg::SecondLeg(std::function<void()> work) : state_(std::make_shared<State>()) {
  state_->work = std::move(work);
  LegPool::instance().offer(state_);
}

void SecondLeg::join() {
  if (joined_) return;
  joined_ = true;
  if (state_->run()) return;
  std::unique_lock lock(state_->mutex);
  state_->finished.wait(lock, [&] { return state_->stage == State::Stage::done; });
}

SecondLeg::~SecondLeg() {
  join();
}

}  // namespace kotae::search
