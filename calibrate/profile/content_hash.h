// Profiles are immutable and content-hashed. The second line of every profile calibrate writes is
//   # content_hash: fnv1a64:<16 hex digits>
// the FNV-1a hash (sim/common/hash.h, the one the loader reports) of every byte after that line,
// so any later edit is detected (`trainsim calibrate verify`).
#ifndef TRAINSIM_CALIBRATE_PROFILE_CONTENT_HASH_H_
#define TRAINSIM_CALIBRATE_PROFILE_CONTENT_HASH_H_

#include <string>
#include <string_view>

namespace trainsim::calibrate {

// The complete file for a YAML `body`: the two hash lines, then the body.
std::string with_content_hash(std::string_view body);

struct HashCheck {
  bool has_hash = false;  // the file carries a content_hash line where calibrate writes it
  std::string recorded;   // the hash in the file, e.g. "fnv1a64:0123456789abcdef"
  std::string actual;     // the hash of the bytes after that line
  bool ok() const { return has_hash && recorded == actual; }
};

// Checks the text of a profile file.
HashCheck check_content_hash(std::string_view file_text);

}  // namespace trainsim::calibrate

#endif  // TRAINSIM_CALIBRATE_PROFILE_CONTENT_HASH_H_
