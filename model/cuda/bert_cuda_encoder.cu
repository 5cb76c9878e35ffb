#include "model/cuda/bert_cuda_encoder.h"

#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace kotae::cuda {
namespace {

constexpr int kHeadDim = 32;  // MiniLM, bge-small, e5-small: hidden / heads
constexpr int kNormThreads = 128;
constexpr int kAttentionTile = 64;  // keys and values per pass through shared memory
constexpr int kAttentionThreads = 256;

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}
void check(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string(what) + ": cuBLAS status " + std::to_string(static_cast<int>(s)));
}

template <class T>
T* device_alloc(std::size_t count) {
  T* p = nullptr;
  check(cudaMalloc(&p, count * sizeof(T)), "cudaMalloc");
  return p;
}

__half* upload_half(const std::vector<float>& values) {
  std::vector<__half> host(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) host[i] = __float2half(values[i]);
  __half* d = device_alloc<__half>(host.size());
  check(cudaMemcpy(d, host.data(), host.size() * sizeof(__half), cudaMemcpyHostToDevice), "upload");
  return d;
}

float* upload_float(const std::vector<float>& values) {
  float* d = device_alloc<float>(values.size());
  check(cudaMemcpy(d, values.data(), values.size() * sizeof(float), cudaMemcpyHostToDevice), "upload");
  return d;
}

// Sums a and b across the block (kNormThreads threads); every thread gets the totals.
__device__ void block_sums(float& a, float& b) {
  __shared__ float partial[2][kNormThreads / 32];
  for (int offset = 16; offset > 0; offset /= 2) {
    a += __shfl_xor_sync(0xffffffff, a, offset);
    b += __shfl_xor_sync(0xffffffff, b, offset);
  }
  if (threadIdx.x % 32 == 0) {
    partial[0][threadIdx.x / 32] = a;
    partial[1][threadIdx.x / 32] = b;
  }
  __syncthreads();
  a = b = 0.0f;
  for (int w = 0; w < kNormThreads / 32; ++w) {
    a += partial[0][w];
    b += partial[1][w];
  }
}

// Mean and inverse standard deviation of a row from each thread's sum and sum of squares.
__device__ void row_stats(float sum, float square_sum, int cols, float epsilon, float* mean, float* inverse) {
  block_sums(sum, square_sum);
  *mean = sum / cols;
  *inverse = rsqrtf(fmaxf(square_sum / cols - *mean * *mean, 0.0f) + epsilon);
}

// x[t] = LayerNorm(word[id] + position[t % length] + type[types[t] or 0]); one block per token.
__global__ void embed_norm(const int* ids, const int* types, int padded_length, const __half* word,
                           const __half* position, const __half* type_table, const float* gamma, const float* beta,
                           int hidden, float epsilon, __half* x) {
  const int t = blockIdx.x, pos = t % padded_length, id = ids[t];
  const __half* type = type_table + (types ? (size_t)types[t] * hidden : 0);
  float v[4];  // hidden <= 4 * kNormThreads
  float sum = 0, square = 0;
  for (int k = 0, c = threadIdx.x; k < 4; ++k, c += kNormThreads) {
    v[k] = c < hidden ? __half2float(word[(size_t)id * hidden + c]) + __half2float(position[(size_t)pos * hidden + c]) +
                            __half2float(type[c])
                      : 0.0f;
    sum += v[k];
    square += v[k] * v[k];
  }
  float mean, inverse;
  row_stats(sum, square, hidden, epsilon, &mean, &inverse);
  for (int k = 0, c = threadIdx.x; k < 4 && c < hidden; ++k, c += kNormThreads) {
    x[(size_t)t * hidden + c] = __float2half((v[k] - mean) * inverse * gamma[c] + beta[c]);
  }
}

// x[t] = LayerNorm(x[t] + y[t] + bias); one block per token.
__global__ void add_bias_residual_norm(__half* x, const __half* y, const float* bias, const float* gamma,
                                       const float* beta, int hidden, float epsilon) {
  const size_t row = (size_t)blockIdx.x * hidden;
  float v[4];
  float sum = 0, square = 0;
  for (int k = 0, c = threadIdx.x; k < 4; ++k, c += kNormThreads) {
    v[k] = c < hidden ? __half2float(x[row + c]) + __half2float(y[row + c]) + bias[c] : 0.0f;
    sum += v[k];
    square += v[k] * v[k];
  }
  float mean, inverse;
  row_stats(sum, square, hidden, epsilon, &mean, &inverse);
  for (int k = 0, c = threadIdx.x; k < 4 && c < hidden; ++k, c += kNormThreads) {
    x[row + c] = __float2half((v[k] - mean) * inverse * gamma[c] + beta[c]);
  }
}

// y = GELU(y + bias), the exact (erf) form BERT uses.
__global__ void bias_gelu(__half* y, const float* bias, int cols, size_t count) {
  const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= count) return;
  const float v = __half2float(y[i]) + bias[i % cols];
  y[i] = __float2half(0.5f * v * (1.0f + erff(v * 0.70710678f)));
}

// One block per (text, head); each thread computes query rows threadIdx.x, + blockDim.x, ... over the
// text's real tokens in one pass (online softmax). Keys and values pass through shared memory a tile of
// kAttentionTile tokens at a time, so its use (8 KB) fits every GPU from sm_70 on, whatever the text's
// length. qkv rows are [q | k | v] without their bias, which is added here.
__global__ void attention(const __half* qkv, const float* qkv_bias, const int* lengths, int padded_length, int hidden,
                          int heads, float scale, __half* context) {
  __shared__ __half keys[kAttentionTile * kHeadDim];
  __shared__ __half values[kAttentionTile * kHeadDim];
  const int text = blockIdx.x / heads, head = blockIdx.x % heads, length = lengths[text];
  const size_t stride = 3 * (size_t)hidden, first = (size_t)text * padded_length;
  const int q_off = head * kHeadDim, k_off = hidden + q_off, v_off = 2 * hidden + q_off;
  for (int row0 = 0; row0 < padded_length; row0 += blockDim.x) {  // every thread runs every pass: they share the tiles
    const int i = row0 + threadIdx.x;
    const bool real = i < length;
    float q[kHeadDim], acc[kHeadDim];
    for (int d = 0; d < kHeadDim; ++d) {
      q[d] = real ? (__half2float(qkv[(first + i) * stride + q_off + d]) + qkv_bias[q_off + d]) * scale : 0.0f;
      acc[d] = 0.0f;
    }
    float top = -INFINITY, total = 0.0f;
    for (int tile = 0; tile < length; tile += kAttentionTile) {
      const int count = min(kAttentionTile, length - tile);
      __syncthreads();  // the previous tile is read by everyone
      for (int e = threadIdx.x; e < count * kHeadDim; e += blockDim.x) {
        const size_t row = (first + tile + e / kHeadDim) * stride;
        const int d = e % kHeadDim;
        keys[e] = __float2half(__half2float(qkv[row + k_off + d]) + qkv_bias[k_off + d]);
        values[e] = __float2half(__half2float(qkv[row + v_off + d]) + qkv_bias[v_off + d]);
      }
      __syncthreads();
      if (!real) continue;
      for (int j = 0; j < count; ++j) {
        float s = 0.0f;
        for (int d = 0; d < kHeadDim; ++d) s += q[d] * __half2float(keys[j * kHeadDim + d]);
        const float next = fmaxf(top, s), correction = __expf(top - next), p = __expf(s - next);
        total = total * correction + p;
        for (int d = 0; d < kHeadDim; ++d) acc[d] = acc[d] * correction + p * __half2float(values[j * kHeadDim + d]);
        top = next;
      }
    }
    if (i >= padded_length) continue;
    __half* out = context + (first + i) * hidden + q_off;
    for (int d = 0; d < kHeadDim; ++d)
      out[d] = __float2half(real ? acc[d] / total : 0.0f);  // padding: never read, kept finite
  }
}

// out[text] = normalise(mean of x over the text's real tokens); one block per text.
__global__ void mean_pool_normalize(const __half* x, const int* lengths, int padded_length, int hidden, float* out) {
  const int text = blockIdx.x, length = lengths[text];
  float v[4];
  float square = 0;
  for (int k = 0, c = threadIdx.x; k < 4; ++k, c += kNormThreads) {
    float sum = 0;
    if (c < hidden) {
      for (int t = 0; t < length; ++t) sum += __half2float(x[((size_t)text * padded_length + t) * hidden + c]);
    }
    v[k] = sum / length;
    square += c < hidden ? v[k] * v[k] : 0.0f;
  }
  float unused = 0.0f;
  block_sums(square, unused);
  const float scale = rsqrtf(fmaxf(square, 1e-24f));
  for (int k = 0, c = threadIdx.x; k < 4 && c < hidden; ++k, c += kNormThreads)
    out[(size_t)text * hidden + c] = v[k] * scale;
}

// A cross-encoder's head on the pooler's output y (no bias yet): pooled = tanh(y + pooler_bias), then
// score = the classifier's one logit, or logit[1] - logit[0] of two; one block per text.
__global__ void tanh_classify(const __half* y, const float* pooler_bias, const float* classifier,
                              const float* classifier_bias, int labels, int hidden, float* scores) {
  const int text = blockIdx.x;
  float logit[2] = {0.0f, 0.0f};
  for (int c = threadIdx.x; c < hidden; c += kNormThreads) {
    const float pooled = tanhf(__half2float(y[(size_t)text * hidden + c]) + pooler_bias[c]);
    for (int l = 0; l < labels; ++l) logit[l] += pooled * classifier[(size_t)l * hidden + c];
  }
  block_sums(logit[0], logit[1]);
  if (threadIdx.x == 0) {
    scores[text] =
        labels == 1 ? logit[0] + classifier_bias[0] : (logit[1] + classifier_bias[1]) - (logit[0] + classifier_bias[0]);
  }
}

struct DeviceDense {
  __half* weight = nullptr;  // [out, in]
  float* bias = nullptr;
  int out = 0, in = 0;
};

struct DeviceLayer {
  DeviceDense qkv, attention_output, intermediate, output;
  float *attention_gamma, *attention_beta, *output_gamma, *output_beta;
};

DeviceDense upload_dense(const std::vector<const DenseWeights*>& parts) {
  DeviceDense d;
  d.in = parts.front()->in;
  std::vector<float> weight, bias;
  for (const auto* p : parts) {
    weight.insert(weight.end(), p->weight.begin(), p->weight.end());
    bias.insert(bias.end(), p->bias.begin(), p->bias.end());
    d.out += p->out;
  }
  d.weight = upload_half(weight);
  d.bias = upload_float(bias);
  return d;
}

}  // namespace

struct BertCudaEncoder::Impl {
  int hidden, heads, intermediate, max_batch, max_tokens, max_positions;
  float epsilon;
  __half *word, *position, *type;
  float *embed_gamma, *embed_beta;
  std::vector<DeviceLayer> layers;
  DeviceDense pooler;                                       // cross-encoders only
  float *classifier = nullptr, *classifier_bias = nullptr;  // [labels, hidden], FP32: tiny
  int labels = 0, type_rows = 0;
  cublasHandle_t blas{};
  cudaStream_t stream{};
  int *ids, *types, *lengths, *host_ids, *host_types, *host_lengths;
  __half *x, *qkv, *context, *scratch, *inner;
  float *out, *host_out;
  __half* host_states;
  std::vector<void*> allocations;
  std::string device;

  // y[rows, d.out] = x[rows, d.in] W^T, FP16 in and out, FP32 accumulation (bias added by the next kernel).
  // Input rows are `in_stride` halves apart (d.in: packed; one text's length x hidden: its first tokens).
  void gemm(const __half* in, const DeviceDense& d, __half* y, int rows, int in_stride = 0) {
    const float one = 1.0f, zero = 0.0f;
    check(cublasGemmEx(blas, CUBLAS_OP_T, CUBLAS_OP_N, d.out, rows, d.in, &one, d.weight, CUDA_R_16F, d.in, in,
                       CUDA_R_16F, in_stride ? in_stride : d.in, &zero, y, CUDA_R_16F, d.out, CUBLAS_COMPUTE_32F,
                       CUBLAS_GEMM_DEFAULT),
          "cublasGemmEx");
  }

  // Copies texts [first, first + batch) to the device, padded to the longest (cut at max_tokens), and
  // runs embeddings and every layer: x holds the final token states. Returns the padded length.
  int encode(const std::vector<std::vector<int>>& texts, const std::vector<std::vector<int>>* text_types, size_t first,
             int batch) {
    int length = 1;
    for (int b = 0; b < batch; ++b) length = std::max(length, std::min<int>(texts[first + b].size(), max_tokens));
    for (int b = 0; b < batch; ++b) {
      const auto& t = texts[first + b];
      const int n = std::max(1, std::min<int>(t.size(), max_tokens));
      host_lengths[b] = n;
      for (int i = 0; i < length; ++i) {
        const bool real = i < static_cast<int>(t.size()) && i < n;
        host_ids[b * length + i] = real ? t[i] : 0;
        if (text_types) host_types[b * length + i] = real ? (*text_types)[first + b][i] : 0;
      }
    }
    const int rows = batch * length;
    check(cudaMemcpyAsync(ids, host_ids, rows * sizeof(int), cudaMemcpyHostToDevice, stream), "copy ids");
    if (text_types)
      check(cudaMemcpyAsync(types, host_types, rows * sizeof(int), cudaMemcpyHostToDevice, stream), "copy types");
    check(cudaMemcpyAsync(lengths, host_lengths, batch * sizeof(int), cudaMemcpyHostToDevice, stream), "copy lengths");
    embed_norm<<<rows, kNormThreads, 0, stream>>>(ids, text_types ? types : nullptr, length, word, position, type,
                                                  embed_gamma, embed_beta, hidden, epsilon, x);
    const int attention_threads = std::min((length + 31) / 32 * 32, kAttentionThreads);
    const float scale = 1.0f / std::sqrt(static_cast<float>(kHeadDim));
    for (const auto& l : layers) {
      gemm(x, l.qkv, qkv, rows);
      attention<<<batch * heads, attention_threads, 0, stream>>>(qkv, l.qkv.bias, lengths, length, hidden, heads, scale,
                                                                 context);
      gemm(context, l.attention_output, scratch, rows);
      add_bias_residual_norm<<<rows, kNormThreads, 0, stream>>>(x, scratch, l.attention_output.bias, l.attention_gamma,
                                                                l.attention_beta, hidden, epsilon);
      gemm(x, l.intermediate, inner, rows);
      const size_t inner_count = (size_t)rows * intermediate;
      bias_gelu<<<(inner_count + 255) / 256, 256, 0, stream>>>(inner, l.intermediate.bias, intermediate, inner_count);
      gemm(inner, l.output, scratch, rows);
      add_bias_residual_norm<<<rows, kNormThreads, 0, stream>>>(x, scratch, l.output.bias, l.output_gamma,
                                                                l.output_beta, hidden, epsilon);
    }
    return length;
  }
};

BertCudaEncoder::BertCudaEncoder(const BertWeights& w, int max_batch, int max_tokens)
    : impl_(std::make_unique<Impl>()) {
  auto& m = *impl_;
  if (w.hidden / w.heads != kHeadDim || w.hidden > 4 * kNormThreads) {
    throw std::runtime_error("this encoder handles head size 32 and a hidden size up to 512");
  }
  m.hidden = w.hidden;
  m.heads = w.heads;
  m.intermediate = w.intermediate;
  m.max_batch = max_batch;
  if (max_tokens > w.max_positions) {  // ONNX Runtime would fail on such input too: say so, never cut silently
    throw std::runtime_error("texts of " + std::to_string(max_tokens) + " tokens asked for, but the model has " +
                             std::to_string(w.max_positions) + " positions");
  }
  m.max_tokens = max_tokens;
  m.max_positions = w.max_positions;
  m.epsilon = w.norm_epsilon;
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  m.device = prop.name;
  // A GPU this build has neither machine code nor PTX for fails at the first launch; say so here.
  cudaFuncAttributes kernel{};
  if (cudaFuncGetAttributes(&kernel, attention) != cudaSuccess) {
    cudaGetLastError();  // clear it
    throw std::runtime_error(std::string(prop.name) + " (compute capability " + std::to_string(prop.major) + "." +
                             std::to_string(prop.minor) + "): this build of the encoder has no code for it");
  }
  check(cudaStreamCreateWithFlags(&m.stream, cudaStreamNonBlocking), "cudaStreamCreate");
  check(cublasCreate(&m.blas), "cublasCreate");
  check(cublasSetStream(m.blas, m.stream), "cublasSetStream");
  m.word = upload_half(w.word_embeddings);
  m.position = upload_half(w.position_embeddings);
  m.type = upload_half(w.token_type_embeddings);
  m.type_rows = static_cast<int>(w.token_type_embeddings.size() / w.hidden);
  m.embed_gamma = upload_float(w.embedding_norm.gamma);
  m.embed_beta = upload_float(w.embedding_norm.beta);
  for (const auto& l : w.layers) {
    DeviceLayer d;
    d.qkv = upload_dense({&l.query, &l.key, &l.value});
    d.attention_output = upload_dense({&l.attention_output});
    d.intermediate = upload_dense({&l.intermediate});
    d.output = upload_dense({&l.output});
    d.attention_gamma = upload_float(l.attention_norm.gamma);
    d.attention_beta = upload_float(l.attention_norm.beta);
    d.output_gamma = upload_float(l.output_norm.gamma);
    d.output_beta = upload_float(l.output_norm.beta);
    m.layers.push_back(d);
  }
  if (w.is_cross_encoder()) {
    m.pooler = upload_dense({&w.pooler});
    m.classifier = upload_float(w.classifier.weight);
    m.classifier_bias = upload_float(w.classifier.bias);
    m.labels = w.classifier.out;
  }
  const size_t tokens = (size_t)max_batch * m.max_tokens;
  m.ids = device_alloc<int>(tokens);
  m.types = device_alloc<int>(tokens);
  m.lengths = device_alloc<int>(max_batch);
  m.x = device_alloc<__half>(tokens * m.hidden);
  m.qkv = device_alloc<__half>(tokens * 3 * m.hidden);
  m.context = device_alloc<__half>(tokens * m.hidden);
  m.scratch = device_alloc<__half>(tokens * m.hidden);
  m.inner = device_alloc<__half>(tokens * m.intermediate);
  m.out = device_alloc<float>((size_t)max_batch * m.hidden);
  check(cudaMallocHost(&m.host_ids, tokens * sizeof(int)), "cudaMallocHost");
  check(cudaMallocHost(&m.host_types, tokens * sizeof(int)), "cudaMallocHost");
  check(cudaMallocHost(&m.host_lengths, max_batch * sizeof(int)), "cudaMallocHost");
  check(cudaMallocHost(&m.host_out, (size_t)max_batch * m.hidden * sizeof(float)), "cudaMallocHost");
  check(cudaMallocHost(&m.host_states, tokens * m.hidden * sizeof(__half)), "cudaMallocHost");
}

BertCudaEncoder::~BertCudaEncoder() {
  // The process's CUDA context frees device memory at exit; a long-lived server keeps one encoder.
  if (impl_->blas) cublasDestroy(impl_->blas);
  if (impl_->stream) cudaStreamDestroy(impl_->stream);
}

int BertCudaEncoder::hidden() const {
  return impl_->hidden;
}
std::string BertCudaEncoder::device_name() const {
  return impl_->device;
}

std::vector<float> BertCudaEncoder::embed(const std::vector<std::vector<int>>& texts,
                                          std::vector<std::vector<float>>* states) {
  auto& m = *impl_;
  std::vector<float> result;
  for (size_t first = 0; first < texts.size(); first += m.max_batch) {
    const int batch = static_cast<int>(std::min<size_t>(m.max_batch, texts.size() - first));
    const int length = m.encode(texts, nullptr, first, batch), rows = batch * length;
    mean_pool_normalize<<<batch, kNormThreads, 0, m.stream>>>(m.x, m.lengths, length, m.hidden, m.out);
    check(cudaGetLastError(), "kernel launch");
    check(
        cudaMemcpyAsync(m.host_out, m.out, (size_t)batch * m.hidden * sizeof(float), cudaMemcpyDeviceToHost, m.stream),
        "copy vectors");
    if (states) {
      check(cudaMemcpyAsync(m.host_states, m.x, (size_t)rows * m.hidden * sizeof(__half), cudaMemcpyDeviceToHost,
                            m.stream),
            "copy token states");
    }
    check(cudaStreamSynchronize(m.stream), "encode");
    result.insert(result.end(), m.host_out, m.host_out + (size_t)batch * m.hidden);
    if (states) {
      for (int b = 0; b < batch; ++b) {
        auto& text = states->emplace_back((size_t)m.host_lengths[b] * m.hidden);
        for (size_t i = 0; i < text.size(); ++i)
          text[i] = __half2float(m.host_states[(size_t)b * length * m.hidden + i]);
      }
    }
  }
  return result;
}

bool BertCudaEncoder::is_cross_encoder() const {
  return impl_->labels > 0;
}

std::vector<float> BertCudaEncoder::score(const std::vector<PairTokens>& pairs) {
  auto& m = *impl_;
  if (!m.labels) throw std::invalid_argument("these weights have no classifier head");
  std::vector<std::vector<int>> ids, types;
  for (const auto& p : pairs) {
    if (p.types.size() != p.ids.size()) throw std::invalid_argument("token types and ids differ in length");
    for (int t : p.types) {
      if (t < 0 || t >= m.type_rows) throw std::invalid_argument("token type out of the model's types");
    }
    ids.push_back(p.ids);
    types.push_back(p.types);
  }
  std::vector<float> scores;
  for (size_t first = 0; first < pairs.size(); first += m.max_batch) {
    const int batch = static_cast<int>(std::min<size_t>(m.max_batch, pairs.size() - first));
    const int length = m.encode(ids, &types, first, batch);
    m.gemm(m.x, m.pooler, m.scratch, batch, length * m.hidden);  // each pair's [CLS] row
    tanh_classify<<<batch, kNormThreads, 0, m.stream>>>(m.scratch, m.pooler.bias, m.classifier, m.classifier_bias,
                                                        m.labels, m.hidden, m.out);
    check(cudaGetLastError(), "kernel launch");
    check(cudaMemcpyAsync(m.host_out, m.out, batch * sizeof(float), cudaMemcpyDeviceToHost, m.stream), "copy scores");
    check(cudaStreamSynchronize(m.stream), "score");
    scores.insert(scores.end(), m.host_out, m.host_out + batch);
  }
  return scores;
}

}  // namespace kotae::cuda
