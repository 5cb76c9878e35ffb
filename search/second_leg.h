#pragma once
// Runs one leg of a search beside the caller's own without starting a thread for it: the leg is handed
// to a small pool of long-lived threads (one per core but the caller's), and when the caller has
// finished its own leg and no pool thread has started this one yet (all busy with other queries), the
// caller takes it back and runs it itself. So an idle machine runs both legs at once (hybrid search at
// 100k chunks: the two in-memory legs take 0.5 to 0.6 ms each), and a loaded one never waits in a queue
// for what it could do at once.

#include <functional>
#include <memory>

namespace kotae::search {

class SecondLeg {
 public:
  // Offers `work` to the pool; it runs there, or in join() on the caller's thread.
  explicit SecondLeg(std::function<void()> work);
  // Waits for the work to be done, running it here if no pool thread has taken it.
  void join();
  ~SecondLeg();  // joins
  SecondLeg(const SecondLeg&) = delete;
  SecondLeg& operator=(const SecondLeg&) = delete;

  struct State;

 private:
  std::shared_ptr<State> state_;
  bool joined_ = false;
};

}  // namespace kotae::search
