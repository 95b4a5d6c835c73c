#include "codec/number.h"

#include <bit>

#include "codec/endian.h"

namespace sluice::codec {

namespace {

constexpr uint8_t kNegativeTagEnd = 8;       // negative tag is 8 - length
constexpr uint8_t kPositiveTagStart = 0xF7;  // positive tag is 0xF7 + length

Result<uint64_t> Take8(std::string_view* in, const char* what) {
  if (in->size() < 8) return Corruption(std::string(what) + ": need 8 bytes");
  uint64_t v = internal::LoadBe64(in->data());
  in->remove_prefix(8);
  return v;
}

// Number of bytes needed to hold `v` big-endian without leading zero bytes.
int ByteLength(uint64_t v) { return v == 0 ? 1 : (64 - std::countl_zero(v) + 7) / 8; }

void AppendBeBytes(uint64_t v, int n, std::string* out) {
  for (int i = n - 1; i >= 0; --i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

}  // namespace

void EncodeInt(int64_t v, std::string* out) { internal::AppendBe64(IntToComparable(v), out); }
void EncodeIntDesc(int64_t v, std::string* out) { internal::AppendBe64(~IntToComparable(v), out); }
void EncodeUint(uint64_t v, std::string* out) { internal::AppendBe64(v, out); }
void EncodeUintDesc(uint64_t v, std::string* out) { internal::AppendBe64(~v, out); }
void EncodeFloat(double v, std::string* out) { internal::AppendBe64(FloatToComparable(v), out); }

Result<int64_t> DecodeInt(std::string_view* in) {
  ASSIGN_OR_RETURN(uint64_t u, Take8(in, "int"));
  return ComparableToInt(u);
}

Result<int64_t> DecodeIntDesc(std::string_view* in) {
  ASSIGN_OR_RETURN(uint64_t u, Take8(in, "int desc"));
  return ComparableToInt(~u);
}

Result<uint64_t> DecodeUint(std::string_view* in) { return Take8(in, "uint"); }

Result<uint64_t> DecodeUintDesc(std::string_view* in) {
  ASSIGN_OR_RETURN(uint64_t u, Take8(in, "uint desc"));
  return ~u;
}

Result<double> DecodeFloat(std::string_view* in) {
  ASSIGN_OR_RETURN(uint64_t u, Take8(in, "float"));
  return ComparableToFloat(u);
}

void EncodeUvarint(uint64_t v, std::string* out) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

void EncodeVarint(int64_t v, std::string* out) {
  uint64_t zigzag = (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
  EncodeUvarint(zigzag, out);
}

Result<uint64_t> DecodeUvarint(std::string_view* in) {
  uint64_t v = 0;
  int shift = 0;
  for (size_t i = 0; i < in->size(); ++i) {
    if (i == kMaxVarintLen64) return Corruption("uvarint: overflows 64 bits");
    uint8_t b = static_cast<uint8_t>((*in)[i]);
    if (b < 0x80) {
      if (i == kMaxVarintLen64 - 1 && b > 1) return Corruption("uvarint: overflows 64 bits");
      in->remove_prefix(i + 1);
      return v | (static_cast<uint64_t>(b) << shift);
    }
    v |= static_cast<uint64_t>(b & 0x7F) << shift;
    shift += 7;
  }
  return Corruption("uvarint: truncated");
}

Result<int64_t> DecodeVarint(std::string_view* in) {
  ASSIGN_OR_RETURN(uint64_t u, DecodeUvarint(in));
  return static_cast<int64_t>(u >> 1) ^ -static_cast<int64_t>(u & 1);
}

void EncodeCompactBytes(std::string_view v, std::string* out) {
  EncodeVarint(static_cast<int64_t>(v.size()), out);
  out->append(v);
}

Result<std::string_view> DecodeCompactBytes(std::string_view* in) {
  std::string_view rest = *in;
  ASSIGN_OR_RETURN(int64_t n, DecodeVarint(&rest));
  if (n < 0 || static_cast<uint64_t>(n) > rest.size()) {
    return Corruption("compact bytes: length out of range");
  }
  std::string_view value = rest.substr(0, static_cast<size_t>(n));
  rest.remove_prefix(static_cast<size_t>(n));
  *in = rest;
  return value;
}

void EncodeComparableUvarint(uint64_t v, std::string* out) {
  if (v <= kPositiveTagStart - kNegativeTagEnd) {
    out->push_back(static_cast<char>(v + kNegativeTagEnd));
    return;
  }
  int n = ByteLength(v);
  out->push_back(static_cast<char>(kPositiveTagStart + n));
  AppendBeBytes(v, n, out);
}

void EncodeComparableVarint(int64_t v, std::string* out) {
  if (v >= 0) {
    EncodeComparableUvarint(static_cast<uint64_t>(v), out);
    return;
  }
  // TiDB picks the length from the magnitude: -1..-255 take one byte.
  int n = ByteLength(0 - static_cast<uint64_t>(v));
  out->push_back(static_cast<char>(kNegativeTagEnd - n));
  AppendBeBytes(static_cast<uint64_t>(v), n, out);
}

namespace {

// Reads the tag and body of a comparable varint. `negative` is set for tags
// below kNegativeTagEnd; the body bytes are loaded over an all-ones value.
Result<uint64_t> DecodeComparableBody(std::string_view* in, bool* negative) {
  if (in->empty()) return Corruption("comparable varint: empty input");
  uint8_t tag = static_cast<uint8_t>((*in)[0]);
  std::string_view rest = in->substr(1);
  *negative = tag < kNegativeTagEnd;
  if (!*negative && tag <= kPositiveTagStart) {
    *in = rest;
    return static_cast<uint64_t>(tag - kNegativeTagEnd);
  }
  size_t n = *negative ? kNegativeTagEnd - tag : tag - kPositiveTagStart;
  if (rest.size() < n) return Corruption("comparable varint: truncated");
  uint64_t v = *negative ? ~uint64_t{0} : 0;
  for (size_t i = 0; i < n; ++i) v = (v << 8) | static_cast<uint8_t>(rest[i]);
  *in = rest.substr(n);
  return v;
}

}  // namespace

Result<uint64_t> DecodeComparableUvarint(std::string_view* in) {
  std::string_view rest = *in;
  bool negative = false;
  ASSIGN_OR_RETURN(uint64_t v, DecodeComparableBody(&rest, &negative));
  if (negative) return Corruption("comparable uvarint: negative tag");
  *in = rest;
  return v;
}

Result<int64_t> DecodeComparableVarint(std::string_view* in) {
  std::string_view rest = *in;
  bool negative = false;
  ASSIGN_OR_RETURN(uint64_t v, DecodeComparableBody(&rest, &negative));
  bool fits =
      negative ? v > static_cast<uint64_t>(INT64_MAX) : v <= static_cast<uint64_t>(INT64_MAX);
  if (!fits) return Corruption("comparable varint: value out of range for its tag");
  *in = rest;
  return static_cast<int64_t>(v);
}

}  // namespace sluice::codec
