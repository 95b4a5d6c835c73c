// Byte-exact copies of the Go library behaviours TiCDC's encoders rely on:
// strconv float formatting, easyjson string escaping, json.Indent, hex and
// the ISO-8859-1 mapping canal-json uses for binary values. Pure functions;
// thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace sluice::sink::codec {

// strconv.FormatFloat(v, fmt, -1, bits) for fmt 'g' or 'f' and bits 32 or
// 64: the shortest digits that read back as the same float of that width.
// ('g' switches to an exponent below 1e-4 and from 1e6 on, e.g. "1e+06".)
// Go's fmt "%v" of a float is the 'g' form.
std::string GoFormatFloat(double v, char fmt, int bits);

// A JSON string the way easyjson's jwriter.String writes it (TiCDC's
// canal-json rows): `"` `\` escaped, \n \r \t short, other bytes below 0x20
// and `<` `>` `&` as \u00xx, U+2028/U+2029 escaped, invalid UTF-8 bytes as
// \ufffd.
void AppendEasyJsonString(std::string_view s, std::string* out);

// Go's json.Indent(dst, src, "", indent) over compact JSON: one member per
// line, ": " after keys, "{}" and "[]" kept on one line. Strings are copied
// as they are.
std::string GoIndent(std::string_view compact, std::string_view indent);

// Lower-case hex (Go hex.EncodeToString) and its inverse (nullopt for an odd
// length or a non-hex digit; either case accepted).
std::string HexEncode(std::string_view bytes);
std::optional<std::string> HexDecode(std::string_view text);

// Each byte as the Unicode code point of the same number, UTF-8 encoded
// (Go charmap.ISO8859_1 decoder), and back. Utf8ToLatin1 gives nullopt for
// invalid UTF-8 or a code point above U+00FF.
std::string Latin1ToUtf8(std::string_view bytes);
std::optional<std::string> Utf8ToLatin1(std::string_view text);

}  // namespace sluice::sink::codec
