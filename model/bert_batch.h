#pragma once
// Tokenised texts laid out as the int64 tensors a BERT-style ONNX graph takes, padded to the longest
// row of this batch (never to the model's maximum), fed by the names the graph declares.

#include <cstdint>
#include <span>
#include <vector>

#include "model/onnx_session.h"
#include "text/wordpiece_tokenizer.h"

namespace kotae {

// How many rows and padded tokens one model run may take, and how unequal its rows may be.
struct RunLimits {
  std::size_t max_items = 64;
  std::size_t max_tokens = 16384;
  // A run closes when the next (shorter) row is below this fraction of the run's longest; 0: never.
  double min_length_ratio = 0;
};

// Orders encodings longest first and cuts them into runs within `limits`, so padding stays small.
// Each run lists indices into `encodings`.
std::vector<std::vector<std::size_t>> plan_length_runs(std::span<const text::Encoding> encodings,
                                                       const RunLimits& limits);

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
