// The two readers behind read_nccl_tests (log.h), on a file's text. `file` names it in errors.
#ifndef TRAINSIM_CALIBRATE_NCCL_TESTS_PARSERS_H_
#define TRAINSIM_CALIBRATE_NCCL_TESTS_PARSERS_H_

#include <string>
#include <string_view>

#include "calibrate/nccl_tests/log.h"

namespace trainsim::calibrate {

// nccl-tests' stdout, v2.x: the "# nThread ..." header, "#  Rank ..." lines, the column header and
// its units row, data rows (out-of-place, then in-place columns), the footer. The layout of the rows
// is read from the column header, so older versions (no root column, "error" for "#wrong") and
// per-iteration columns (-R) parse too. Throws config::ConfigError located at the offending line and
// column.
NcclTestsLog parse_nccl_tests_text(std::string_view text, const std::string& file);

// nccl-tests' JSON (-J): version, args, nccl_version, config (with devices), results,
// out_of_bounds, average_bus_bandwidth, errors. Throws config::ConfigError at the line and column
// of a syntax error, or naming the key path of a missing or mistyped value.
NcclTestsLog parse_nccl_tests_json(std::string_view text, const std::string& file);

// Checks shared by both readers once the rows are in: the program is known (from the log, else
// from the file name), there are ranks and rows, sizes increase, one datatype and operation, every
// row's busbw/algbw matches the collective's factor over the log's ranks, and nothing was reported
// wrong. Sets log.kind, rank_count and node_count. Errors are located at the row's line (text) or
// its index in "results" (JSON). Throws config::ConfigError.
void finish_log(NcclTestsLog& log);

}  // namespace trainsim::calibrate

#endif  // TRAINSIM_CALIBRATE_NCCL_TESTS_PARSERS_H_
