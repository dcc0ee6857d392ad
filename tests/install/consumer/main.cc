// Prints the name and GPU count of the scenario given as the first argument.
#include <iostream>

#include "sim/config/loader.h"

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  const trainsim::config::Scenario s = trainsim::config::load_scenario(argv[1]);
  std::cout << s.name << " " << s.cluster.gpus << " GPUs\n";
  return 0;
}
