#include "sim/sweep/check.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <signal.h>

#include <fmt/format.h>

#include "sim/common/isolated.h"

namespace trainsim::sweep {
namespace {

using nlohmann::json;

std::string values_text(const Point& p) {
  std::string out;
  for (const Coordinate& c : p.coordinates)
    out += fmt::format("{}{}={}", out.empty() ? "" : " ", c.name, c.text);
  return out;
}

bool has_time(const json& r) {
  return r.contains("iteration_time_s") && r.at("iteration_time_s").is_number();
}

}  // namespace

std::vector<size_t> draw(const std::vector<size_t>& population, size_t k, uint64_t seed) {
  // Fisher-Yates on mt19937_64's raw output: std::uniform_int_distribution differs between
  // standard libraries, the engine does not.
  std::vector<size_t> pool = population;
  std::mt19937_64 engine(seed);
  const size_t n = std::min(k, pool.size());
  for (size_t i = 0; i < n; ++i) {
    const size_t j = i + static_cast<size_t>(engine() % (pool.size() - i));
    std::swap(pool[i], pool[j]);
  }
  pool.resize(n);
  return pool;
}

std::vector<CheckRow> check_analytic(const SweepFile& sweep, const std::vector<const Point*>& points,
                                     const EvaluateOptions& simulation, int jobs, double time_limit_s) {
  std::vector<CheckRow> rows(points.size());
  run_isolated(
      points.size(), {std::max(1, jobs), time_limit_s},
      [&](size_t i) {
        ::signal(SIGINT, SIG_DFL);
        ::signal(SIGTERM, SIG_DFL);
        const json analytic = evaluate_point(sweep, *points[i], {Mode::kAnalytic, simulation.network});
        const json simulated =
            evaluate_point(sweep, *points[i],
                           {Mode::kSimulate, simulation.network, simulation.full, simulation.all_traffic});
        return json{{"analytic", analytic}, {"simulated", simulated}};
      },
      [&](size_t i, IsolatedResult r) {
        CheckRow& row = rows[i];
        row.point = points[i];
        if (!r.ok) {
          row.analytic_status = row.simulated_status = "failed";
          row.note = r.error;
          return;
        }
        const json& a = r.value.at("analytic");
        const json& s = r.value.at("simulated");
        row.analytic_status = a.at("status").get<std::string>();
        row.simulated_status = s.at("status").get<std::string>();
        if (has_time(a)) row.analytic_s = a.at("iteration_time_s").get<double>();
        if (has_time(s)) row.simulated_s = s.at("iteration_time_s").get<double>();
        row.compared = has_time(a) && has_time(s) && row.simulated_s > 0;
        if (row.compared) {
          row.relative_error = (row.analytic_s - row.simulated_s) / row.simulated_s;
        } else {
          row.note = !has_time(s) ? s.at("reason").get<std::string>() : a.at("reason").get<std::string>();
        }
      });
  return rows;
}

std::string render_check(const std::vector<CheckRow>& rows, uint64_t seed) {
  std::string out =
      fmt::format("# closed form vs simulation, {} points drawn with seed {}\n", rows.size(), seed);
  out += fmt::format("# {:<12} {:>14} {:>14} {:>9}  {}\n", "point", "closed form", "simulated", "error",
                     "values / status");
  out += fmt::format("# {:<12} {:>14} {:>14} {:>9}\n", "", "(s)", "(s)", "(%)");
  std::vector<double> errors;
  const CheckRow* worst = nullptr;
  for (const CheckRow& r : rows) {
    if (r.compared) {
      out += fmt::format("  {:<12} {:>14.6g} {:>14.6g} {:>+9.2f}  {}\n", r.point->id, r.analytic_s,
                         r.simulated_s, 100 * r.relative_error, values_text(*r.point));
      errors.push_back(std::abs(r.relative_error));
      if (worst == nullptr || std::abs(r.relative_error) > std::abs(worst->relative_error)) worst = &r;
    } else {
      out +=
          fmt::format("  {:<12} {:>14} {:>14} {:>9}  {} [closed form {}, simulation {}: {}]\n", r.point->id,
                      "-", "-", "-", values_text(*r.point), r.analytic_status, r.simulated_status, r.note);
    }
  }
  if (errors.empty()) return out + "# no point has both an estimate and a simulation to compare\n";
  std::sort(errors.begin(), errors.end());
  const size_t n = errors.size();
  const double median = n % 2 == 1 ? errors[n / 2] : (errors[n / 2 - 1] + errors[n / 2]) / 2;
  out += fmt::format("# |error| over {} points: median {:.2f}%, max {:.2f}% (point {})\n", n, 100 * median,
                     100 * errors.back(), worst->point->id);
  return out;
}

}  // namespace trainsim::sweep
