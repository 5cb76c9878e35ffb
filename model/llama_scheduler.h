#pragma once
// Continuous batching over one llama.cpp context, in the manner of llama.cpp's own server: the context
// holds N sequences (slots), and one thread owns it. Requests wait in a bounded queue; each step, that
// thread gives free slots to waiting requests, then advances every active slot in one llama_decode: a
// token for each slot that is generating, and a chunk of each new prompt in the room the batch has
// left, so a long prompt never stalls the answers already streaming. Each slot samples on its own.
//
// A slot keeps its tokens' KV cache when its request ends. A new request goes to the idle slot whose
// cached tokens share the longest prefix with its prompt, among those its owner left and whose tokens
// it mostly goes on from (a follow-up decodes only what is new, even when other conversations ran
// meanwhile); else to the idle slot used least recently, cleared first when another owner left it.

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "model/generator.h"

struct llama_batch;
struct llama_context;
struct llama_vocab;

namespace kotae {

struct SequenceRequest {
  std::vector<std::int32_t> prompt;  // the chat-formatted prompt's tokens; shorter than a slot's context
  GenerationOptions options;
  TokenCallback on_piece;  // on the scheduler's thread; false cancels
  GenerationDone on_done;  // on the scheduler's thread (or the caller's, when refused at once)
  std::shared_ptr<std::atomic<bool>> cancelled = {};  // set by anyone: the slot is freed at the next step
};

struct SchedulerOptions {
  int slots = 1;
  int batch = 512;              // tokens decoded per step, all slots together
  std::size_t max_queued = 64;  // requests waiting for a slot; more are refused as overloaded
  bool reuse_prefix = true;     // off: every prompt is decoded whole (benchmarks)
  // Added to the scheduler's thread's nice value (and so its compute threads', which it starts): on
  // a shared machine, quick requests (embeddings, searches) then go before the next decode step.
  int niceness = 0;
};

struct SchedulerStats {
  std::size_t active = 0, queued = 0;
};

class LlamaScheduler {
 public:
  // Borrows the context, which must hold options.slots sequences and outlive the scheduler.
  LlamaScheduler(llama_context* context, const llama_vocab* vocab, SchedulerOptions options);
  ~LlamaScheduler();  // answers what waits and what runs (cancelled), then joins
  LlamaScheduler(const LlamaScheduler&) = delete;
  LlamaScheduler& operator=(const LlamaScheduler&) = delete;

  void submit(SequenceRequest request);
  // Forgets every idle slot's cache; returns once done.
  void clear_cache();
  SchedulerStats stats() const;
  std::size_t slot_context() const { return slot_context_; }

 private:
  struct Slot;
  void run();
  bool admit();
  void step(llama_batch& batch);
  void finish(Slot& slot, std::string finish_reason);
  void fail(Slot& slot, const Error& error);
  GenerationDone release(Slot& slot);  // frees the slot; returns its request's on_done, still to call

  llama_context* context_;
  const llama_vocab* vocab_;
  SchedulerOptions options_;
  std::size_t slot_context_;
  std::vector<std::unique_ptr<Slot>> slots_;  // touched by the scheduler's thread only
  std::uint64_t tick_ = 0;                    // orders slots by last use

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<SequenceRequest> queue_;
  std::size_t active_ = 0;
  std::uint64_t clears_asked_ = 0, clears_done_ = 0;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace kotae
