// Strict parsing and canonical formatting of quantities with units, as written in the input files
// and on the command line. A bare number is never accepted where a unit is needed: "80" is an
// error, "80GiB" is not. Values are returned in base units: bytes, bytes/s, seconds, FLOP/s, Hz, W.
#ifndef TRAINSIM_SIM_CONFIG_UNITS_H_
#define TRAINSIM_SIM_CONFIG_UNITS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace trainsim::config {

enum class QuantityKind {
  kBytes,      // B, KB, MB, GB, TB, PB (10^3 steps); KiB, MiB, GiB, TiB, PiB (2^10 steps)
  kBandwidth,  // bytes/s: B/s, KB/s ... TB/s, KiB/s ... TiB/s; bits/s: bps, Kbps, Mbps, Gbps, Tbps
  kDuration,   // ns, us (or µs), ms, s, min, h, d
  kFlopRate,   // FLOP/s, GFLOP/s, TFLOP/s, PFLOP/s (also spelt GFLOPS, TFLOPS, PFLOPS)
  kFrequency,  // Hz, kHz, MHz, GHz
  kPower,      // W, kW, MW
};

// What a quantity of `kind` is called in messages ("size", "bandwidth", ...).
std::string_view quantity_name(QuantityKind kind);

// Parses "80GiB", "1.5 us", "400Gbps". On failure returns nullopt and sets *error to a sentence
// saying what was expected (with a did-you-mean for misspelt units).
std::optional<double> parse_quantity(std::string_view text, QuantityKind kind, std::string* error);

// The shortest exact spelling of `value` in a unit of `kind`: 85899345920 bytes -> "80GiB",
// 2.5e10 bytes/s -> "25GB/s", 1.5e-6 s -> "1.5us".
std::string format_quantity(double value, QuantityKind kind);

// Parses a token or element count: a plain integer ("131072") or one with a binary suffix
// ("128Ki" = 131072, "2Mi" = 2097152, "1Gi"). "128K" and "2M" are refused as ambiguous.
std::optional<int64_t> parse_count(std::string_view text, std::string* error);

// The shortest exact spelling of a count: 2097152 -> "2Mi", 1000 -> "1000".
std::string format_count(int64_t value);

// Parses a total token count as training runs are quoted, in powers of ten: "15.6T" (10^12), "300B"
// (10^9), "50M" (10^6), "20K" (10^3) or a plain number ("1.5e13"). On failure returns nullopt and
// sets *error.
std::optional<double> parse_token_total(std::string_view text, std::string* error);

// The shortest spelling parse_token_total reads back exactly: 1.56e13 -> "15.6T", 1000 -> "1K".
std::string format_token_total(double value);

// Bytes in one GiB, for tables that print sizes in GiB.
inline constexpr double kBytesPerGiB = 1024.0 * 1024.0 * 1024.0;

// A byte count for tables, rounded to two decimals in the largest binary unit up to TiB that keeps it
// at least 1: 1536 -> "1.50 KiB", 100 -> "100.00 B". Not parseable back (see format_quantity).
std::string format_bytes_rounded(double bytes);

}  // namespace trainsim::config

#endif  // TRAINSIM_SIM_CONFIG_UNITS_H_
