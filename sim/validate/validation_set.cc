#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "sim/config/units.h"
#include "sim/validate/case.h"
#include "sim/validate/decode_internal.h"

namespace trainsim::validate {
namespace {

using internal::display_name;
using internal::Located;

template <class E>
std::string_view name_of(E value) {
  for (const auto& [candidate, name] : config::EnumNames<E>::kNames) {
    if (candidate == value) return name;
  }
  return "?";
}

// Cross-file rules: unique case ids and suite names, shape checks naming cases of their suite that
// share one metric.
void check_cross_file(ValidationSet& set, const std::vector<Located>& case_where,
                      const std::vector<Located>& suite_where, config::Diagnostics& diagnostics) {
  std::map<std::string, size_t> ids;
  for (size_t i = 0; i < set.cases.size(); ++i) {
    const auto [it, inserted] = ids.emplace(set.cases[i].id, i);
    if (!inserted) {
      diagnostics.error(case_where[i].id, "validation.id",
                        fmt::format("duplicate case id \"{}\" (also in {})", set.cases[i].id,
                                    set.cases[it->second].display_file));
    }
  }
  std::map<std::string, size_t> names;
  for (size_t i = 0; i < set.suites.size(); ++i) {
    const auto [it, inserted] = names.emplace(set.suites[i].name, i);
    if (!inserted) {
      diagnostics.error(suite_where[i].id, "suite",
                        fmt::format("suite \"{}\" is defined twice (also in {})", set.suites[i].name,
                                    display_name(set.suites[it->second].file)));
    }
    for (size_t k = 0; k < set.suites[i].shape_checks.size(); ++k) {
      const ShapeCheck& check = set.suites[i].shape_checks[k];
      std::set<Metric> metrics;
      for (const std::string& id : check.cases) {
        const auto found = ids.find(id);
        if (found == ids.end()) {
          diagnostics.error(suite_where[i].shape_checks[k], fmt::format("shape_checks[{}].cases", k),
                            fmt::format("no case has id \"{}\"", id));
        } else if (set.cases[found->second].suite != set.suites[i].name) {
          diagnostics.error(suite_where[i].shape_checks[k], fmt::format("shape_checks[{}].cases", k),
                            fmt::format("case \"{}\" belongs to suite \"{}\", not \"{}\"", id,
                                        set.cases[found->second].suite, set.suites[i].name));
        } else {
          metrics.insert(set.cases[found->second].metric);
        }
      }
      if (metrics.size() > 1) {
        diagnostics.error(suite_where[i].shape_checks[k], fmt::format("shape_checks[{}].cases", k),
                          "the cases of a shape check must share one metric");
      }
    }
  }
  for (const Case& c : set.cases) {
    if (names.count(c.suite) == 0) {
      names.emplace(c.suite, set.suites.size());
      set.suites.push_back(Suite{{}, c.suite, {}, std::nullopt, {}});
    }
  }
}

}  // namespace

ValidationSet load_validation_set(const std::filesystem::path& root) {
  internal::Reader reader;
  config::Diagnostics& diagnostics = reader.diagnostics;
  std::vector<std::filesystem::path> case_files, suite_files;
  bool single_case = false;
  std::error_code ec;
  if (std::filesystem::is_directory(root, ec)) {
    std::filesystem::recursive_directory_iterator it(root, ec), end;
    for (; !ec && it != end; it.increment(ec)) {
      if (it->is_directory() && it->path().filename() == "base") {
        it.disable_recursion_pending();
        continue;
      }
      // The accuracy file (accuracy.h) sits beside the suites it summarises; it is no case.
      if (!it->is_regular_file() || it->path().extension() != ".yaml" ||
          it->path().filename() == "accuracy.yaml") {
        continue;
      }
      (it->path().filename() == "suite.yaml" ? suite_files : case_files).push_back(it->path());
    }
    if (ec)
      diagnostics.error({display_name(root)}, "", fmt::format("cannot list the folder: {}", ec.message()));
  } else if (std::filesystem::is_regular_file(root, ec)) {
    single_case = true;
    case_files.push_back(root);
    const std::filesystem::path suite = root.parent_path() / "suite.yaml";
    if (std::filesystem::is_regular_file(suite, ec)) suite_files.push_back(suite);
  } else {
    diagnostics.error({display_name(root)}, "", "no such file or folder");
  }
  std::sort(case_files.begin(), case_files.end());
  std::sort(suite_files.begin(), suite_files.end());

  ValidationSet set;
  std::vector<Located> case_where, suite_where;
  for (const auto& file : suite_files) internal::load_suite(file, reader, set.suites, suite_where);
  for (const auto& file : case_files) internal::load_case(file, reader, set.cases, case_where);
  if (single_case) {
    // One case of a suite: its gate still applies, the shape checks need the other cases.
    for (Suite& suite : set.suites) suite.shape_checks.clear();
    for (Located& where : suite_where) where.shape_checks.clear();
  }
  if (diagnostics.empty() && set.cases.empty()) {
    diagnostics.error({display_name(root)}, "",
                      "no validation cases found (a case is a .yaml file with a "
                      "validation: block; see scenarios/validation/README.md)");
  }
  check_cross_file(set, case_where, suite_where, diagnostics);
  diagnostics.throw_if_any();
  std::sort(set.cases.begin(), set.cases.end(),
            [](const Case& a, const Case& b) { return std::tie(a.suite, a.id) < std::tie(b.suite, b.id); });
  std::sort(set.suites.begin(), set.suites.end(),
            [](const Suite& a, const Suite& b) { return a.name < b.name; });
  return set;
}

std::string_view to_string(Metric metric) { return name_of(metric); }

std::string_view unit_of(Metric metric) {
  switch (metric) {
    case Metric::kIterationTime:
    case Metric::kLayerForward:
    case Metric::kLayerBackward:
      return "s";
    case Metric::kTflopsPerGpu:
    case Metric::kHardwareTflopsPerGpu:
    case Metric::kMegatronDeepspeedTflops:
      return "TFLOP/s";
    case Metric::kMaxSequenceTokens:
      return "tokens";
    case Metric::kTokensPerGpu:
      return "tokens/s";
    case Metric::kMfu:
    case Metric::kHfu:
    case Metric::kExecutedFlopsUtilization:
    case Metric::kMegatronDeepspeedMfu:
    case Metric::kCommVolumeRatio:
      return "";
  }
  return "";
}

std::string format_value(Metric metric, double value) {
  switch (metric) {
    case Metric::kIterationTime:
    case Metric::kLayerForward:
    case Metric::kLayerBackward:
      return value >= 1 ? fmt::format("{:.3f} s", value) : fmt::format("{:.2f} ms", 1e3 * value);
    case Metric::kMaxSequenceTokens:
      return config::format_count(static_cast<int64_t>(value));
    case Metric::kCommVolumeRatio:
      return fmt::format("{:.3f}", value);
    case Metric::kTokensPerGpu:
      return fmt::format("{:.0f} tok/s", value);
    case Metric::kMfu:
    case Metric::kHfu:
    case Metric::kExecutedFlopsUtilization:
    case Metric::kMegatronDeepspeedMfu:
      return fmt::format("{:.1f}%", 100 * value);
    case Metric::kTflopsPerGpu:
    case Metric::kHardwareTflopsPerGpu:
    case Metric::kMegatronDeepspeedTflops:
      return fmt::format("{:.1f} TF/s", value);
  }
  return "";
}

std::string_view to_string(Comparison comparison) { return name_of(comparison); }

std::string_view to_string(Confidence confidence) { return name_of(confidence); }

std::string_view to_string(Network network) { return name_of(network); }
std::string_view to_string(Role role) { return name_of(role); }

std::string_view to_string(ShapeKind kind) { return name_of(kind); }

}  // namespace trainsim::validate
