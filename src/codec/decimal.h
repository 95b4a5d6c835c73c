// MyDecimal binary format (pkg/types/mydecimal.go ToBin/FromBin) converted
// to and from plain decimal strings.
//
// The bin of a DECIMAL(precision, frac) stores precision - frac integer
// digits and frac fraction digits in groups of nine (4-byte big-endian
// words), the partial groups in 1-4 bytes, every byte inverted for negative
// numbers and the top bit of the first byte flipped. Pure functions;
// thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"

namespace sluice::codec {

// Largest precision the bin format can carry (nine words of nine digits).
inline constexpr int kMaxDecimalBinPrecision = 81;
// Largest scale MySQL/TiDB allow.
inline constexpr int kMaxDecimalScale = 30;

// Byte length of the bin of DECIMAL(precision, frac); InvalidArgument when
// precision/frac are out of range (precision 1..81, frac 0..min(30, prec)).
Result<int> DecimalBinSize(int precision, int frac);

// A parsed decimal string: sign, integer digits without leading zeros (empty
// for zero) and the fraction digits as written.
struct DecimalParts {
  bool negative = false;
  std::string int_digits;
  std::string frac_digits;
};

// Parses "[+-]digits[.digits]" (at least one digit). InvalidArgument otherwise.
Result<DecimalParts> ParseDecimal(std::string_view text);

// Precision and frac that hold `text` exactly (TiDB PrecisionAndFrac):
// frac = number of fraction digits, precision = integer digits + frac, at
// least 1.
Status DecimalPrecisionAndFrac(std::string_view text, int* precision, int* frac);

// Appends the bin of `text` as DECIMAL(precision, frac). Extra fraction
// digits are rounded half up; InvalidArgument when the integer part does not
// fit or the text is malformed.
Status EncodeDecimalBin(std::string_view text, int precision, int frac, std::string* out);

// Decodes a DECIMAL(precision, frac) bin from the front of `*in` and appends
// its text: "[-]int[.frac]" with exactly `frac` fraction digits and no
// leading zeros ("0.50", "-12", "0"). Zero is never negative. Corruption on
// truncated input or digit groups out of range.
Status DecodeDecimalBin(std::string_view* in, int precision, int frac, std::string* out);

}  // namespace sluice::codec
