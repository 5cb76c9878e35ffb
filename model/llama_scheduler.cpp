#include "model/llama_scheduler.h"

#include <llama.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <optional>
#include <random>

#include "core/assert.h"
#include "model/stop_sequence_filter.h"

namespace kotae {
namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// Calls a request's on_done; what it throws stays here, for the thread serves every other request too.
void answer(const GenerationDone& done, Result<Generation> result) {
  try {
    done(std::move(result));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kotae: a generation's completion failed: %s\n", e.what());
  }
}

// How often a running request's `wanted` probe is asked (it may peek at a socket).
constexpr auto kProbePeriod = std::chrono::milliseconds(250);

llama_token argmax(const float* logits, int n) {
  KOTAE_ASSERT(logits != nullptr);  // every row asked for has logits
  return static_cast<llama_token>(std::max_element(logits, logits + n) - logits);
}

using Sampler = std::unique_ptr<llama_sampler, decltype(&llama_sampler_free)>;

// Top-p, then temperature, then a draw; null for greedy, which needs no candidate list (the sampler
// would copy every logit, 262k for Gemma, per token).
Sampler make_sampler(const GenerationOptions& options) {
  if (options.temperature <= 0.0f) return Sampler(nullptr, &llama_sampler_free);
  auto params = llama_sampler_chain_default_params();
  params.no_perf = true;
  Sampler chain(llama_sampler_chain_init(params), &llama_sampler_free);
  llama_sampler_chain_add(chain.get(), llama_sampler_init_top_p(options.top_p, 1));
  llama_sampler_chain_add(chain.get(), llama_sampler_init_temp(options.temperature));
  llama_sampler_chain_add(chain.get(), llama_sampler_init_dist(options.seed ? *options.seed : std::random_device{}()));
  return chain;
}

}  // namespace

struct LlamaScheduler::Slot {
  explicit Slot(llama_seq_id id) : seq(id) {}

  const llama_seq_id seq;
  std::vector<llama_token> cached;  // the tokens whose KV cache this sequence holds, in order
  std::string owner;                // GenerationOptions::cache_owner of the request that left them
  std::uint64_t last_used = 0;

  // The request it serves, while busy.
  bool busy = false;
  SequenceRequest request;
  Clock::time_point start, first_token, next_probe;
  std::size_t prompt_at = 0;  // the next prompt token to decode
  bool generating = false;    // the prompt is decoded; `next` is the token to decode at the next step
  llama_token next = 0;
  int logits_row = -1;  // its row of logits in the batch just decoded
  std::size_t max_tokens = 0;
  Sampler sampler{nullptr, &llama_sampler_free};
  std::optional<StopSequenceFilter> filter;
  Generation result;

  bool emit(const std::string& text) {
    if (text.empty()) return true;
    result.text += text;
    try {
      return !request.on_piece || request.on_piece(text);
    } catch (const std::exception&) {
      return false;  // a callback that throws cancels its request, never the scheduler's thread
    }
  }
};

LlamaScheduler::LlamaScheduler(llama_context* context, const llama_vocab* vocab, SchedulerOptions options)
    : context_(context), vocab_(vocab), options_(options), slot_context_(llama_n_ctx_seq(context)) {
  KOTAE_ASSERT(options_.slots >= 1 && static_cast<std::uint32_t>(options_.slots) <= llama_n_seq_max(context));
  options_.batch = std::min(options_.batch, static_cast<int>(llama_n_batch(context)));
  KOTAE_ASSERT(options_.batch > options_.slots);  // room for every slot's token and some prompt
  for (int i = 0; i < options_.slots; ++i) slots_.push_back(std::make_unique<Slot>(i));
  thread_ = std::thread([this] { run(); });
}

LlamaScheduler::~LlamaScheduler() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void LlamaScheduler::submit(SequenceRequest request) {
  std::size_t waiting = 0;
  {
    std::lock_guard lock(mutex_);
    waiting = queue_.size();
    if (!stopping_ && waiting < options_.max_queued) {
      queue_.push_back(std::move(request));
      waiting = SIZE_MAX;
    }
  }
  if (waiting == SIZE_MAX) return wake_.notify_all();
  request.on_done(make_error(ErrorCode::overloaded, "the model is busy: " + std::to_string(waiting) +
                                                        " requests wait for one of its " +
                                                        std::to_string(slots_.size()) + " slots; retry shortly"));
}

void LlamaScheduler::clear_cache() {
  std::unique_lock lock(mutex_);
  const auto asked = ++clears_asked_;
  wake_.notify_all();
  wake_.wait(lock, [&] { return clears_done_ >= asked || stopping_; });
}

SchedulerStats LlamaScheduler::stats() const {
  std::lock_guard lock(mutex_);
  return {active_, queue_.size()};
}

void LlamaScheduler::run() {
  // Before the first decode starts the thread's OpenMP team, which inherits the value.
  if (options_.niceness > 0) ::setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()), options_.niceness);
  llama_memory_t memory = llama_get_memory(context_);
  llama_batch batch = llama_batch_init(options_.batch, 0, 1);
  while (true) {
    bool clear = false;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || !queue_.empty() || active_ > 0 || clears_asked_ != clears_done_; });
      if (stopping_) break;
      clear = clears_asked_ != clears_done_;
    }
    if (clear) {
      for (auto& slot : slots_) {
        if (slot->busy) continue;
        llama_memory_seq_rm(memory, slot->seq, -1, -1);
        slot->cached.clear();
      }
      {
        std::lock_guard lock(mutex_);
        clears_done_ = clears_asked_;
      }
      wake_.notify_all();
    }
    if (admit()) step(batch);
  }
  llama_batch_free(batch);

  std::deque<SequenceRequest> left;
  {
    std::lock_guard lock(mutex_);
    left.swap(queue_);
  }
  const Error stopped{ErrorCode::stopped, "the model was unloaded before it answered"};
  for (auto& request : left) answer(request.on_done, stopped);
  for (auto& slot : slots_) {
    if (slot->busy) fail(*slot, stopped);
  }
  wake_.notify_all();  // a clear_cache waiting
}

// Gives idle slots to waiting requests; true when any slot has work.
bool LlamaScheduler::admit() {
  std::vector<SequenceRequest> taken;
  {
    std::lock_guard lock(mutex_);
    const auto idle =
        static_cast<std::size_t>(std::count_if(slots_.begin(), slots_.end(), [](const auto& s) { return !s->busy; }));
    while (taken.size() < idle && !queue_.empty()) {
      taken.push_back(std::move(queue_.front()));
      queue_.pop_front();
    }
    active_ += taken.size();
  }
  llama_memory_t memory = llama_get_memory(context_);
  for (auto& request : taken) {
    const std::string owner = request.options.cache_owner;
    const auto& asked = request.prompt;
    // The longest prefix the owner left in an idle slot; else the idle slot used least recently.
    Slot* chosen = nullptr;
    std::size_t keep = 0;
    for (auto& slot : slots_) {
      if (slot->busy || !options_.reuse_prefix || slot->owner != owner || asked.empty()) continue;
      // At least the last prompt token is decoded again: its logits start the answer.
      const auto limit = std::min(slot->cached.size(), asked.size() - 1);
      std::size_t shared = 0;
      while (shared < limit && slot->cached[shared] == asked[shared]) ++shared;
      // Only a request that goes on from most of what a slot holds takes it: a new conversation that
      // shares just the chat template's opening would wipe out another's cache for a few tokens.
      if (shared > keep && 2 * shared >= slot->cached.size()) keep = shared, chosen = slot.get();
    }
    if (!chosen) {
      for (auto& slot : slots_) {
        if (!slot->busy && (!chosen || slot->last_used < chosen->last_used)) chosen = slot.get();
      }
    }
    KOTAE_ASSERT(chosen != nullptr);
    Slot& slot = *chosen;
    if (keep == 0 || !llama_memory_seq_rm(memory, slot.seq, static_cast<llama_pos>(keep), -1)) {
      llama_memory_seq_rm(memory, slot.seq, -1, -1);  // another owner's tokens never serve this one
      keep = 0;
    }
    slot.cached.resize(keep);
    slot.owner = owner;
    slot.busy = true;
    slot.request = std::move(request);
    const auto& prompt = slot.request.prompt;
    slot.start = slot.next_probe = Clock::now();
    slot.first_token = {};
    slot.prompt_at = keep;
    slot.generating = false;
    slot.logits_row = -1;
    slot.result = {};
    slot.result.stats.prompt_tokens = prompt.size();
    slot.result.stats.reused_prompt_tokens = keep;
    slot.result.stats.finish_reason = "length";
    if (prompt.empty() || prompt.size() >= slot_context_) {
      fail(slot, {ErrorCode::invalid_argument, "the prompt has " + std::to_string(prompt.size()) +
                                                   " tokens; a slot of the model's context holds " +
                                                   std::to_string(slot_context_)});
      continue;
    }
    const auto& o = slot.request.options;
    slot.max_tokens = std::min(static_cast<std::size_t>(std::max(o.max_tokens, 0)), slot_context_ - prompt.size());
    slot.sampler = make_sampler(o);
    slot.filter.emplace(o.stop);
  }
  return std::any_of(slots_.begin(), slots_.end(), [](const auto& s) { return s->busy; });
}

// One llama_decode for every busy slot: each generating slot's next token first, then prompt chunks in
// the room left. Then each slot whose row of logits came back samples its next token.
void LlamaScheduler::step(llama_batch& batch) {
  const auto now = Clock::now();
  for (auto& slot : slots_) {  // cancelled, or its client went away
    if (!slot->busy) continue;
    const auto& r = slot->request;
    bool gone = r.cancelled && r.cancelled->load();
    if (!gone && r.options.wanted && now >= slot->next_probe) {
      slot->next_probe = now + kProbePeriod;
      gone = !r.options.wanted();
    }
    if (gone) finish(*slot, "cancelled");
  }

  batch.n_tokens = 0;
  std::vector<Slot*> in_batch;
  auto add = [&](Slot& slot, llama_token token, bool logits) {
    const int i = batch.n_tokens++;
    batch.token[i] = token;
    batch.pos[i] = static_cast<llama_pos>(slot.cached.size());
    batch.n_seq_id[i] = 1;
    batch.seq_id[i][0] = slot.seq;
    batch.logits[i] = logits;
    if (logits) slot.logits_row = i;
    slot.cached.push_back(token);
  };
  for (auto& slot : slots_) {
    if (!slot->busy || !slot->generating) continue;
    add(*slot, slot->next, true);
    in_batch.push_back(slot.get());
  }
  for (auto& slot : slots_) {
    const int room = options_.batch - batch.n_tokens;
    if (!slot->busy || slot->generating || room <= 0) continue;
    const auto& prompt = slot->request.prompt;
    const std::size_t end = std::min(prompt.size(), slot->prompt_at + static_cast<std::size_t>(room));
    for (; slot->prompt_at < end; ++slot->prompt_at)
      add(*slot, prompt[slot->prompt_at], slot->prompt_at + 1 == prompt.size());
    in_batch.push_back(slot.get());
  }
  if (batch.n_tokens == 0) return;

  if (const int rc = llama_decode(context_, batch); rc != 0) {
    const Error error{ErrorCode::model, "llama_decode failed with code " + std::to_string(rc)};
    for (Slot* slot : in_batch) fail(*slot, error);
    return;
  }

  const int vocab_size = llama_vocab_n_tokens(vocab_);
  char piece[256];
  for (Slot* slot_pointer : in_batch) {
    Slot& slot = *slot_pointer;
    if (slot.logits_row < 0) continue;  // a prompt with chunks still to come
    const int row = std::exchange(slot.logits_row, -1);
    if (!slot.generating) {
      slot.generating = true;
      slot.first_token = Clock::now();
      slot.result.stats.prompt_ms = ms_since(slot.start);
    }
    auto& stats = slot.result.stats;
    if (stats.generated_tokens >= slot.max_tokens) {
      finish(slot, "length");
      continue;
    }
    const llama_token token = slot.sampler ? llama_sampler_sample(slot.sampler.get(), context_, row)
                                           : argmax(llama_get_logits_ith(context_, row), vocab_size);
    if (!slot.request.options.ignore_end_of_turn && llama_vocab_is_eog(vocab_, token)) {
      finish(slot, "stop");
      continue;
    }
    ++stats.generated_tokens;
    const int n = llama_token_to_piece(vocab_, token, piece, sizeof piece, 0, false);
    const bool keep_going =
        slot.emit(slot.filter->push(std::string_view(piece, n > 0 ? static_cast<std::size_t>(n) : 0)));
    if (slot.filter->stopped()) {
      finish(slot, "stop");
    } else if (!keep_going) {
      finish(slot, "cancelled");
    } else if (stats.generated_tokens >= slot.max_tokens) {
      finish(slot, "length");  // its last token needs no decoding
    } else {
      slot.next = token;
    }
  }
}

void LlamaScheduler::finish(Slot& slot, std::string finish_reason) {
  slot.result.stats.finish_reason = std::move(finish_reason);
  if (slot.result.stats.finish_reason != "cancelled") slot.emit(slot.filter->finish());
  if (slot.first_token != Clock::time_point{}) slot.result.stats.generation_ms = ms_since(slot.first_token);
  auto result = std::move(slot.result);
  answer(release(slot), std::move(result));
}

void LlamaScheduler::fail(Slot& slot, const Error& error) {
  llama_memory_seq_rm(llama_get_memory(context_), slot.seq, -1, -1);
  slot.cached.clear();
  answer(release(slot), error);
}

GenerationDone LlamaScheduler::release(Slot& slot) {
  auto done = std::move(slot.request.on_done);
  slot.busy = false;
  slot.request = {};
  slot.sampler.reset();
  slot.last_used = ++tick_;
  {
    std::lock_guard lock(mutex_);
    --active_;
  }
  return done;
}

}  // namespace kotae
