// The validation report as a table and as CSV (report.h).
#include <fmt/format.h>

#include "sim/common/text_table.h"
#include "sim/validate/report.h"

namespace trainsim::validate {
namespace {

using Align = TextTable::Align;

std::string percent(double fraction) { return fmt::format("{:.2f}%", 100 * fraction); }
std::string signed_percent(double fraction) { return fmt::format("{:+.1f}%", 100 * fraction); }

// A statistic of `e`, "-" when it summarises no case.
std::string statistic_text(const ErrorSummary& e, double value) { return e.cases > 0 ? percent(value) : "-"; }

std::string median_max(const ErrorSummary& e) {
  return e.cases > 0 ? fmt::format("{}/{}", percent(e.median_abs_error), percent(e.max_abs_error)) : "-";
}

std::string comparison_sign(Comparison c) {
  switch (c) {
    case Comparison::kAtLeast:
      return ">=";
    case Comparison::kAtMost:
      return "<=";
    case Comparison::kEqual:
      return "=";
  }
  return "=";
}

const std::vector<TextTable::Column>& case_columns() {
  static const std::vector<TextTable::Column> columns = {
      {"# case", Align::kLeft, 44},     {"status", Align::kLeft, 6},      {"role", Align::kLeft, 5},
      {"confidence", Align::kLeft, 11}, {"source", Align::kLeft, 34},     {"", Align::kRight, 2},
      {"published", Align::kRight, 11}, {"simulated", Align::kRight, 11}, {"error", Align::kRight, 8},
      {"hw.error", Align::kRight, 8},   {"calculon", Align::kRight, 11},  {"c.error", Align::kRight, 8},
      {"compute", Align::kRight, 9},    {"exp.comm", Align::kRight, 9},   {"bubble", Align::kRight, 9},
      {"offload", Align::kRight, 9}};
  return columns;
}

// A case's row, and the lines under it.
void add_case(TextTable& table, const CaseOutcome& o) {
  const Case& c = o.spec;
  const std::string none = "-";
  std::vector<std::string> row = {
      c.id,
      !o.simulated ? "error"
      : o.pass()   ? "pass"
                   : "FAIL",
      std::string(to_string(o.role).substr(0, 5)),
      std::string(to_string(c.confidence)),
      c.where,
      comparison_sign(c.comparison),
      format_value(c.metric, c.published),
      o.simulated ? format_value(c.metric, *o.simulated) : none,
      o.simulated ? signed_percent(o.relative_error()) : none,
      o.hardware_only ? signed_percent(relative_error(*o.hardware_only, c.published)) : none,
      c.calculon ? format_value(c.metric, *c.calculon) : none,
      c.calculon ? signed_percent(relative_error(*c.calculon, c.published)) : none};
  const std::optional<report::Breakdown>& b = o.measurement ? o.measurement->breakdown : std::nullopt;
  if (o.simulated && b) {
    for (const double s : {b->compute_s, b->exposed_comm_s, b->bubble_s, b->offload_stall_s}) {
      row.push_back(fmt::format("{:.4g}", s));
    }
  } else {
    row.resize(case_columns().size());
  }
  table.add_row(std::move(row));
  if (!o.simulated) table.add_line(fmt::format("    error: {}", o.error));
  if (!o.hardware_only && !o.hardware_only_error.empty()) {
    table.add_line(fmt::format("    error on the hardware profile alone: {}", o.hardware_only_error));
  }
  if (o.simulated && !o.measurement->infeasible.empty()) {
    table.add_line(fmt::format("    note: the simulated plan does not fit: {}", o.measurement->infeasible));
  }
}

std::string render_cases(const ValidationReport& report) {
  std::string out, suite;
  TextTable cases(case_columns());
  const auto flush = [&] {
    if (!cases.empty()) out += cases.render();
    cases = TextTable(case_columns());
  };
  for (const CaseOutcome& o : report.cases) {
    if (o.spec.suite != suite) {
      flush();
      suite = o.spec.suite;
      out += fmt::format("\n# suite {} ({})\n", suite, o.spec.paper);
    }
    add_case(cases, o);
  }
  flush();
  for (const CaseOutcome& o : report.cases) {
    if (o.simulated && !o.pass()) {
      out += fmt::format(
          "\n# where a case's simulated time goes (breakdown, why, memory): trainsim run CASE_FILE, e.g.\n"
          "#   trainsim run {}\n",
          o.spec.display_file);
      break;
    }
  }
  return out;
}

std::string render_suites(const ValidationReport& report) {
  std::string out =
      "\n# validation cases only (calibration cases, which stack profiles may be fitted on, in the last "
      "column); hw-only: the same cases on the hardware profiles beneath the stacks\n";
  TextTable suites({{"# suite", Align::kLeft, 22},
                    {"cases", Align::kRight, 5},
                    {"valid", Align::kRight, 5},
                    {"pass", Align::kRight, 5},
                    {"fail", Align::kRight, 5},
                    {"errors"},
                    {"median|e|", Align::kRight, 10},
                    {"p90|e|", Align::kRight, 10},
                    {"max|e|", Align::kRight, 10},
                    {"hw-only med/max", Align::kRight, 17},
                    {"calculon med/max", Align::kRight, 17},
                    {"calib. med/max", Align::kRight, 17}});
  for (const SuiteSummary& s : report.suites) {
    const ErrorSummary& v = s.validation;
    suites.add_row({s.name, std::to_string(s.cases), std::to_string(s.scored), std::to_string(s.passed),
                    std::to_string(s.failed), std::to_string(s.errors), statistic_text(v, v.median_abs_error),
                    statistic_text(v, v.p90_abs_error), statistic_text(v, v.max_abs_error),
                    median_max(s.hardware_only), s.calculon ? median_max(*s.calculon) : "-",
                    median_max(s.calibration)});
  }
  out += suites.render();
  if (!report.by_gpus.empty()) {
    out += "\n# validation error against the GPUs a case runs on (every suite)\n";
    TextTable by_gpus({{"# GPUs", Align::kLeft, 10},
                       {"cases", Align::kRight, 5},
                       {"median|e|", Align::kRight, 10},
                       {"max|e|", Align::kRight, 10}});
    for (const ScaleErrors& row : report.by_gpus) {
      by_gpus.add_row({row.gpus, std::to_string(row.errors.cases), percent(row.errors.median_abs_error),
                       percent(row.errors.max_abs_error)});
    }
    out += by_gpus.render();
  }
  if (!report.accuracy.empty()) {
    out += "\n# error by framework, GPU and scale (what `trainsim run` quotes for its GPU and scale)\n";
    TextTable regimes({{"# framework", Align::kLeft, 19},
                       {"GPU", Align::kLeft, 24},
                       {"GPUs", Align::kLeft, 7},
                       {"role", Align::kLeft, 5},
                       {"cases", Align::kRight, 5},
                       {"median|e|", Align::kRight, 10},
                       {"max|e|", Align::kRight, 10},
                       {"sim. faster", Align::kRight, 11}});
    for (const AccuracyRow& row : report.accuracy) {
      regimes.add_row({row.framework, row.gpu, row.gpus, row.role.substr(0, 5), std::to_string(row.cases),
                       percent(row.median_abs_error), percent(row.max_abs_error),
                       std::to_string(row.simulated_faster)});
    }
    out += regimes.render();
  }
  return out;
}

std::string render_checks(const ValidationReport& report) {
  std::string out;
  if (!report.shape_checks.empty()) out += "\n# shape checks (simulated; published)\n";
  for (const ShapeOutcome& s : report.shape_checks) {
    out += fmt::format("{:<4} {}: {}\n     simulated: {}\n     published: {}{}\n",
                       s.simulated.pass ? "pass" : "FAIL", s.suite, s.check.name, s.simulated.detail,
                       s.published.detail, s.published.pass ? "" : " (the published data does not hold it)");
  }
  const GateOutcome& gate = report.gate;
  if (!gate.thresholds.empty()) {
    out += fmt::format("\n# gate{}: ", gate.applied ? "" : " (not applied; --gate applies it)");
    std::string sep;
    for (const auto& [name, t] : gate.thresholds) {
      out += fmt::format("{}{} median |error| <= {}", sep, name, percent(t.median_abs_error));
      if (t.max_abs_error) out += fmt::format(", every case <= {}", percent(*t.max_abs_error));
      sep = "; ";
    }
    out += fmt::format(" -> {}\n", gate.pass() ? "holds" : "violated");
    for (const std::string& v : gate.violations) out += fmt::format("  {}\n", v);
  }
  return out;
}

std::string csv_number(std::optional<double> v) { return v ? fmt::format("{:.9g}", *v) : std::string(); }

std::string csv_quoted(const std::string& text) {
  if (text.empty()) return text;
  std::string out = "\"";
  for (char ch : text) out += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return out + "\"";
}

}  // namespace

std::string render_table(const ValidationReport& report) {
  const size_t cases = report.cases.size(), suites = report.suites.size();
  return fmt::format(
             "# trainsim validate: {} case{} in {} suite{} ({} jobs, {:.1f} s wall, {:.1f} s CPU in the "
             "cases)\n",
             cases, cases == 1 ? "" : "s", suites, suites == 1 ? "" : "s", report.jobs, report.wall_s,
             report.cpu_s) +
         render_cases(report) + render_suites(report) + render_checks(report);
}

std::string render_csv(const ValidationReport& report) {
  std::string out =
      "id,suite,role,profile,gpus,metric,comparison,confidence,published,simulated,relative_error,pass,"
      "hardware_only_simulated,hardware_only_relative_error,calculon,calculon_relative_error,compute_s,"
      "exposed_comm_s,bubble_s,offload_stall_s,error\n";
  for (const CaseOutcome& o : report.cases) {
    const Case& c = o.spec;
    const std::optional<Measurement>& m = o.measurement;
    std::string breakdown = ",,,";
    if (o.simulated && m->breakdown) {
      const report::Breakdown& b = *m->breakdown;
      breakdown = fmt::format("{:.9g},{:.9g},{:.9g},{:.9g}", b.compute_s, b.exposed_comm_s, b.bubble_s,
                              b.offload_stall_s);
    }
    const auto error_of = [&](std::optional<double> v) {
      return v ? std::optional<double>(relative_error(*v, c.published)) : std::nullopt;
    };
    out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", c.id, c.suite,
                       to_string(o.role), m ? m->profile : "", m ? std::to_string(m->gpus) : "",
                       to_string(c.metric), to_string(c.comparison), to_string(c.confidence),
                       csv_number(c.published), csv_number(o.simulated), csv_number(error_of(o.simulated)),
                       o.simulated ? (o.pass() ? "true" : "false") : "", csv_number(o.hardware_only),
                       csv_number(error_of(o.hardware_only)), csv_number(c.calculon),
                       csv_number(error_of(c.calculon)), breakdown, csv_quoted(o.error));
  }
  return out;
}

}  // namespace trainsim::validate
