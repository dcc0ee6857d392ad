#include "calibrate/profile/content_hash.h"

#include "sim/common/hash.h"

namespace trainsim::calibrate {
namespace {

constexpr std::string_view kTitle =
    "# trainsim hardware profile. Immutable: `trainsim calibrate verify FILE` checks the hash below.\n";
constexpr std::string_view kPrefix = "# content_hash: ";

}  // namespace

std::string with_content_hash(std::string_view body) {
  std::string text(kTitle);
  text += kPrefix;
  text += fnv1a64_hex(body);
  text += " (of every byte after this line)\n";
  text += body;
  return text;
}

HashCheck check_content_hash(std::string_view text) {
  HashCheck check;
  const size_t first = text.find('\n');
  if (first == std::string_view::npos) return check;
  const size_t second = text.find('\n', first + 1);
  if (second == std::string_view::npos) return check;
  const std::string_view line = text.substr(first + 1, second - first - 1);
  if (line.substr(0, kPrefix.size()) != kPrefix) return check;
  const std::string_view rest = line.substr(kPrefix.size());
  check.has_hash = true;
  check.recorded = std::string(rest.substr(0, rest.find(' ')));
  check.actual = fnv1a64_hex(text.substr(second + 1));
  return check;
}

}  // namespace trainsim::calibrate
