#pragma once
// Tokenised texts laid out as the int64 tensors a BERT-style ONNX graph takes, padded to the longest
// row of this batch (never to the model's maximum), fed by the names the graph declares.

#include <cstdint>
#include <span>
#include <vector>

#include "model/onnx_session.h"
#include "text/wordpiece_tokenizer.h"

namespace kotae {

class BertBatch {
 public:
  // `rows` point at encodings owned by the caller; they must outlive the batch's use.
  BertBatch(std::span<const text::Encoding* const> rows, std::int32_t pad_id);

  std::int64_t rows() const { return rows_; }
  std::int64_t cols() const { return cols_; }
  std::size_t row_length(std::size_t row) const { return lengths_[row]; }

  // The inputs `session` declares, in its order.
  std::vector<Int64Input> inputs_for(const OnnxSession& session) const;

 private:
  std::int64_t rows_ = 0, cols_ = 0;
  std::vector<std::size_t> lengths_;
  std::vector<std::int64_t> ids_, mask_, types_;
};

}  // namespace kotae
