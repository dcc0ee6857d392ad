#include "sim/config/units.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "sim/config/diagnostics.h"

namespace trainsim::config {
namespace {

struct Unit {
  std::string_view symbol;
  double scale;  // to base units
};

constexpr double kKi = 1024.0;
constexpr double kDecimal[] = {1.0, 1e3, 1e6, 1e9, 1e12, 1e15};

constexpr auto kByteUnits = std::to_array<Unit>({
    {"B", 1.0},
    {"KB", 1e3},
    {"MB", 1e6},
    {"GB", 1e9},
    {"TB", 1e12},
    {"PB", 1e15},
    {"KiB", kKi},
    {"MiB", kKi* kKi},
    {"GiB", kKi* kKi* kKi},
    {"TiB", kKi* kKi* kKi* kKi},
    {"PiB", kKi* kKi* kKi* kKi* kKi},
});
constexpr auto kBandwidthUnits = std::to_array<Unit>({
    {"B/s", 1.0},
    {"KB/s", 1e3},
    {"MB/s", 1e6},
    {"GB/s", 1e9},
    {"TB/s", 1e12},
    {"KiB/s", kKi},
    {"MiB/s", kKi* kKi},
    {"GiB/s", kKi* kKi* kKi},
    {"TiB/s", kKi* kKi* kKi* kKi},
    {"bps", 1.0 / 8},
    {"Kbps", 1e3 / 8},
    {"Mbps", 1e6 / 8},
    {"Gbps", 1e9 / 8},
    {"Tbps", 1e12 / 8},
});
constexpr auto kDurationUnits = std::to_array<Unit>({
    {"ns", 1e-9},
    {"us", 1e-6},
    {"\xC2\xB5s", 1e-6},
    {"ms", 1e-3},
    {"s", 1.0},
    {"min", 60.0},
    {"h", 3600.0},
    {"d", 86400.0},
});
constexpr auto kFlopRateUnits = std::to_array<Unit>({
    {"FLOP/s", 1.0},
    {"GFLOP/s", 1e9},
    {"TFLOP/s", 1e12},
    {"PFLOP/s", 1e15},
    {"FLOPS", 1.0},
    {"GFLOPS", 1e9},
    {"TFLOPS", 1e12},
    {"PFLOPS", 1e15},
});
constexpr auto kFrequencyUnits = std::to_array<Unit>({
    {"Hz", 1.0},
    {"kHz", 1e3},
    {"MHz", 1e6},
    {"GHz", 1e9},
});
constexpr auto kPowerUnits = std::to_array<Unit>({
    {"W", 1.0},
    {"kW", 1e3},
    {"MW", 1e6},
});

std::vector<Unit> units_of(QuantityKind kind) {
  switch (kind) {
    case QuantityKind::kBytes:
      return {kByteUnits.begin(), kByteUnits.end()};
    case QuantityKind::kBandwidth:
      return {kBandwidthUnits.begin(), kBandwidthUnits.end()};
    case QuantityKind::kDuration:
      return {kDurationUnits.begin(), kDurationUnits.end()};
    case QuantityKind::kFlopRate:
      return {kFlopRateUnits.begin(), kFlopRateUnits.end()};
    case QuantityKind::kFrequency:
      return {kFrequencyUnits.begin(), kFrequencyUnits.end()};
    case QuantityKind::kPower:
      return {kPowerUnits.begin(), kPowerUnits.end()};
  }
  return {};
}

std::string_view example_of(QuantityKind kind) {
  switch (kind) {
    case QuantityKind::kBytes:
      return "80GiB";
    case QuantityKind::kBandwidth:
      return "450GB/s or 400Gbps";
    case QuantityKind::kDuration:
      return "1.5us";
    case QuantityKind::kFlopRate:
      return "312TFLOP/s";
    case QuantityKind::kFrequency:
      return "1410MHz";
    case QuantityKind::kPower:
      return "700W";
  }
  return "";
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Splits a leading decimal number from the rest. Returns false when there is no number.
bool split_number(std::string_view text, double* number, std::string_view* rest) {
  const char* begin = text.data();
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(begin, end, *number, std::chars_format::general);
  if (ec != std::errc() || ptr == begin) return false;
  *rest = trim(std::string_view(ptr, static_cast<size_t>(end - ptr)));
  return true;
}

// Shortest round-trip decimal spelling of `x`.
std::string shortest(double x) { return fmt::format("{}", x); }

}  // namespace

std::string_view quantity_name(QuantityKind kind) {
  switch (kind) {
    case QuantityKind::kBytes:
      return "size";
    case QuantityKind::kBandwidth:
      return "bandwidth";
    case QuantityKind::kDuration:
      return "duration";
    case QuantityKind::kFlopRate:
      return "FLOP rate";
    case QuantityKind::kFrequency:
      return "frequency";
    case QuantityKind::kPower:
      return "power";
  }
  return "quantity";
}

std::optional<double> parse_quantity(std::string_view text, QuantityKind kind, std::string* error) {
  const std::string_view trimmed = trim(text);
  const std::vector<Unit> units = units_of(kind);
  std::vector<std::string> symbols;
  for (const Unit& u : units) symbols.emplace_back(u.symbol);
  const std::string expected =
      fmt::format("expected a {} with a unit, e.g. {}", quantity_name(kind), example_of(kind));

  double number = 0;
  std::string_view unit_text;
  if (!split_number(trimmed, &number, &unit_text)) {
    *error = fmt::format("{}, got \"{}\"", expected, text);
    return std::nullopt;
  }
  if (unit_text.empty()) {
    *error = fmt::format("{}; \"{}\" has no unit", expected, text);
    return std::nullopt;
  }
  if (!std::isfinite(number) || number < 0) {
    *error = fmt::format("a {} must be finite and not negative, got \"{}\"", quantity_name(kind), text);
    return std::nullopt;
  }
  for (const Unit& u : units) {
    if (u.symbol != unit_text) continue;
    if (!std::isfinite(number * u.scale)) {
      *error = fmt::format("{} \"{}\" is out of range", quantity_name(kind), text);
      return std::nullopt;
    }
    return number * u.scale;
  }
  std::string hint = did_you_mean(std::string(unit_text), symbols);
  if (kind == QuantityKind::kBytes && unit_text.size() >= 2 && unit_text.back() == 'b') {
    hint = " (sizes are in bytes: write B, not b)";
  }
  *error = fmt::format("unknown {} unit \"{}\" in \"{}\"{}; use one of {}", quantity_name(kind), unit_text,
                       text, hint, fmt::join(symbols, ", "));
  return std::nullopt;
}

std::string format_quantity(double value, QuantityKind kind) {
  const std::vector<Unit> units = units_of(kind);
  if (value == 0) return fmt::format("0{}", units.front().symbol);
  // The shortest spelling that is exact to 1e-9 with at most three decimals; ties go to the larger
  // unit. Aliases (µs, FLOPS) and bit rates are never chosen: byte rates read more easily.
  std::string best;
  double best_scale = 0;
  for (const Unit& u : units) {
    const double scaled = value / u.scale;
    // Beyond 2^52 a double has no fraction to round (and scaled * 1000 could overflow).
    const double rounded = std::abs(scaled) >= 0x1p52 ? scaled : std::round(scaled * 1000) / 1000;
    if (!std::isfinite(rounded) || rounded == 0 || std::abs(rounded * u.scale - value) > 1e-9 * value)
      continue;
    std::string candidate = shortest(rounded) + std::string(u.symbol);
    const bool shorter = best.empty() || candidate.size() < best.size() ||
                         (candidate.size() == best.size() && u.scale > best_scale);
    const bool alias = u.symbol == "\xC2\xB5s" || u.symbol.find("FLOPS") != std::string_view::npos ||
                       u.symbol.find("bps") != std::string_view::npos;
    if (shorter && !alias) {
      best = std::move(candidate);
      best_scale = u.scale;
    }
  }
  if (!best.empty()) return best;
  // Not short in any unit: the exact value in the smallest unit it stays finite in.
  const Unit* smallest = nullptr;
  for (const Unit& u : units) {
    if (std::isfinite(value / u.scale) && (smallest == nullptr || u.scale < smallest->scale)) smallest = &u;
  }
  return shortest(value / smallest->scale) + std::string(smallest->symbol);
}

std::optional<int64_t> parse_count(std::string_view text, std::string* error) {
  const std::string_view trimmed = trim(text);
  int64_t number = 0;
  const char* begin = trimmed.data();
  const char* end = trimmed.data() + trimmed.size();
  const auto [ptr, ec] = std::from_chars(begin, end, number);
  if (ec != std::errc() || ptr == begin) {
    *error = fmt::format("expected a whole number such as 131072 or 128Ki, got \"{}\"", text);
    return std::nullopt;
  }
  const std::string_view suffix(ptr, static_cast<size_t>(end - ptr));
  int64_t scale = 1;
  if (suffix == "Ki") {
    scale = int64_t{1} << 10;
  } else if (suffix == "Mi") {
    scale = int64_t{1} << 20;
  } else if (suffix == "Gi") {
    scale = int64_t{1} << 30;
  } else if (suffix == "K" || suffix == "k" || suffix == "M" || suffix == "G") {
    const int64_t binary_scale = int64_t{1} << (suffix == "M" ? 20 : suffix == "G" ? 30 : 10);
    const int64_t decimal_scale = suffix == "M" ? 1000000 : suffix == "G" ? 1000000000 : 1000;
    const std::string binary_suffix = (suffix == "k" ? "K" : std::string(suffix)) + "i";
    int64_t binary = 0;
    int64_t decimal = 0;
    if (__builtin_mul_overflow(number, binary_scale, &binary) ||
        __builtin_mul_overflow(number, decimal_scale, &decimal)) {  // too large either way
      *error = fmt::format("\"{}\" is ambiguous (write {}{} for powers of 1024) and out of range", text,
                           number, binary_suffix);
    } else {
      *error = fmt::format("\"{}\" is ambiguous: write {}{} for {} or {} for {}", text, number, binary_suffix,
                           binary, decimal, decimal);
    }
    return std::nullopt;
  } else if (!suffix.empty()) {
    *error =
        fmt::format("unknown count suffix \"{}\" in \"{}\"; use Ki, Mi or Gi (powers of 1024)", suffix, text);
    return std::nullopt;
  }
  if (number < 0 || number > (std::numeric_limits<int64_t>::max() / scale)) {
    *error = fmt::format("count \"{}\" is out of range", text);
    return std::nullopt;
  }
  return number * scale;
}

std::string format_count(int64_t value) {
  for (const auto& [shift, suffix] : {std::pair{30, "Gi"}, std::pair{20, "Mi"}, std::pair{10, "Ki"}}) {
    const int64_t unit = int64_t{1} << shift;
    if (value >= unit && value % unit == 0) return fmt::format("{}{}", value / unit, suffix);
  }
  return std::to_string(value);
}

namespace {

constexpr auto kTokenSuffixes = std::to_array<Unit>({{"K", 1e3}, {"M", 1e6}, {"B", 1e9}, {"T", 1e12}});

}  // namespace

std::optional<double> parse_token_total(std::string_view text, std::string* error) {
  double number = 0;
  std::string_view suffix;
  if (!split_number(trim(text), &number, &suffix)) {
    *error = fmt::format("expected a token count such as 15.6T, 300B or 1.5e13, got \"{}\"", text);
    return std::nullopt;
  }
  double scale = 1;
  if (!suffix.empty()) {
    const auto unit = std::find_if(kTokenSuffixes.begin(), kTokenSuffixes.end(),
                                   [&](const Unit& u) { return u.symbol == suffix; });
    if (unit == kTokenSuffixes.end()) {
      *error = fmt::format(
          "unknown token-count suffix \"{}\" in \"{}\"; use K, M, B or T (powers of ten: 15.6T "
          "is 1.56e13 tokens)",
          suffix, text);
      return std::nullopt;
    }
    scale = unit->scale;
  }
  if (!std::isfinite(number * scale) || number <= 0) {
    *error = fmt::format("a token count must be positive and finite, got \"{}\"", text);
    return std::nullopt;
  }
  return number * scale;
}

std::string format_token_total(double value) {
  for (auto unit = kTokenSuffixes.rbegin(); unit != kTokenSuffixes.rend(); ++unit) {
    const double scaled = value / unit->scale;
    if (scaled >= 1 && scaled * unit->scale == value) return shortest(scaled) + std::string(unit->symbol);
  }
  return shortest(value);
}

std::string format_bytes_rounded(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024 && u < 4) {
    bytes /= 1024;
    ++u;
  }
  return fmt::format("{:.2f} {}", bytes, units[u]);
}

}  // namespace trainsim::config
