// What the host machine is, read from the operating system (/proc, /sys, sysconf): the facts of the
// CPU backend's device and the host part of every profile.
#ifndef TRAINSIM_CALIBRATE_CPU_CPU_FACTS_H_
#define TRAINSIM_CALIBRATE_CPU_CPU_FACTS_H_

#include <string>

namespace trainsim::calibrate::cpu {

struct HostFacts {
  std::string host_name;
  std::string cpu_name;     // /proc/cpuinfo "model name"; empty when unknown
  int logical_cpus = 1;     // std::thread::hardware_concurrency, at least 1
  double memory_bytes = 0;  // /proc/meminfo MemTotal; 0 when unknown
  double cache_bytes = 0;   // largest CPU cache level; 0 when unknown
  double max_clock_hz = 0;  // cpufreq cpuinfo_max_freq of cpu0; 0 when unknown
};

// Never throws; fields it cannot read stay at their defaults.
HostFacts host_facts();

}  // namespace trainsim::calibrate::cpu

#endif  // TRAINSIM_CALIBRATE_CPU_CPU_FACTS_H_
