#include "model/stop_sequence_filter.h"

#include <algorithm>

#include "text/unicode.h"

namespace kotae {

StopSequenceFilter::StopSequenceFilter(std::vector<std::string> stops) : stops_(std::move(stops)) {
  std::erase_if(stops_, [](const std::string& s) { return s.empty(); });
}

std::string StopSequenceFilter::push(std::string_view piece) {
  if (stopped_) return {};
  pending_ += piece;
  // Everything shown so far could not start a stop sequence, so one can only begin in pending_.
  std::size_t first_stop = std::string::npos;
  for (const auto& stop : stops_) first_stop = std::min(first_stop, pending_.find(stop));
  if (first_stop != std::string::npos) {
    stopped_ = true;
    std::string out = text::valid_utf8(std::string_view(pending_).substr(0, first_stop));
    pending_.clear();
    return out;
  }
  std::size_t hold = 0;  // the longest tail of pending_ that begins some stop sequence
  for (const auto& stop : stops_) {
    for (std::size_t k = std::min(stop.size() - 1, pending_.size()); k > hold; --k) {
      if (pending_.compare(pending_.size() - k, k, stop, 0, k) == 0) {
        hold = k;
        break;
      }
    }
  }
  const std::size_t safe = text::utf8_complete_length(std::string_view(pending_).substr(0, pending_.size() - hold));
  std::string out = text::valid_utf8(std::string_view(pending_).substr(0, safe));
  pending_.erase(0, safe);
  return out;
}

std::string StopSequenceFilter::finish() {
  std::string out = stopped_ ? std::string() : text::valid_utf8(pending_);
  pending_.clear();
  return out;
}

}  // namespace kotae
