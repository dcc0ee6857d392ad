// The summary `trainsim calibrate` prints on stdout after writing a profile: the headline numbers
// and the table of fitted collective models with their goodness of fit.
#ifndef TRAINSIM_CALIBRATE_REPORT_H_
#define TRAINSIM_CALIBRATE_REPORT_H_

#include <string>

#include "calibrate/profile/document.h"

namespace trainsim::calibrate {

// Lines starting with '#' (headline numbers), then the collective-fit table; ends with a newline.
std::string profile_summary(const ProfileDocument& doc);

}  // namespace trainsim::calibrate

#endif  // TRAINSIM_CALIBRATE_REPORT_H_
