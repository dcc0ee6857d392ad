// Writing hardware profiles: YAML in exactly the schema sim/config decodes (load_hardware reads back
// the same values), quantities with units, one flow map per table row, and files that are written
// atomically and never replaced by accident.
#ifndef TRAINSIM_CALIBRATE_PROFILE_WRITER_H_
#define TRAINSIM_CALIBRATE_PROFILE_WRITER_H_

#include <filesystem>
#include <stdexcept>
#include <string>

#include "calibrate/profile/document.h"

namespace trainsim::calibrate {

// The YAML of `doc` without the content-hash lines: `schema_version: 1`, then name, gpu, host_link,
// host_memory, compute, the five tables, provenance and sources. Values that are 0 or empty ("not
// given" in the schema: a sample's unrecorded spread, an unknown software version) are left out.
// Sources must cover every number written (the loader checks).
std::string profile_yaml(const ProfileDocument& doc);

// The complete file: content-hash lines (profile/content_hash.h), doc.header as comments, the YAML.
std::string profile_file_text(const ProfileDocument& doc);

// Writing over an existing profile without being asked to.
class ProfileExistsError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Writes `doc` to `path`: to a temporary file in the same directory, flushed to disk, made
// read-only, then renamed over `path`, so `path` is never half-written. Refuses (throws
// ProfileExistsError) when `path` exists, unless `replace`. Throws std::runtime_error when the
// directory cannot be written.
void write_profile(const std::filesystem::path& path, const ProfileDocument& doc, bool replace);

}  // namespace trainsim::calibrate

#endif  // TRAINSIM_CALIBRATE_PROFILE_WRITER_H_
