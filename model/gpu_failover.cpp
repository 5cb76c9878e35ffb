#include "model/gpu_failover.h"

#include <atomic>
#include <mutex>

#include "core/log.h"

namespace kotae {
namespace {

// The GPU model until its first run error, then the CPU one; shared by both kinds of model.
template <class Model>
class Failover {
 public:
  Failover(std::unique_ptr<Model> gpu, std::function<Result<std::unique_ptr<Model>>()> load_cpu,
           OnGpuFailure on_failure)
      : gpu_(std::move(gpu)), load_cpu_(std::move(load_cpu)), on_failure_(std::move(on_failure)) {}

  const Model& active() const { return failed_.load(std::memory_order_acquire) ? *cpu_ : *gpu_; }
  const Model& gpu() const { return *gpu_; }

  // `call` on the GPU model; on its run error, on the CPU model (this call and every later one).
  template <class Call>
  auto run(Call call) const -> decltype(call(std::declval<const Model&>())) {
    if (!failed_.load(std::memory_order_acquire)) {
      auto result = call(*gpu_);
      if (result || result.error().code != ErrorCode::model || !switch_to_cpu(result.error().message)) return result;
    }
    return call(*cpu_);
  }

 private:
  // False where the CPU model cannot load either: the GPU's error then stands, and the next one tries again.
  bool switch_to_cpu(const std::string& reason) const {
    std::lock_guard lock(mutex_);
    if (failed_.load(std::memory_order_acquire)) return true;  // another call switched meanwhile
    auto cpu = load_cpu_();
    if (!cpu) {
      log_event("gpu_failover_failed", {{"model", gpu_->id()}, {"reason", reason}, {"cpu_error", cpu.error().message}},
                LogLevel::error);
      return false;
    }
    cpu_ = std::move(*cpu);
    failed_.store(true, std::memory_order_release);
    const GpuFailure failure{gpu_->id(), gpu_->provider(), cpu_->provider(), reason};
    log_event("gpu_failed_over",
              {{"model", failure.model}, {"from", failure.from}, {"to", failure.to}, {"reason", reason}},
              LogLevel::error);
    if (on_failure_) on_failure_(failure);
    return true;
  }

  std::unique_ptr<Model> gpu_;
  std::function<Result<std::unique_ptr<Model>>()> load_cpu_;
  OnGpuFailure on_failure_;
  mutable std::mutex mutex_;  // one switch
  mutable std::unique_ptr<Model> cpu_;
  mutable std::atomic<bool> failed_{false};
};

class FailoverEncoder final : public Encoder {
 public:
  template <class... Args>
  explicit FailoverEncoder(Args&&... args) : f_(std::forward<Args>(args)...) {}

  std::size_t dimension() const override { return f_.gpu().dimension(); }
  std::string id() const override { return f_.gpu().id(); }
  std::string precision() const override { return f_.active().precision(); }
  const std::string& provider() const override { return f_.active().provider(); }
  text::Encoding tokenize(std::string_view text) const override { return f_.active().tokenize(text); }
  const TextPrefixes& prefixes() const override { return f_.gpu().prefixes(); }
  const text::Tokenizer& tokenizer() const override { return f_.gpu().tokenizer(); }
  std::size_t max_length() const override { return f_.gpu().max_length(); }
  Result<Embeddings> embed_encoded(std::span<const text::Encoding> encodings) const override {
    return f_.run([&](const Encoder& e) { return e.embed_encoded(encodings); });
  }
  Result<RangeEmbeddings> embed_encoded_with_ranges(std::span<const text::Encoding> encodings,
                                                    std::span<const std::vector<TokenRange>> ranges) const override {
    return f_.run([&](const Encoder& e) { return e.embed_encoded_with_ranges(encodings, ranges); });
  }
  Result<Embeddings> embed_encoded_unnormalized(std::span<const text::Encoding> encodings) const override {
    return f_.run([&](const Encoder& e) { return e.embed_encoded_unnormalized(encodings); });
  }

 private:
  Failover<Encoder> f_;
};

class FailoverPairScorer final : public PairScorer {
 public:
  template <class... Args>
  explicit FailoverPairScorer(Args&&... args) : f_(std::forward<Args>(args)...) {}

  std::string id() const override { return f_.gpu().id(); }
  const std::string& provider() const override { return f_.active().provider(); }
  text::Encoding encode(std::string_view query, std::string_view passage) const override {
    return f_.active().encode(query, passage);
  }
  Result<std::vector<float>> score_encoded(std::span<const text::Encoding> pairs) const override {
    return f_.run([&](const PairScorer& s) { return s.score_encoded(pairs); });
  }
  std::size_t max_pair_tokens() const override { return f_.active().max_pair_tokens(); }
  std::size_t untruncated_pair_tokens(std::string_view query, std::string_view passage) const override {
    return f_.active().untruncated_pair_tokens(query, passage);
  }

 private:
  Failover<PairScorer> f_;
};

}  // namespace

std::unique_ptr<Encoder> with_cpu_failover(std::unique_ptr<Encoder> gpu,
                                           std::function<Result<std::unique_ptr<Encoder>>()> load_cpu,
                                           OnGpuFailure on_failure) {
  return std::make_unique<FailoverEncoder>(std::move(gpu), std::move(load_cpu), std::move(on_failure));
}

std::unique_ptr<PairScorer> with_cpu_failover(std::unique_ptr<PairScorer> gpu,
                                              std::function<Result<std::unique_ptr<PairScorer>>()> load_cpu,
                                              OnGpuFailure on_failure) {
  return std::make_unique<FailoverPairScorer>(std::move(gpu), std::move(load_cpu), std::move(on_failure));
}

}  // namespace kotae
