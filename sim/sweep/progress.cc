#include "sim/sweep/progress.h"

#include <cmath>

#include <fmt/format.h>

namespace trainsim::sweep {
namespace {

std::string duration_text(double s) {
  if (s < 90) return fmt::format("{:.0f} s", s);
  if (s < 90 * 60) return fmt::format("{:.0f} min", s / 60);
  return fmt::format("{:.1f} h", s / 3600);
}

}  // namespace

std::string ProgressState::summary() const {
  const double percent = total > 0 ? 100.0 * static_cast<double>(done) / static_cast<double>(total) : 100.0;
  std::string out = fmt::format("{}/{} points ({:.0f}%)", done, total, percent);
  if (done > 0 && elapsed_s > 0) {
    const double rate = static_cast<double>(done) / elapsed_s;
    out += rate >= 1 ? fmt::format(", {:.1f} points/s", rate) : fmt::format(", {:.1f} points/min", rate * 60);
    if (done < total)
      out += fmt::format(", {} left", duration_text(static_cast<double>(total - done) / rate));
  }
  if (!by_status.empty()) {
    std::string counts;
    for (const auto& [status, n] : by_status)
      counts += fmt::format("{}{} {}", counts.empty() ? "" : ", ", status, n);
    out += "; ";
    out += counts;
  }
  if (best_tokens_per_s > 0)
    out += fmt::format("; best {:.4g} tokens/s at {}", best_tokens_per_s, best_point);
  return out;
}

std::string ProgressState::bar(size_t width) const {
  const size_t filled = total > 0 ? done * width / total : width;
  std::string out(1, '[');
  out.append(filled, '#');
  out.append(width - filled, '.');
  out.push_back(']');
  return out;
}

Progress::Progress(std::ostream& out, size_t total, bool live, double interval_s)
    : out_(out), live_(live), interval_s_(interval_s), started_(std::chrono::steady_clock::now()) {
  state_.total = total;
}

void Progress::update(const nlohmann::json& result) {
  state_.done += 1;
  state_.by_status[result.value("status", std::string("?"))] += 1;
  if (result.value("status", std::string()) == "ok" && result.contains("tokens_per_s")) {
    const double tokens = result.at("tokens_per_s").get<double>();
    if (tokens > state_.best_tokens_per_s) {
      state_.best_tokens_per_s = tokens;
      std::string values;
      for (const auto& [name, value] : result.at("point").at("values").items()) {
        values += fmt::format("{}{}={}", values.empty() ? "" : " ", name,
                              value.is_string() ? value.get<std::string>() : value.dump());
      }
      state_.best_point = fmt::format("{} ({})", result.at("point").at("id").get<std::string>(), values);
    }
  }
  print(false);
}

void Progress::finish() { print(true); }

void Progress::print(bool final) {
  state_.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  if (live_) {
    out_ << "\r\x1b[K" << state_.bar(24) << ' ' << state_.summary();
    if (final) out_ << '\n';
    out_.flush();
    return;
  }
  if (!final && state_.elapsed_s - last_print_s_ < interval_s_) return;
  last_print_s_ = state_.elapsed_s;
  out_ << "sweep: " << state_.summary() << '\n';
  out_.flush();
}

}  // namespace trainsim::sweep
