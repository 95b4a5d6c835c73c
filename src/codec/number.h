// Primitive TiDB codecs (pkg/util/codec number.go, float.go, bytes.go).
// Encoders append to `out`. Decoders read from the front of `*in`, advance it
// past what they consumed and return Corruption on truncated or invalid input
// (never reading past the end). Pure functions; thread-safe.
#pragma once

#include <bit>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace sluice::codec {

inline constexpr uint64_t kSignMask = 0x8000000000000000ULL;
// Longest Go varint (10 bytes for 64 bits).
inline constexpr int kMaxVarintLen64 = 10;

// Order-preserving transforms behind EncodeInt / EncodeFloat.
constexpr uint64_t IntToComparable(int64_t v) { return static_cast<uint64_t>(v) ^ kSignMask; }
constexpr int64_t ComparableToInt(uint64_t u) { return static_cast<int64_t>(u ^ kSignMask); }
inline uint64_t FloatToComparable(double v) {
  uint64_t u = std::bit_cast<uint64_t>(v);
  return (u & kSignMask) == 0 ? (u | kSignMask) : ~u;
}
inline double ComparableToFloat(uint64_t u) {
  return std::bit_cast<double>((u & kSignMask) != 0 ? (u & ~kSignMask) : ~u);
}

// 8-byte big-endian forms.
void EncodeInt(int64_t v, std::string* out);      // sign bit flipped
void EncodeIntDesc(int64_t v, std::string* out);  // NOT of EncodeInt
void EncodeUint(uint64_t v, std::string* out);
void EncodeUintDesc(uint64_t v, std::string* out);
void EncodeFloat(double v, std::string* out);

Result<int64_t> DecodeInt(std::string_view* in);
Result<int64_t> DecodeIntDesc(std::string_view* in);
Result<uint64_t> DecodeUint(std::string_view* in);
Result<uint64_t> DecodeUintDesc(std::string_view* in);
Result<double> DecodeFloat(std::string_view* in);

// Go binary.PutVarint (zigzag + LEB128) and binary.PutUvarint (LEB128).
void EncodeVarint(int64_t v, std::string* out);
void EncodeUvarint(uint64_t v, std::string* out);
Result<int64_t> DecodeVarint(std::string_view* in);
Result<uint64_t> DecodeUvarint(std::string_view* in);

// Zigzag-varint length followed by the raw bytes. The decoded view points
// into the input.
void EncodeCompactBytes(std::string_view v, std::string* out);
Result<std::string_view> DecodeCompactBytes(std::string_view* in);

// Memcomparable variable-length integers: one tag byte then big-endian bytes.
void EncodeComparableVarint(int64_t v, std::string* out);
void EncodeComparableUvarint(uint64_t v, std::string* out);
Result<int64_t> DecodeComparableVarint(std::string_view* in);
Result<uint64_t> DecodeComparableUvarint(std::string_view* in);

}  // namespace sluice::codec
