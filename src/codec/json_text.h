// JSON text pieces shared by the binary JSON decoder, formatted the way TiDB
// marshals JSON. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace sluice::codec {

// "null" / "true" / "false"; Corruption for any other literal byte.
Status AppendJsonLiteral(uint8_t literal, std::string* out);

// Shortest round-trip form: fixed notation with at least one fraction digit
// ("1.0", "0.25") for 1e-15 <= |v| < 1e15 and zero, otherwise scientific
// without '+' ("1e15", "1.5e-20"). Corruption for NaN and infinities.
Status AppendJsonFloat(double v, std::string* out);

// Double-quoted string with Go encoding/json escaping (\" \\ \n \r \t \b \f,
// other control bytes as \u00xx, U+2028/U+2029 escaped, invalid UTF-8 bytes
// replaced by \ufffd). '<', '>' and '&' are not escaped.
void AppendJsonQuoted(std::string_view s, std::string* out);

// "base64:type<code>:<standard base64 of data>" in quotes.
void AppendJsonOpaque(uint8_t mysql_type_code, std::string_view data, std::string* out);

}  // namespace sluice::codec
