#include "sim/config/units.h"

#include <gtest/gtest.h>

namespace trainsim::config {
namespace {

double parse_ok(std::string_view text, QuantityKind kind) {
  std::string error;
  const std::optional<double> value = parse_quantity(text, kind, &error);
  EXPECT_TRUE(value.has_value()) << text << ": " << error;
  return value.value_or(-1);
}

std::string parse_error(std::string_view text, QuantityKind kind) {
  std::string error;
  EXPECT_FALSE(parse_quantity(text, kind, &error).has_value()) << text;
  return error;
}

TEST(Units, SizesInDecimalAndBinaryUnits) {
  EXPECT_EQ(parse_ok("80GiB", QuantityKind::kBytes), 80.0 * 1024 * 1024 * 1024);
  EXPECT_EQ(parse_ok("80GB", QuantityKind::kBytes), 80e9);
  EXPECT_EQ(parse_ok("1.5 KiB", QuantityKind::kBytes), 1536);
  EXPECT_EQ(parse_ok("0B", QuantityKind::kBytes), 0);
  EXPECT_EQ(parse_ok("2TB", QuantityKind::kBytes), 2e12);
}

TEST(Units, BandwidthInBitsAndBytes) {
  EXPECT_EQ(parse_ok("400Gbps", QuantityKind::kBandwidth), 50e9);
  EXPECT_EQ(parse_ok("450GB/s", QuantityKind::kBandwidth), 450e9);
  EXPECT_EQ(parse_ok("1GiB/s", QuantityKind::kBandwidth), 1024.0 * 1024 * 1024);
}

TEST(Units, DurationsFlopRatesAndFrequencies) {
  EXPECT_DOUBLE_EQ(parse_ok("1.5us", QuantityKind::kDuration), 1.5e-6);
  EXPECT_DOUBLE_EQ(parse_ok("1.5\xC2\xB5s", QuantityKind::kDuration), 1.5e-6);
  EXPECT_DOUBLE_EQ(parse_ok("130ns", QuantityKind::kDuration), 130e-9);
  EXPECT_DOUBLE_EQ(parse_ok("2s", QuantityKind::kDuration), 2);
  EXPECT_DOUBLE_EQ(parse_ok("15min", QuantityKind::kDuration), 900);
  EXPECT_DOUBLE_EQ(parse_ok("2.5h", QuantityKind::kDuration), 9000);
  EXPECT_DOUBLE_EQ(parse_ok("1898d", QuantityKind::kDuration), 1898 * 86400.0);
  EXPECT_EQ(format_quantity(9000, QuantityKind::kDuration), "2.5h");
  EXPECT_EQ(format_quantity(86400 * 30, QuantityKind::kDuration), "30d");
  EXPECT_EQ(parse_ok("312TFLOP/s", QuantityKind::kFlopRate), 312e12);
  EXPECT_EQ(parse_ok("989.5TFLOPS", QuantityKind::kFlopRate), 989.5e12);
  EXPECT_EQ(parse_ok("1410MHz", QuantityKind::kFrequency), 1410e6);
  EXPECT_EQ(parse_ok("700W", QuantityKind::kPower), 700);
  EXPECT_EQ(parse_ok("10.2kW", QuantityKind::kPower), 10200);
  EXPECT_EQ(format_quantity(2.5e6, QuantityKind::kPower), "2.5MW");
}

TEST(Units, BytesRoundedForTables) {
  EXPECT_EQ(format_bytes_rounded(100), "100.00 B");
  EXPECT_EQ(format_bytes_rounded(1536), "1.50 KiB");
  EXPECT_EQ(format_bytes_rounded(3.0 * 1024 * 1024 * 1024), "3.00 GiB");
  EXPECT_EQ(format_bytes_rounded(2048.0 * 1024 * 1024 * 1024 * 1024), "2048.00 TiB");
}

TEST(Units, BareNumberIsRefused) {
  EXPECT_EQ(parse_error("80", QuantityKind::kBytes),
            "expected a size with a unit, e.g. 80GiB; \"80\" has no unit");
  EXPECT_EQ(parse_error("2", QuantityKind::kDuration),
            "expected a duration with a unit, e.g. 1.5us; \"2\" has no unit");
}

TEST(Units, MisspeltUnitGetsAHint) {
  EXPECT_EQ(parse_error("80Gib", QuantityKind::kBytes),
            "unknown size unit \"Gib\" in \"80Gib\" (sizes are in bytes: write B, not b); use one of B, KB, "
            "MB, GB, "
            "TB, PB, KiB, MiB, GiB, TiB, PiB");
  EXPECT_EQ(parse_error("400Gbs", QuantityKind::kBandwidth).substr(0, 63),
            "unknown bandwidth unit \"Gbs\" in \"400Gbs\" (did you mean \"Gbps\"?)");
}

TEST(Units, NegativeNaNAndGarbageAreRefused) {
  EXPECT_EQ(parse_error("-1GB", QuantityKind::kBytes),
            "a size must be finite and not negative, got \"-1GB\"");
  EXPECT_EQ(parse_error("GB", QuantityKind::kBytes), "expected a size with a unit, e.g. 80GiB, got \"GB\"");
  EXPECT_EQ(parse_error("inf GB", QuantityKind::kBytes),
            "a size must be finite and not negative, got \"inf GB\"");
  EXPECT_EQ(parse_error("", QuantityKind::kBandwidth),
            "expected a bandwidth with a unit, e.g. 450GB/s or 400Gbps, got \"\"");
}

TEST(Units, SizeUnitInBandwidthIsRefused) {
  EXPECT_NE(parse_error("80GB", QuantityKind::kBandwidth).find("unknown bandwidth unit \"GB\""),
            std::string::npos);
}

TEST(Units, FormatPicksTheShortestExactUnit) {
  EXPECT_EQ(format_quantity(80.0 * 1024 * 1024 * 1024, QuantityKind::kBytes), "80GiB");
  EXPECT_EQ(format_quantity(80e9, QuantityKind::kBytes), "80GB");
  EXPECT_EQ(format_quantity(25.0 * 1024 * 1024, QuantityKind::kBytes), "25MiB");
  EXPECT_EQ(format_quantity(1000, QuantityKind::kBytes), "1KB");
  EXPECT_EQ(format_quantity(7, QuantityKind::kBytes), "7B");
  EXPECT_EQ(format_quantity(50e9, QuantityKind::kBandwidth), "50GB/s");
  EXPECT_EQ(format_quantity(1.5e-6, QuantityKind::kDuration), "1.5us");
  EXPECT_EQ(format_quantity(130e-9, QuantityKind::kDuration), "130ns");
  EXPECT_EQ(format_quantity(989.5e12, QuantityKind::kFlopRate), "989.5TFLOP/s");
  EXPECT_EQ(format_quantity(0, QuantityKind::kDuration), "0ns");
  EXPECT_EQ(format_quantity(31.5e9, QuantityKind::kBandwidth), "31.5GB/s");
  EXPECT_EQ(format_quantity(1536, QuantityKind::kBytes), "1536B");
  EXPECT_EQ(format_quantity(1.5 * 1024 * 1024, QuantityKind::kBytes), "1.5MiB");
  EXPECT_EQ(format_quantity(1.0 / 3, QuantityKind::kBytes), "0.3333333333333333B");
}

TEST(Units, HugeValuesFormatFinitely) {
  // Found by the units fuzzer: 1e308 s became "infns" (the value in nanoseconds overflowed).
  for (const QuantityKind k : {QuantityKind::kDuration, QuantityKind::kBytes, QuantityKind::kBandwidth,
                               QuantityKind::kFlopRate, QuantityKind::kFrequency, QuantityKind::kPower}) {
    for (const double v : {1e308, 1.7976931348623157e308, 3e300, 1.2345678901234567e20}) {
      const std::string spelt = format_quantity(v, k);
      EXPECT_EQ(spelt.find("inf"), std::string::npos) << spelt;
      EXPECT_NEAR(parse_ok(spelt, k), v, 1e-9 * v) << spelt;
    }
  }
  EXPECT_EQ(format_quantity(1e308, QuantityKind::kDuration), "1e+308s");
}

TEST(Units, FormatRoundTrips) {
  for (const double v : {1.0, 3.0, 1536.0, 31.5e9, 123456789.0, 2e12}) {
    for (const QuantityKind k : {QuantityKind::kBytes, QuantityKind::kBandwidth}) {
      EXPECT_EQ(parse_ok(format_quantity(v, k), k), v) << format_quantity(v, k);
    }
  }
}

TEST(Units, CountsTakeBinarySuffixesOnly) {
  std::string error;
  EXPECT_EQ(parse_count("131072", &error), 131072);
  EXPECT_EQ(parse_count("128Ki", &error), 131072);
  EXPECT_EQ(parse_count("2Mi", &error), 2097152);
  EXPECT_EQ(parse_count("1Gi", &error), int64_t{1} << 30);
  EXPECT_FALSE(parse_count("2M", &error));
  EXPECT_EQ(error, "\"2M\" is ambiguous: write 2Mi for 2097152 or 2000000 for 2000000");
  EXPECT_FALSE(parse_count("128k", &error));
  EXPECT_EQ(error, "\"128k\" is ambiguous: write 128Ki for 131072 or 128000 for 128000");
  EXPECT_FALSE(parse_count("12x", &error));
  EXPECT_EQ(error, "unknown count suffix \"x\" in \"12x\"; use Ki, Mi or Gi (powers of 1024)");
  EXPECT_FALSE(parse_count("99999999999Gi", &error));
  EXPECT_EQ(error, "count \"99999999999Gi\" is out of range");
  EXPECT_FALSE(parse_count("1.5Ki", &error));
  EXPECT_EQ(format_count(2097152), "2Mi");
  EXPECT_EQ(format_count(131072), "128Ki");
  EXPECT_EQ(format_count(1000), "1000");
}

TEST(Units, TokenTotalsArePowersOfTen) {
  std::string error;
  EXPECT_EQ(parse_token_total("15.6T", &error), 15.6e12);
  EXPECT_EQ(parse_token_total("300B", &error), 300e9);
  EXPECT_EQ(parse_token_total("50M", &error), 50e6);
  EXPECT_EQ(parse_token_total("20K", &error), 20e3);
  EXPECT_EQ(parse_token_total("1.5e13", &error), 1.5e13);
  EXPECT_FALSE(parse_token_total("2Ti", &error));
  EXPECT_EQ(error,
            "unknown token-count suffix \"Ti\" in \"2Ti\"; use K, M, B or T (powers of ten: 15.6T is "
            "1.56e13 tokens)");
  EXPECT_FALSE(parse_token_total("-1T", &error));
  EXPECT_EQ(error, "a token count must be positive and finite, got \"-1T\"");
  EXPECT_FALSE(parse_token_total("many", &error));
  EXPECT_EQ(error, "expected a token count such as 15.6T, 300B or 1.5e13, got \"many\"");
  for (const double v : {15.6e12, 3e11, 1e3, 123456789.0, 2.5e15, 7.0}) {
    EXPECT_EQ(parse_token_total(format_token_total(v), &error), v) << format_token_total(v);
  }
  EXPECT_EQ(format_token_total(15.6e12), "15.6T");
  EXPECT_EQ(format_token_total(2.5e15), "2500T");
}

}  // namespace
}  // namespace trainsim::config
