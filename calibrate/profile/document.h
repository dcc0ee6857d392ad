// A hardware profile about to be written: the typed values (exactly what sim/config decodes, sources
// included), the comment lines above them, and a comment after each table row (the coefficient of
// variation and rate of a measured median, the goodness of a fit), which the YAML keeps for readers
// and the loader ignores.
#ifndef TRAINSIM_CALIBRATE_PROFILE_DOCUMENT_H_
#define TRAINSIM_CALIBRATE_PROFILE_DOCUMENT_H_

#include <string>
#include <vector>

#include "sim/config/hardware.h"

namespace trainsim::calibrate {

struct ProfileDocument {
  config::HardwareProfile profile;  // path and content_hash are not written
  std::vector<std::string> header;  // comment lines above the YAML, without the leading "# "
  // One entry per row of the matching table of `profile` (or none at all); empty = no comment.
  std::vector<std::string> gemm_comments;
  std::vector<std::string> attention_comments;
  std::vector<std::string> collective_sample_comments;
  std::vector<std::string> collective_fit_comments;
  std::vector<std::string> copy_comments;
  // Things the writer of the document should tell the user (not written to the file).
  std::vector<std::string> warnings;
};

}  // namespace trainsim::calibrate

#endif  // TRAINSIM_CALIBRATE_PROFILE_DOCUMENT_H_
