#include "calibrate/progress.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <unistd.h>

#include <fmt/format.h>

#include "calibrate/cpu/host_timer.h"

namespace trainsim::calibrate {
namespace {

std::string clock_time(double seconds) {
  const long s = static_cast<long>(std::max(0.0, seconds));
  return fmt::format("{:02}:{:02}:{:02}", s / 3600, (s / 60) % 60, s % 60);
}

bool is_terminal(std::FILE* out) {
  const char* term = std::getenv("TERM");
  return isatty(fileno(out)) != 0 && (term == nullptr || std::strcmp(term, "dumb") != 0);
}

}  // namespace

StderrProgress::StderrProgress(std::FILE* out) : out_(out), redraw_(is_terminal(out)) {}

void StderrProgress::start(size_t items) {
  items_ = std::max<size_t>(items, 1);
  done_ = 0;
  start_s_ = cpu::now_s();
  last_print_s_ = start_s_;
  last_print_done_ = 0;
}

std::string StderrProgress::line(const std::string& label) const {
  const double elapsed = cpu::now_s() - start_s_;
  const double fraction = static_cast<double>(done_) / static_cast<double>(items_);
  const std::string eta = done_ == 0 ? "--:--:--" : clock_time(elapsed / fraction - elapsed);
  const int width = static_cast<int>(std::to_string(items_).size());
  return fmt::format("[{:>{}}/{}] {:5.1f}% | elapsed {} | eta {} | {}", done_, width, items_,
                     100.0 * fraction, clock_time(elapsed), eta, label);
}

void StderrProgress::step(const std::string& label) {
  const double now = cpu::now_s();
  if (redraw_) {
    std::fprintf(out_, "\r\033[K%s", line(label).c_str());
  } else if (done_ == 0 || now - last_print_s_ >= 30.0 || (done_ - last_print_done_) * 10 >= items_) {
    std::fprintf(out_, "calibrate: %s\n", line(label).c_str());
    last_print_s_ = now;
    last_print_done_ = done_;
  }
  std::fflush(out_);
  ++done_;
}

void StderrProgress::finish() {
  const std::string summary =
      fmt::format("calibrate: {} items in {}", done_, clock_time(cpu::now_s() - start_s_));
  std::fprintf(out_, redraw_ ? "\r\033[K%s\n" : "%s\n", summary.c_str());
  std::fflush(out_);
}

}  // namespace trainsim::calibrate
