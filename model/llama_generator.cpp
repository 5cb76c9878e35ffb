#include "model/llama_generator.h"

#include <llama.h>

#include <algorithm>
#include <chrono>
#include <mutex>
#include <random>
#include <thread>

#include "core/assert.h"
#include "model/llama_runtime.h"
#include "model/stop_sequence_filter.h"

namespace kotae {
namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

llama_token argmax(const float* logits, int n) {
  KOTAE_ASSERT(logits != nullptr);  // the last decoded token always has logits
  return static_cast<llama_token>(std::max_element(logits, logits + n) - logits);
}

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
  int n = llama_chat_apply_template(tmpl.c_str(), chat.data(), chat.size(), true, out.data(), static_cast<int>(out.size()));
  if (n > static_cast<int>(out.size())) {
    out.resize(static_cast<std::size_t>(n));
    n = llama_chat_apply_template(tmpl.c_str(), chat.data(), chat.size(), true, out.data(), n);
  }
  out.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  return n;
}

}  // namespace

struct LlamaGenerator::State {
  llama_model* model = nullptr;
  llama_context* context = nullptr;
  const llama_vocab* vocab = nullptr;
  std::string chat_template;  // a built-in name or the model's Jinja text (llama.cpp detects which)
  std::string name;
  std::size_t context_length = 0;
  int batch = 512;
  bool reuse_prefix = true;
  std::size_t message_overhead = 8;
  std::mutex mutex;                 // one request at a time: the context is one stream of work
  std::vector<llama_token> cached;  // the tokens whose KV cache sequence 0 holds, in order
  std::string cached_owner;         // GenerationOptions::cache_owner of the request that left them

  ~State() {
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
  if (!std::filesystem::is_regular_file(gguf, ec)) return make_error(ErrorCode::not_found, "no model file " + gguf.string());
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
  if (const int trained = llama_model_n_ctx_train(state->model); trained > 0) context_length = std::min(context_length, trained);
  const int threads = options.threads > 0 ? options.threads : static_cast<int>(std::thread::hardware_concurrency());
  auto context_params = llama_context_default_params();
  context_params.n_ctx = static_cast<uint32_t>(context_length);
  context_params.n_batch = static_cast<uint32_t>(std::min(options.batch, context_length));
  context_params.n_ubatch = context_params.n_batch;
  context_params.n_seq_max = 1;
  context_params.n_threads = threads;
  context_params.n_threads_batch = threads;
  context_params.swa_full = true;  // sliding-window models (Gemma 3) keep a cache a prefix can be cut back to
  state->context = llama_init_from_model(state->model, context_params);
  if (!state->context) return make_error(ErrorCode::model, "llama.cpp cannot create a context for " + gguf.string());
  state->context_length = llama_n_ctx(state->context);
  state->batch = static_cast<int>(context_params.n_batch);
  state->reuse_prefix = options.reuse_prefix;

  if (!options.chat_template.empty()) {
    if (!is_builtin_template(options.chat_template)) {
      return make_error(ErrorCode::invalid_argument, "llama.cpp has no chat template named '" + options.chat_template + "'");
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

std::string LlamaGenerator::id() const { return "llama.cpp:" + state_->name; }

std::size_t LlamaGenerator::context_tokens() const { return state_->context_length; }

std::size_t LlamaGenerator::count_tokens(std::string_view text) const { return tokenize(text, false).size(); }

std::size_t LlamaGenerator::tokens_per_message() const { return state_->message_overhead; }

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
  std::lock_guard lock(state_->mutex);
  llama_memory_clear(llama_get_memory(state_->context), true);
  state_->cached.clear();
}

Result<Generation> LlamaGenerator::generate(std::span<const ChatMessage> messages, const GenerationOptions& options,
                                            const TokenCallback& on_piece) {
  if (messages.empty()) return make_error(ErrorCode::invalid_argument, "no messages to answer");
  auto prompt_text = format_chat(messages);
  if (!prompt_text) return prompt_text.error();
  std::lock_guard lock(state_->mutex);
  State& s = *state_;
  const auto start = Clock::now();
  const std::vector<llama_token> prompt = tokenize(*prompt_text, true);
  if (prompt.empty()) return make_error(ErrorCode::invalid_argument, "the prompt has no tokens");
  if (prompt.size() >= s.context_length) {
    return make_error(ErrorCode::invalid_argument, "the prompt has " + std::to_string(prompt.size()) +
                                                       " tokens; the model's context holds " + std::to_string(s.context_length));
  }

  // Keep the KV cache of the longest prefix shared with the previous request; decode only the rest.
  // At least the last prompt token is decoded again: its logits start the answer.
  llama_memory_t memory = llama_get_memory(s.context);
  std::size_t keep = 0;
  if (s.reuse_prefix && s.cached_owner == options.cache_owner) {
    const auto limit = std::min(s.cached.size(), prompt.size() - 1);
    while (keep < limit && s.cached[keep] == prompt[keep]) ++keep;
  }
  if (keep == 0 || !llama_memory_seq_rm(memory, 0, static_cast<llama_pos>(keep), -1)) {
    llama_memory_clear(memory, true);
    keep = 0;
  }
  s.cached.resize(keep);
  s.cached_owner = options.cache_owner;

  auto decode = [&](const llama_token* tokens, std::size_t n) -> Result<void> {
    std::vector<llama_token> copy(tokens, tokens + n);  // llama_batch_get_one takes a mutable pointer
    if (const int rc = llama_decode(s.context, llama_batch_get_one(copy.data(), static_cast<int32_t>(n))); rc != 0) {
      llama_memory_clear(memory, true);
      s.cached.clear();
      return make_error(ErrorCode::model, "llama_decode failed with code " + std::to_string(rc));
    }
    s.cached.insert(s.cached.end(), tokens, tokens + n);
    return {};
  };
  for (std::size_t at = keep; at < prompt.size(); at += static_cast<std::size_t>(s.batch)) {
    if (auto ok = decode(prompt.data() + at, std::min(prompt.size() - at, static_cast<std::size_t>(s.batch))); !ok) {
      return ok.error();
    }
  }

  auto chain_params = llama_sampler_chain_default_params();
  chain_params.no_perf = true;
  std::unique_ptr<llama_sampler, decltype(&llama_sampler_free)> sampler(llama_sampler_chain_init(chain_params),
                                                                        &llama_sampler_free);
  if (options.temperature > 0.0f) {
    llama_sampler_chain_add(sampler.get(), llama_sampler_init_top_p(options.top_p, 1));
    llama_sampler_chain_add(sampler.get(), llama_sampler_init_temp(options.temperature));
    llama_sampler_chain_add(sampler.get(), llama_sampler_init_dist(options.seed ? *options.seed : std::random_device{}()));
  }

  Generation result;
  result.stats.prompt_tokens = prompt.size();
  result.stats.reused_prompt_tokens = keep;
  result.stats.finish_reason = "length";
  StopSequenceFilter filter(options.stop);
  auto emit = [&](const std::string& text) {
    if (text.empty()) return true;
    result.text += text;
    return !on_piece || on_piece(text);
  };
  Clock::time_point first_token{};
  const std::size_t room = s.context_length - prompt.size();
  const std::size_t max_tokens = std::min(static_cast<std::size_t>(std::max(options.max_tokens, 0)), room);
  char piece[256];
  const bool greedy = options.temperature <= 0.0f;
  const int vocab_size = llama_vocab_n_tokens(s.vocab);
  for (std::size_t i = 0; i < max_tokens; ++i) {
    // Greedy needs no candidate list: the sampler would copy every logit (262k for Gemma) per token.
    const llama_token token = greedy ? argmax(llama_get_logits_ith(s.context, -1), vocab_size)
                                     : llama_sampler_sample(sampler.get(), s.context, -1);
    if (i == 0) {
      first_token = Clock::now();
      result.stats.prompt_ms = ms_since(start);
    }
    if (!options.ignore_end_of_turn && llama_vocab_is_eog(s.vocab, token)) {
      result.stats.finish_reason = "stop";
      break;
    }
    ++result.stats.generated_tokens;
    const int n = llama_token_to_piece(s.vocab, token, piece, sizeof piece, 0, false);
    const bool keep_going = emit(filter.push(std::string_view(piece, n > 0 ? static_cast<std::size_t>(n) : 0)));
    if (filter.stopped()) {
      result.stats.finish_reason = "stop";
      break;
    }
    if (!keep_going) {
      result.stats.finish_reason = "cancelled";
      break;
    }
    if (i + 1 < max_tokens) {
      if (auto ok = decode(&token, 1); !ok) return ok.error();
    }
  }
  if (result.stats.finish_reason != "cancelled") emit(filter.finish());
  if (first_token != Clock::time_point{}) result.stats.generation_ms = ms_since(first_token);
  return result;
}

}  // namespace kotae
