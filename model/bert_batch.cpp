#include "model/bert_batch.h"

#include <algorithm>
#include <numeric>

namespace kotae {

std::vector<std::vector<std::size_t>> plan_length_runs(std::span<const text::Encoding> encodings,
                                                       const RunLimits& limits) {
  std::vector<std::size_t> order(encodings.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return encodings[a].size() > encodings[b].size(); });
  std::vector<std::vector<std::size_t>> runs;
  for (std::size_t start = 0; start < order.size();) {
    const std::size_t width = std::max<std::size_t>(encodings[order[start]].size(), 1);
    const std::size_t by_tokens = std::max<std::size_t>(limits.max_tokens / width, 1);
    std::size_t count = std::min({std::max<std::size_t>(limits.max_items, 1), by_tokens, order.size() - start});
    for (std::size_t i = 1; i < count; ++i) {
      if (static_cast<double>(encodings[order[start + i]].size()) <
          limits.min_length_ratio * static_cast<double>(width)) {
        count = i;
        break;
      }
    }
    runs.emplace_back(order.begin() + static_cast<std::ptrdiff_t>(start),
                      order.begin() + static_cast<std::ptrdiff_t>(start + count));
    start += count;
  }
  return runs;
}

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
    const std::int64_t* data = name == "input_ids"        ? ids_.data()
                               : name == "attention_mask" ? mask_.data()
                                                          : types_.data();
    inputs.push_back({name, data, rows_, cols_});
  }
  return inputs;
}

}  // namespace kotae
