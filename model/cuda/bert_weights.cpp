#include "model/cuda/bert_weights.h"

#include <cctype>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <map>
#include <stdexcept>

namespace kotae::cuda {
namespace {

struct TensorInfo {
  std::string dtype;
  std::vector<std::int64_t> shape;
  std::size_t begin = 0, end = 0;
};

// The safetensors header is one flat JSON object of {"name": {"dtype", "shape", "data_offsets"}} (and an
// optional "__metadata__" of strings); this reads exactly that shape of JSON.
class HeaderReader {
 public:
  explicit HeaderReader(std::string text) : s_(std::move(text)) {}

  std::map<std::string, TensorInfo> tensors() {
    std::map<std::string, TensorInfo> out;
    expect('{');
    while (!consume('}')) {
      const std::string name = string();
      expect(':');
      if (name == "__metadata__") {
        skip_object();
      } else {
        out[name] = tensor();
      }
      consume(',');
    }
    return out;
  }

 private:
  void space() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  bool consume(char c) {
    space();
    if (pos_ < s_.size() && s_[pos_] == c) return ++pos_, true;
    return false;
  }
  void expect(char c) {
    if (!consume(c)) throw std::runtime_error(std::string("safetensors header: expected '") + c + "'");
  }
  std::string string() {
    expect('"');
    const auto end = s_.find('"', pos_);
    if (end == std::string::npos) throw std::runtime_error("safetensors header: unterminated string");
    std::string out = s_.substr(pos_, end - pos_);
    pos_ = end + 1;
    return out;
  }
  std::int64_t number() {
    space();
    std::size_t used = 0;
    const auto value = std::stoll(s_.substr(pos_, 24), &used);
    pos_ += used;
    return value;
  }
  std::vector<std::int64_t> numbers() {
    std::vector<std::int64_t> out;
    expect('[');
    while (!consume(']')) {
      out.push_back(number());
      consume(',');
    }
    return out;
  }
  void skip_object() {
    expect('{');
    while (!consume('}')) {
      string();
      expect(':');
      string();
      consume(',');
    }
  }
  TensorInfo tensor() {
    TensorInfo t;
    expect('{');
    while (!consume('}')) {
      const std::string key = string();
      expect(':');
      if (key == "dtype") {
        t.dtype = string();
      } else if (key == "shape") {
        t.shape = numbers();
      } else if (key == "data_offsets") {
        const auto o = numbers();
        if (o.size() != 2) throw std::runtime_error("safetensors header: bad data_offsets");
        t.begin = static_cast<std::size_t>(o[0]);
        t.end = static_cast<std::size_t>(o[1]);
      } else {
        throw std::runtime_error("safetensors header: unexpected key " + key);
      }
      consume(',');
    }
    return t;
  }

  std::string s_;
  std::size_t pos_ = 0;
};

float half_to_float(std::uint16_t h) {
  const std::uint32_t sign = (h & 0x8000u) << 16, exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
  std::uint32_t bits;
  if (exponent == 0) {
    if (mantissa == 0) {
      bits = sign;
    } else {  // subnormal: normalise
      int e = -1;
      std::uint32_t m = mantissa;
      do {
        ++e;
        m <<= 1;
      } while ((m & 0x400u) == 0);
      bits = sign | ((127 - 15 - e) << 23) | ((m & 0x3ffu) << 13);
    }
  } else if (exponent == 31) {
    bits = sign | 0x7f800000u | (mantissa << 13);
  } else {
    bits = sign | ((exponent + 127 - 15) << 23) | (mantissa << 13);
  }
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

class SafeTensors {
 public:
  explicit SafeTensors(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("cannot open " + path.string());
    std::uint64_t header_size = 0;
    in.read(reinterpret_cast<char*>(&header_size), 8);
    if (!in || header_size > (100u << 20)) throw std::runtime_error(path.string() + " is not a safetensors file");
    std::string header(header_size, '\0');
    in.read(header.data(), static_cast<std::streamsize>(header_size));
    tensors_ = HeaderReader(header).tensors();
    data_.assign(std::istreambuf_iterator<char>(in), {});
  }

  // The tensor whose name ends with `suffix` (sentence-transformers may prefix names), as FP32.
  std::vector<float> get(const std::string& suffix, std::vector<std::int64_t>* shape = nullptr) const {
    for (const auto& [name, t] : tensors_) {
      if (name.size() < suffix.size() || name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
        continue;
      if (t.end > data_.size() || t.begin > t.end) throw std::runtime_error(name + ": data outside the file");
      if (shape) *shape = t.shape;
      const char* at = data_.data() + t.begin;
      std::vector<float> out;
      if (t.dtype == "F16") {
        out.resize((t.end - t.begin) / 2);
        for (std::size_t i = 0; i < out.size(); ++i) {
          std::uint16_t h;
          std::memcpy(&h, at + 2 * i, 2);
          out[i] = half_to_float(h);
        }
      } else if (t.dtype == "F32") {
        out.resize((t.end - t.begin) / 4);
        std::memcpy(out.data(), at, out.size() * 4);
      } else {
        throw std::runtime_error(name + ": dtype " + t.dtype + " is not F16 or F32");
      }
      return out;
    }
    throw std::runtime_error("no tensor named *" + suffix);
  }

  bool has(const std::string& suffix) const {
    for (const auto& [name, t] : tensors_) {
      if (name.size() >= suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
        return true;
    }
    return false;
  }

 private:
  std::map<std::string, TensorInfo> tensors_;
  std::vector<char> data_;
};

DenseWeights dense(const SafeTensors& st, const std::string& prefix) {
  DenseWeights d;
  std::vector<std::int64_t> shape;
  d.weight = st.get(prefix + ".weight", &shape);
  if (shape.size() != 2) throw std::runtime_error(prefix + ".weight is not a matrix");
  d.out = static_cast<int>(shape[0]);
  d.in = static_cast<int>(shape[1]);
  d.bias = st.get(prefix + ".bias");
  return d;
}

LayerNormWeights norm(const SafeTensors& st, const std::string& prefix) {
  return {st.get(prefix + ".weight"), st.get(prefix + ".bias")};
}

}  // namespace

BertWeights load_bert_weights(const std::filesystem::path& safetensors, int heads) {
  const SafeTensors st(safetensors);
  BertWeights w;
  std::vector<std::int64_t> shape;
  w.word_embeddings = st.get("embeddings.word_embeddings.weight", &shape);
  w.vocab = static_cast<int>(shape.at(0));
  w.hidden = static_cast<int>(shape.at(1));
  w.position_embeddings = st.get("embeddings.position_embeddings.weight", &shape);
  w.max_positions = static_cast<int>(shape.at(0));
  w.token_type_embeddings = st.get("embeddings.token_type_embeddings.weight");
  w.embedding_norm = norm(st, "embeddings.LayerNorm");
  w.heads = heads;
  if (heads <= 0 || w.hidden % heads != 0) throw std::runtime_error("the hidden size is not a multiple of the heads");
  for (int i = 0; st.has("encoder.layer." + std::to_string(i) + ".attention.self.query.weight"); ++i) {
    const std::string p = "encoder.layer." + std::to_string(i);
    BertLayerWeights l;
    l.query = dense(st, p + ".attention.self.query");
    l.key = dense(st, p + ".attention.self.key");
    l.value = dense(st, p + ".attention.self.value");
    l.attention_output = dense(st, p + ".attention.output.dense");
    l.attention_norm = norm(st, p + ".attention.output.LayerNorm");
    l.intermediate = dense(st, p + ".intermediate.dense");
    l.output = dense(st, p + ".output.dense");
    l.output_norm = norm(st, p + ".output.LayerNorm");
    w.intermediate = l.intermediate.out;
    w.layers.push_back(std::move(l));
  }
  if (w.layers.empty()) throw std::runtime_error(safetensors.string() + " holds no encoder layers");
  if (st.has("classifier.weight")) {
    w.pooler = dense(st, "pooler.dense");
    w.classifier = dense(st, "classifier");
    if (w.pooler.in != w.hidden || w.pooler.out != w.hidden || w.classifier.in != w.hidden || w.classifier.out < 1 ||
        w.classifier.out > 2) {
      throw std::runtime_error(safetensors.string() + ": the classifier head is not hidden -> hidden -> 1 or 2 labels");
    }
  }
  return w;
}

}  // namespace kotae::cuda
