#include "sim/sweep/expand.h"

#include <algorithm>
#include <charconv>
#include <map>

#include <fmt/format.h>

#include "sim/common/hash.h"
#include "sim/config/units.h"

namespace trainsim::sweep {
namespace {

using Assignment = std::vector<Coordinate>;

constexpr size_t kMaxCombinations = 10'000'000;

// The canonical text of a value for hashing: counts in plain digits ("128Ki" and "131072" are one
// value), anything else as written.
std::string canonical(const std::string& text) {
  std::string error;
  if (const std::optional<int64_t> count = config::parse_count(text, &error)) return std::to_string(*count);
  return text;
}

size_t count_of(const AxisGroup& g) {
  switch (g.kind) {
    case AxisGroup::Kind::kAxis:
      return g.axis.values.size();
    case AxisGroup::Kind::kZip:
      return g.members.empty() ? 0 : count_of(g.members.front());
    case AxisGroup::Kind::kProduct: {
      size_t n = 1;
      for (const AxisGroup& m : g.members) {
        n *= count_of(m);
        if (n > kMaxCombinations) return n;
      }
      return n;
    }
  }
  return 0;
}

std::vector<Assignment> combinations(const AxisGroup& g) {
  std::vector<Assignment> out;
  switch (g.kind) {
    case AxisGroup::Kind::kAxis:
      for (const AxisValue& v : g.axis.values) out.push_back({{g.axis.name, g.axis.key, v.text, v.location}});
      return out;
    case AxisGroup::Kind::kZip: {
      for (const AxisGroup& m : g.members) {
        const std::vector<Assignment> part = combinations(m);
        if (out.empty()) out.resize(part.size());
        for (size_t i = 0; i < out.size() && i < part.size(); ++i) {
          out[i].insert(out[i].end(), part[i].begin(), part[i].end());
        }
      }
      return out;
    }
    case AxisGroup::Kind::kProduct: {
      out.emplace_back();
      for (const AxisGroup& m : g.members) {
        const std::vector<Assignment> part = combinations(m);
        std::vector<Assignment> next;
        next.reserve(out.size() * part.size());
        for (const Assignment& prefix : out) {
          for (const Assignment& suffix : part) {
            next.push_back(prefix);
            next.back().insert(next.back().end(), suffix.begin(), suffix.end());
          }
        }
        out = std::move(next);
      }
      return out;
    }
  }
  return out;
}

std::string point_id(const Assignment& a) {
  std::vector<std::string> parts;
  for (const Coordinate& c : a) parts.push_back(c.key + "=" + canonical(c.text));
  std::sort(parts.begin(), parts.end());
  std::string text;
  for (const std::string& p : parts) text += p + "\n";
  return fmt::format("{:016x}", fnv1a64(text)).substr(0, 12);
}

std::string describe(const Assignment& a) {
  std::vector<std::string> parts;
  for (const Coordinate& c : a) parts.push_back(c.name + "=" + c.text);
  return fmt::format("{}", fmt::join(parts, " "));
}

}  // namespace

nlohmann::json typed_value(const std::string& text) {
  std::string error;
  if (const std::optional<int64_t> count = config::parse_count(text, &error)) return *count;
  double number = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, number);
  if (!text.empty() && ec == std::errc() && ptr == end) return number;
  if (text == "true") return true;
  if (text == "false") return false;
  return text;
}

nlohmann::json Point::values() const {
  nlohmann::json out = nlohmann::json::object();
  for (const Coordinate& c : coordinates) out[c.name] = typed_value(c.text);
  return out;
}

std::vector<Setting> Point::settings(const SweepFile& sweep) const {
  std::vector<Setting> out = sweep.set;
  for (const Coordinate& c : coordinates) out.push_back({c.key, c.text, c.location});
  return out;
}

ExpandedSweep expand(const SweepFile& sweep) {
  ExpandedSweep out;
  for (const Axis* axis : sweep.axis_list()) out.axis_names.push_back(axis->name);
  const size_t total = count_of(sweep.axes);
  if (total > kMaxCombinations) {
    config::throw_config_error({sweep.display_name, 1, 1}, "axes",
                               fmt::format("the axes make more than {} combinations; split the sweep or "
                                           "narrow it with fewer values",
                                           kMaxCombinations));
  }
  const std::vector<Assignment> all = combinations(sweep.axes);
  out.combinations = all.size();
  std::map<std::string, size_t> seen;  // id -> index in `all`
  std::string hashed = fmt::format("sweep\n{}\n", sweep.base_hash);
  for (const Setting& s : sweep.set) hashed += fmt::format("set {}={}\n", s.key, s.value);
  for (size_t i = 0; i < all.size(); ++i) {
    const Assignment& a = all[i];
    const auto lookup = [&](const std::string& name) -> Value {
      for (const Coordinate& c : a) {
        if (c.name == name || c.key == name) return scalar_value(c.text);
      }
      return sweep.base_fields.at(name);
    };
    bool keep = true;
    for (const Filter& f : sweep.filters) {
      try {
        keep = f.expression.holds(lookup);
      } catch (const ExpressionError& e) {
        config::throw_config_error(
            {f.location.file, f.location.line, f.location.column + static_cast<int>(e.offset())}, f.path,
            fmt::format("in filter \"{}\" at the point {}: {}", f.text, describe(a), e.what()));
      }
      if (!keep) break;
    }
    if (!keep) continue;
    const std::string id = point_id(a);
    if (const auto it = seen.find(id); it != seen.end()) {
      config::throw_config_error(a.front().location, "axes",
                                 fmt::format("the point {} comes twice (the values repeat; also as {}); "
                                             "remove the duplicate values",
                                             describe(a), describe(all[it->second])));
    }
    seen[id] = i;
    Point p{out.points.size(), id, a};
    hashed += id;
    for (const Coordinate& c : a) hashed += fmt::format(" {}={}", c.key, canonical(c.text));
    hashed += "\n";
    out.points.push_back(std::move(p));
  }
  out.hash = fnv1a64_hex(hashed);
  return out;
}

}  // namespace trainsim::sweep
