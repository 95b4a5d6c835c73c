// TiDB binary JSON (pkg/types/json_binary.go).
//
// A stored JSON value is one type-code byte followed by its body; all
// integers inside are little-endian. Decoding validates every count, offset
// and length against the enclosing container, bounds nesting depth and total
// work, and returns Corruption instead of reading out of bounds. Text output
// matches TiDB's MarshalJSON ("{"a": [1, 2.5]}" with ", " and ": "
// separators). Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>

#include "common/status.h"

namespace sluice::codec {

namespace json_type {
inline constexpr uint8_t kObject = 0x01;
inline constexpr uint8_t kArray = 0x03;
inline constexpr uint8_t kLiteral = 0x04;
inline constexpr uint8_t kInt64 = 0x09;
inline constexpr uint8_t kUint64 = 0x0a;
inline constexpr uint8_t kFloat64 = 0x0b;
inline constexpr uint8_t kString = 0x0c;
inline constexpr uint8_t kOpaque = 0x0d;
inline constexpr uint8_t kDate = 0x0e;
inline constexpr uint8_t kDatetime = 0x0f;
inline constexpr uint8_t kTimestamp = 0x10;
inline constexpr uint8_t kDuration = 0x11;
}  // namespace json_type

namespace json_literal {
inline constexpr uint8_t kNull = 0x00;
inline constexpr uint8_t kTrue = 0x01;
inline constexpr uint8_t kFalse = 0x02;
}  // namespace json_literal

// Deepest container nesting accepted by the decoder and encoder (TiDB's
// maxJSONDepth).
inline constexpr int kMaxJsonDepth = 100;

// Length of the type-coded JSON value at the front of `typed` (type byte
// included), checked against the available bytes. Only the outer value's
// header is inspected (TiDB PeekBytesAsJSON).
Result<size_t> JsonBinaryLength(std::string_view typed);

// Appends the JSON text of `typed` (type byte + body, nothing after it).
Status AppendJsonText(std::string_view typed, std::string* out);
Result<std::string> JsonBinaryToText(std::string_view typed);

// Appends type byte + body for a parsed JSON value. Integers become Int64
// when they fit, else Uint64; other numbers Float64; object keys are sorted
// bytewise. InvalidArgument for keys over 65535 bytes, NaN/Inf, binary
// values or nesting deeper than kMaxJsonDepth.
Status EncodeJsonBinary(const nlohmann::json& value, std::string* out);
// Parses JSON text and encodes it (InvalidArgument on bad text).
Result<std::string> JsonTextToBinary(std::string_view text);

}  // namespace sluice::codec
