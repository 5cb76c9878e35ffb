#include "model/llama_generator.h"

#include <llama.h>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <thread>

#include "model/llama_runtime.h"
#include "model/llama_scheduler.h"

namespace kotae {
namespace {

bool is_builtin_template(const std::string& name) {
  std::vector<const char*> names(static_cast<std::size_t>(llama_chat_builtin_templates(nullptr, 0)));
  llama_chat_builtin_templates(names.data(), names.size());
  return std::any_of(names.begin(), names.end(), [&](const char* n) { return name == n; });
}

// llama.cpp's chat formatting: negative when the template is not one it knows.
int apply_template(const std::string& tmpl, std::span<const ChatMessage> messages, std::string& out) {
  std::vector<llama_chat_message> chat;
  std::size_t total = 0;
  for (const auto& m : messages) {
    chat.push_back({m.role.c_str(), m.content.c_str()});
    total += m.role.size() + m.content.size();
  }
  out.resize(2 * total + 256);
  int n =
      llama_chat_apply_template(tmpl.c_str(), chat.data(), chat.size(), true, out.data(), static_cast<int>(out.size()));
  if (n > static_cast<int>(out.size())) {
    out.resize(static_cast<std::size_t>(n));
    n = llama_chat_apply_template(tmpl.c_str(), chat.data(), chat.size(), true, out.data(), n);
  }
  out.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  return n;
}

// Bytes of KV cache one token takes in every layer (F16 keys and values).
std::size_t kv_bytes_per_token(const llama_model* model) {
  char arch[64] = {}, value[32] = {};
  llama_model_meta_val_str(model, "general.architecture", arch, sizeof arch);
  const int heads = std::max(llama_model_n_head(model), 1);
  auto head_size = [&](const char* which) {
    const std::string key = std::string(arch) + ".attention." + which;
    if (llama_model_meta_val_str(model, key.c_str(), value, sizeof value) > 0) return std::max(std::atoi(value), 1);
    return std::max(llama_model_n_embd(model) / heads, 1);
  };
  const auto per_layer = static_cast<std::size_t>(std::max(llama_model_n_head_kv(model), 1)) *
                         static_cast<std::size_t>(head_size("key_length") + head_size("value_length")) * 2;
  return per_layer * static_cast<std::size_t>(std::max(llama_model_n_layer(model), 1));
}

// As many slots as fit an eighth of the machine's memory (at most 4 GiB) of KV cache, from 1 to 8.
int auto_slots(const llama_model* model, int context_length) {
  const auto pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  const std::size_t memory =
      pages > 0 && page > 0 ? static_cast<std::size_t>(pages) * static_cast<std::size_t>(page) : (8ull << 30);
  const std::size_t budget = std::min<std::size_t>(memory / 8, 4ull << 30);
  const std::size_t per_slot = kv_bytes_per_token(model) * static_cast<std::size_t>(context_length);
  return static_cast<int>(std::clamp<std::size_t>(budget / std::max<std::size_t>(per_slot, 1), 1, 8));
}

}  // namespace

struct LlamaGenerator::State {
  llama_model* model = nullptr;
  llama_context* context = nullptr;
  const llama_vocab* vocab = nullptr;
  std::string chat_template;  // a built-in name or the model's Jinja text (llama.cpp detects which)
  std::string name;
  std::size_t context_length = 0;
  std::size_t message_overhead = 8;
  std::unique_ptr<LlamaScheduler> scheduler;  // the one thread that runs the context

  ~State() {
    scheduler.reset();  // before the context it runs
    if (context) llama_free(context);
    if (model) llama_model_free(model);
  }
};

LlamaGenerator::LlamaGenerator(std::unique_ptr<State> state) : state_(std::move(state)) {}
LlamaGenerator::~LlamaGenerator() = default;

Result<std::unique_ptr<LlamaGenerator>> LlamaGenerator::load(const std::filesystem::path& gguf,
                                                             const LlamaGeneratorOptions& options) {
  llama_build_info();  // backends first
  std::error_code ec;
  if (!std::filesystem::is_regular_file(gguf, ec))
    return make_error(ErrorCode::not_found, "no model file " + gguf.string());
  auto state = std::make_unique<State>();
  auto model_params = llama_model_default_params();
  model_params.n_gpu_layers = options.gpu_layers;
  state->model = llama_model_load_from_file(gguf.c_str(), model_params);
  if (!state->model) return make_error(ErrorCode::model, "llama.cpp cannot load " + gguf.string());
  state->vocab = llama_model_get_vocab(state->model);
  if (llama_vocab_n_tokens(state->vocab) == 0 || llama_vocab_type(state->vocab) == LLAMA_VOCAB_TYPE_NONE) {
    return make_error(ErrorCode::model, gguf.string() + " has no tokenizer: it cannot generate text");
  }

  int context_length = std::max(options.context_length, 64);
  if (const int trained = llama_model_n_ctx_train(state->model); trained > 0)
    context_length = std::min(context_length, trained);
  const int threads = options.threads > 0 ? options.threads : static_cast<int>(std::thread::hardware_concurrency());
  const int slots =
      std::clamp(options.parallel > 0 ? options.parallel : auto_slots(state->model, context_length), 1, 64);
  auto context_params = llama_context_default_params();
  context_params.n_ctx = static_cast<uint32_t>(context_length) * static_cast<uint32_t>(slots);
  context_params.n_batch = static_cast<uint32_t>(std::clamp(options.batch, slots + 1, context_length * slots));
  context_params.n_ubatch = context_params.n_batch;
  context_params.n_seq_max = static_cast<uint32_t>(slots);
  context_params.kv_unified = false;  // each slot its own context_length of cache: one never crowds out another
  context_params.n_threads = threads;
  context_params.n_threads_batch = threads;
  context_params.swa_full = true;  // sliding-window models (Gemma 3) keep a cache a prefix can be cut back to
  state->context = llama_init_from_model(state->model, context_params);
  if (!state->context) return make_error(ErrorCode::model, "llama.cpp cannot create a context for " + gguf.string());
  state->scheduler =
      std::make_unique<LlamaScheduler>(state->context, state->vocab,
                                       SchedulerOptions{.slots = slots,
                                                        .batch = static_cast<int>(context_params.n_batch),
                                                        .max_queued = options.max_queued,
                                                        .reuse_prefix = options.reuse_prefix,
                                                        .niceness = options.niceness});
  state->context_length = state->scheduler->slot_context();

  if (!options.chat_template.empty()) {
    if (!is_builtin_template(options.chat_template)) {
      return make_error(ErrorCode::invalid_argument,
                        "llama.cpp has no chat template named '" + options.chat_template + "'");
    }
    state->chat_template = options.chat_template;
  } else if (const char* own = llama_model_chat_template(state->model, nullptr)) {
    state->chat_template = own;
  }
  std::string probe;
  const ChatMessage empty{"user", ""};
  if (state->chat_template.empty() || apply_template(state->chat_template, {&empty, 1}, probe) < 0) {
    state->chat_template = "chatml";  // no template, or one llama.cpp cannot format: ChatML is the common default
  }

  char description[256] = {};
  if (llama_model_meta_val_str(state->model, "general.name", description, sizeof description) < 0) {
    llama_model_desc(state->model, description, sizeof description);
  }
  state->name = description;
  auto generator = std::unique_ptr<LlamaGenerator>(new LlamaGenerator(std::move(state)));
  if (auto formatted = generator->format_chat({&empty, 1})) {
    generator->state_->message_overhead = generator->tokenize(*formatted, true).size();
  }
  return generator;
}

std::string LlamaGenerator::id() const {
  return "llama.cpp:" + state_->name;
}

std::size_t LlamaGenerator::context_tokens() const {
  return state_->context_length;
}

std::size_t LlamaGenerator::count_tokens(std::string_view text) const {
  return tokenize(text, false).size();
}

std::size_t LlamaGenerator::tokens_per_message() const {
  return state_->message_overhead;
}

Result<std::string> LlamaGenerator::format_chat(std::span<const ChatMessage> messages) const {
  std::string out;
  if (apply_template(state_->chat_template, messages, out) < 0) {
    return make_error(ErrorCode::model, "llama.cpp cannot apply the chat template of " + state_->name);
  }
  return out;
}

std::vector<std::int32_t> LlamaGenerator::tokenize(std::string_view text, bool special) const {
  const auto length = static_cast<int32_t>(text.size());
  int32_t n = llama_tokenize(state_->vocab, text.data(), length, nullptr, 0, special, special);
  if (n >= 0) return std::vector<std::int32_t>(static_cast<std::size_t>(n));
  std::vector<std::int32_t> tokens(static_cast<std::size_t>(-n));
  n = llama_tokenize(state_->vocab, text.data(), length, tokens.data(), -n, special, special);
  tokens.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  return tokens;
}

void LlamaGenerator::reset_cache() {
  state_->scheduler->clear_cache();
}

int LlamaGenerator::slots() const {
  return static_cast<int>(llama_n_seq_max(state_->context));
}

Result<std::vector<std::int32_t>> LlamaGenerator::prompt_tokens(std::span<const ChatMessage> messages) const {
  if (messages.empty()) return make_error(ErrorCode::invalid_argument, "no messages to answer");
  const std::string text = KOTAE_TRY_VALUE(format_chat(messages));
  std::vector<llama_token> prompt = tokenize(text, true);
  if (prompt.empty()) return make_error(ErrorCode::invalid_argument, "the prompt has no tokens");
  if (prompt.size() >= state_->context_length) {
    return make_error(ErrorCode::invalid_argument, "the prompt has " + std::to_string(prompt.size()) +
                                                       " tokens; the model's context holds " +
                                                       std::to_string(state_->context_length));
  }
  return prompt;
}

void LlamaGenerator::start(std::vector<ChatMessage> messages, GenerationOptions options, TokenCallback on_piece,
                           GenerationDone on_done) {
  auto prompt = prompt_tokens(messages);
  if (!prompt) return on_done(prompt.error());
  state_->scheduler->submit({std::move(*prompt), std::move(options), std::move(on_piece), std::move(on_done)});
}

// The scheduler's pieces are handed to the calling thread, which runs `on_piece`: a slow caller never
// holds up the other slots.
Result<Generation> LlamaGenerator::generate(std::span<const ChatMessage> messages, const GenerationOptions& options,
                                            const TokenCallback& on_piece) {
  struct Relay {
    std::mutex mutex;
    std::condition_variable ready;
    std::deque<std::string> pieces;
    std::optional<Result<Generation>> done;
  };
  auto relay = std::make_shared<Relay>();
  auto cancelled = std::make_shared<std::atomic<bool>>(false);
  TokenCallback forward;
  if (on_piece) {
    forward = [relay](std::string_view piece) {
      {
        std::lock_guard lock(relay->mutex);
        relay->pieces.emplace_back(piece);
      }
      relay->ready.notify_one();
      return true;
    };
  }
  auto finished = [relay](Result<Generation> result) {
    {
      std::lock_guard lock(relay->mutex);
      relay->done.emplace(std::move(result));
    }
    relay->ready.notify_one();
  };
  auto prompt = prompt_tokens(messages);
  if (!prompt) return prompt.error();
  state_->scheduler->submit({std::move(*prompt), options, std::move(forward), std::move(finished), cancelled});

  bool stopped_by_caller = false;
  std::string delivered;  // the answer up to where the caller stopped it
  std::unique_lock lock(relay->mutex);
  while (true) {
    relay->ready.wait(lock, [&] { return !relay->pieces.empty() || relay->done; });
    while (!relay->pieces.empty()) {
      std::string piece = std::move(relay->pieces.front());
      relay->pieces.pop_front();
      if (stopped_by_caller) continue;
      lock.unlock();
      delivered += piece;
      if (!on_piece(piece)) {
        stopped_by_caller = true;
        cancelled->store(true);
      }
      lock.lock();
    }
    if (relay->done && relay->pieces.empty()) break;
  }
  Result<Generation> result = std::move(*relay->done);
  if (result && stopped_by_caller) {
    result->text = std::move(delivered);
    result->stats.finish_reason = "cancelled";
  }
  return result;
}

}  // namespace kotae
