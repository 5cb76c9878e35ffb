#pragma once
// Turns generated pieces into text that is safe to show as it streams: bytes that might begin a stop
// sequence, or that end inside a UTF-8 character, are held back until the next piece decides them;
// the text ends before the first stop sequence, which is never shown. Invalid UTF-8 becomes U+FFFD.

#include <string>
#include <string_view>
#include <vector>

namespace kotae {

class StopSequenceFilter {
 public:
  explicit StopSequenceFilter(std::vector<std::string> stops);

  // Adds a piece; returns the text it makes safe to show (possibly empty). After a stop sequence,
  // stopped() is true and further pieces are ignored.
  std::string push(std::string_view piece);
  // The held-back rest, once generation has ended without a stop sequence.
  std::string finish();
  bool stopped() const { return stopped_; }

 private:
  std::vector<std::string> stops_;
  std::string pending_;
  bool stopped_ = false;
};

}  // namespace kotae
