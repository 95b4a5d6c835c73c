// Datum encodings (pkg/util/codec/codec.go): the
// comparable key form used in index keys and common handles, and the value
// form (EncodeValue) used by row format v1. Every encoded datum starts with a
// flag byte. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "codec/datum.h"
#include "common/status.h"

namespace sluice::codec {

namespace datum_flag {
inline constexpr uint8_t kNil = 0;
inline constexpr uint8_t kBytes = 1;
inline constexpr uint8_t kCompactBytes = 2;
inline constexpr uint8_t kInt = 3;
inline constexpr uint8_t kUint = 4;
inline constexpr uint8_t kFloat = 5;
inline constexpr uint8_t kDecimal = 6;
inline constexpr uint8_t kDuration = 7;
inline constexpr uint8_t kVarint = 8;
inline constexpr uint8_t kUvarint = 9;
inline constexpr uint8_t kJson = 10;
inline constexpr uint8_t kVectorFloat32 = 20;
inline constexpr uint8_t kMax = 250;
}  // namespace datum_flag

// Comparable (key) form: bytes as memcomparable, ints/uints/times/enums as
// 8-byte big-endian. InvalidArgument for a malformed decimal; `out` is left
// as it was on error.
Status EncodeKeyDatum(const Datum& d, std::string* out);
Status EncodeKeyDatums(const std::vector<Datum>& ds, std::string* out);

// Value form: bytes as compact bytes, ints as varints, enum/set/bit as
// uvarints; times, durations, floats and decimals as in the key form.
Status EncodeValueDatum(const Datum& d, std::string* out);

// Decodes one datum of either form from the front of `*in` and advances it.
// Compact bytes, JSON and vectors are views into the input; memcomparable
// bytes and decimals are owned. Times come back as kUint64 and durations
// with fsp 0; ConvertDatumForColumn (row.h) restores column types.
Status DecodeDatum(std::string_view* in, Datum* out);

// Decodes a concatenation of datums (an index value list or common handle).
Result<std::vector<Datum>> DecodeDatums(std::string_view in);

// Length of the datum at the front of `in`, validated like DecodeDatum.
Result<size_t> PeekDatumLength(std::string_view in);

}  // namespace sluice::codec
