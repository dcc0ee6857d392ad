#include "calibrate/cpu/cpu_facts.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <unistd.h>

namespace trainsim::calibrate::cpu {
namespace {

std::string trim(const std::string& text) {
  const size_t begin = text.find_first_not_of(" \t");
  const size_t end = text.find_last_not_of(" \t\r\n");
  return begin == std::string::npos ? "" : text.substr(begin, end - begin + 1);
}

// The value after "key:" on the first line of `file` that starts with `key`.
std::string field(const std::string& file, const std::string& key) {
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);) {
    if (line.compare(0, key.size(), key) != 0) continue;
    const size_t colon = line.find(':');
    if (colon != std::string::npos) return trim(line.substr(colon + 1));
  }
  return "";
}

std::string first_line(const std::string& file) {
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);
  return trim(line);
}

// "32768K" or "1024 kB" -> bytes.
double kibibytes(const std::string& text) {
  const double value = std::strtod(text.c_str(), nullptr);
  if (text.find('M') != std::string::npos) return value * 1024 * 1024;
  return value * 1024;
}

double largest_cache_bytes() {
  double largest = 0;
  for (int index = 0; index < 8; ++index) {
    const std::string size =
        first_line("/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/size");
    if (!size.empty()) largest = std::max(largest, kibibytes(size));
  }
  return largest;
}

}  // namespace

HostFacts host_facts() {
  HostFacts facts;
  std::array<char, 256> name{};
  if (gethostname(name.data(), name.size() - 1) == 0) facts.host_name = name.data();
  facts.cpu_name = field("/proc/cpuinfo", "model name");
  facts.logical_cpus = std::max(1U, std::thread::hardware_concurrency());
  const std::string total = field("/proc/meminfo", "MemTotal");
  if (!total.empty()) facts.memory_bytes = kibibytes(total);
  facts.cache_bytes = largest_cache_bytes();
  const std::string max_khz = first_line("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq");
  if (!max_khz.empty()) facts.max_clock_hz = std::strtod(max_khz.c_str(), nullptr) * 1e3;
  return facts;
}

}  // namespace trainsim::calibrate::cpu
