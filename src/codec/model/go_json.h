// JSON text in and out, with the byte-level habits of Go's encoding/json.
//
// TiDB writes every schema object with Go's json.Marshal. To produce bytes a
// TiDB-side reader sees as its own, the writer here copies Go's choices:
// compact output, keys in struct-declaration order (the caller builds objects
// in that order), `<` `>` `&` U+2028 U+2029 escaped as \u sequences, invalid
// UTF-8 replaced by \ufffd, and floats in Go's shortest form. Thread-safe: the
// functions keep no state.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"

namespace sluice::model {

// A parsed JSON value. Objects keep their keys in document order, so a value
// the model carries verbatim is written back in the order it was read.
using JsonValue = nlohmann::ordered_json;

// Deepest array/object nesting accepted; the same bound as Go's decoder.
inline constexpr int kMaxJsonDepth = 10000;

// Parses exactly one JSON document (surrounding whitespace allowed).
// Malformed or truncated text, trailing bytes, invalid UTF-8 and nesting
// deeper than kMaxJsonDepth give Corruption. Never throws.
Result<JsonValue> ParseJsonDocument(std::string_view text);

// Serializes `value` the way Go's json.Marshal would serialize the same tree.
std::string GoMarshal(const JsonValue& value);

// Standard base64 with padding: how Go encodes a []byte field.
std::string Base64Encode(std::string_view bytes);

// Inverse of Base64Encode. Like Go's decoder it skips '\r' and '\n' and
// rejects anything else that is not canonical padded base64 (nullopt).
std::optional<std::string> Base64Decode(std::string_view text);

}  // namespace sluice::model
