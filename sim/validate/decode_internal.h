// Internal to sim/validate: the pieces the case and suite decoders share. Reading a file with its
// `extends` chain into located YAML layers, percentages, and the load functions of each file kind.
#ifndef TRAINSIM_SIM_VALIDATE_DECODE_INTERNAL_H_
#define TRAINSIM_SIM_VALIDATE_DECODE_INTERNAL_H_

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "sim/config/diagnostics.h"
#include "sim/config/loader.h"
#include "sim/config/node.h"
#include "sim/validate/case.h"

namespace trainsim::validate::internal {

// The file name shown in messages: relative to the working directory when that is shorter.
using config::display_name;

// Reading state shared by all the files of one validation set.
struct Reader {
  config::Diagnostics diagnostics;
  std::set<std::filesystem::path> failed;  // files already reported as unusable (shared bases)
};

// Reads `path` and the chain of files it extends into layers, highest priority first, checking
// schema_version in each. Errors are recorded once per file: a broken shared base is reported once,
// not by every case that extends it. Returns false when nothing usable was read.
bool load_file(const std::filesystem::path& path, Reader& reader, std::vector<config::Layer>& out);

// Where things were written, for the errors that only the whole set reveals.
struct Located {
  config::Location id;                         // a case's validation.id or a suite's `suite` key
  std::vector<config::Location> shape_checks;  // a suite's shape checks, in order
};

// Decode one case or suite file and append it (with where it was written) when it has no error.
void load_case(const std::filesystem::path& path, Reader& reader, std::vector<Case>& cases,
               std::vector<Located>& located);
void load_suite(const std::filesystem::path& path, Reader& reader, std::vector<Suite>& suites,
                std::vector<Located>& located);

}  // namespace trainsim::validate::internal

#endif  // TRAINSIM_SIM_VALIDATE_DECODE_INTERNAL_H_
