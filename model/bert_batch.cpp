#include "model/bert_batch.h"

#include <algorithm>

namespace kotae {

BertBatch::BertBatch(std::span<const text::Encoding* const> rows, std::int32_t pad_id)
    : rows_(static_cast<std::int64_t>(rows.size())) {
  lengths_.reserve(rows.size());
  for (const auto* e : rows) {
    lengths_.push_back(e->size());
    cols_ = std::max(cols_, static_cast<std::int64_t>(e->size()));
  }
  const auto n = static_cast<std::size_t>(rows_ * cols_);
  ids_.assign(n, pad_id);
  mask_.assign(n, 0);
  types_.assign(n, 0);
  for (std::int64_t r = 0; r < rows_; ++r) {
    const auto& e = *rows[r];
    const std::size_t base = static_cast<std::size_t>(r * cols_);
    std::copy(e.ids.begin(), e.ids.end(), ids_.begin() + base);
    std::copy(e.type_ids.begin(), e.type_ids.end(), types_.begin() + base);
    std::fill_n(mask_.begin() + base, e.size(), 1);
  }
}

std::vector<Int64Input> BertBatch::inputs_for(const OnnxSession& session) const {
  std::vector<Int64Input> inputs;
  for (const auto& name : session.input_names()) {
    const std::int64_t* data = name == "input_ids" ? ids_.data() : name == "attention_mask" ? mask_.data() : types_.data();
    inputs.push_back({name, data, rows_, cols_});
  }
  return inputs;
}

}  // namespace kotae
