#include "cli/progress_bar.h"

#include <unistd.h>

#include <cstdio>

namespace kotae::cli {

ProgressBar::ProgressBar() : enabled_(isatty(STDERR_FILENO) == 1) {}
ProgressBar::~ProgressBar() {
  finish();
}

void ProgressBar::update(std::size_t files_done, std::size_t files_total, std::size_t chunks, std::uint64_t bytes_done,
                         std::uint64_t bytes_total, double elapsed_s, bool force) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (!force && drawn_ && now - last_draw_ < std::chrono::milliseconds(100)) return;
  last_draw_ = now;
  constexpr int kWidth = 24;
  const double fraction = bytes_total ? double(bytes_done) / double(bytes_total)
                                      : (files_total ? double(files_done) / double(files_total) : 1.0);
  const int filled = static_cast<int>(fraction * kWidth + 0.5);
  const double mb_per_s = elapsed_s > 0 ? double(bytes_done) / 1e6 / elapsed_s : 0;
  std::string eta = "--:--";
  if (fraction > 0 && fraction < 1 && elapsed_s > 0.5) {
    const long remaining = static_cast<long>(elapsed_s * (1 - fraction) / fraction);
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%ld:%02ld", remaining / 60, remaining % 60);
    eta = buffer;
  }
  std::fprintf(stderr, "\r\033[K[%.*s%.*s] %zu/%zu files  %zu chunks  %.2f MB/s  ETA %s", filled,
               "########################", kWidth - filled, "------------------------", files_done, files_total, chunks,
               mb_per_s, eta.c_str());
  std::fflush(stderr);
  drawn_ = true;
}

void ProgressBar::clear() {
  if (enabled_ && drawn_) std::fprintf(stderr, "\r\033[K");
  drawn_ = false;
}

void ProgressBar::finish() {
  if (enabled_ && drawn_) std::fprintf(stderr, "\n");
  drawn_ = false;
}

}  // namespace kotae::cli
