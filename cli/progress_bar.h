#pragma once
// A one-line progress bar on a terminal's stderr: files, chunks, MB/s and ETA, redrawn at most ten
// times a second. Silent when stderr is not a terminal, so logs and pipes stay clean.

#include <chrono>
#include <cstdint>
#include <string>

namespace kotae::cli {

class ProgressBar {
 public:
  ProgressBar();  // enabled when stderr is a terminal
  ~ProgressBar();

  void update(std::size_t files_done, std::size_t files_total, std::size_t chunks, std::uint64_t bytes_done,
              std::uint64_t bytes_total, double elapsed_s, bool force = false);
  // Clears the bar so a message can be printed on a clean line; the next update redraws it.
  void clear();
  void finish();

 private:
  bool enabled_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point last_draw_{};
};

}  // namespace kotae::cli
