#include "sink/mysql/sql_value.h"

#include <array>
#include <charconv>
#include <cmath>

#include "codec/mysql_type.h"
#include "event/value_format.h"

namespace sluice::sink {

namespace {

void AppendShortestDouble(double v, std::string* out) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  out->append(buf, ec == std::errc() ? end : buf);
}

// A decimal literal TiDB produced: digits, one point, an optional sign.
bool IsPlainDecimal(std::string_view text) {
  if (text.empty()) return false;
  size_t i = (text[0] == '-' || text[0] == '+') ? 1 : 0;
  bool digit = false;
  for (; i < text.size(); ++i) {
    char c = text[i];
    if (c >= '0' && c <= '9') {
      digit = true;
    } else if (c != '.') {
      return false;
    }
  }
  return digit;
}

Status CheckFinite(double v, const model::ColumnInfo& col) {
  if (std::isfinite(v)) return Status::Ok();
  return InvalidArgument("column " + col.name.original + ": NaN or infinite float");
}

// The escape MySQL's string literal needs for `c`, or empty for none.
constexpr std::string_view EscapeOf(char c) {
  switch (c) {
    case '\0':
      return "\\0";
    case '\n':
      return "\\n";
    case '\r':
      return "\\r";
    case '\\':
      return "\\\\";
    case '\'':
      return "\\'";
    case '"':
      return "\\\"";
    case '\x1a':
      return "\\Z";
    default:
      return {};
  }
}

// Which bytes EscapeOf() escapes, by unsigned value: the per-byte test of
// AppendQuotedString's scan.
constexpr std::array<bool, 256> kNeedsEscape = [] {
  std::array<bool, 256> table{};
  for (int b = 0; b < 256; ++b) table[b] = !EscapeOf(static_cast<char>(b)).empty();
  return table;
}();

}  // namespace

void AppendQuotedString(std::string_view text, std::string* out) {
  out->reserve(out->size() + text.size() + 2);
  out->push_back('\'');
  // Runs of bytes that need no escape are copied whole: a row's text is
  // mostly such a run, and a byte-at-a-time push_back costs a capacity
  // check per byte.
  size_t run = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if (!kNeedsEscape[static_cast<unsigned char>(text[i])]) continue;
    out->append(text.data() + run, i - run);
    out->append(EscapeOf(text[i]));
    run = i + 1;
  }
  out->append(text.data() + run, text.size() - run);
  out->push_back('\'');
}

void AppendHexLiteral(std::string_view bytes, std::string* out) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  out->reserve(out->size() + bytes.size() * 2 + 3);
  out->append("X'");
  for (unsigned char c : bytes) {
    out->push_back(kHex[c >> 4]);
    out->push_back(kHex[c & 15]);
  }
  out->push_back('\'');
}

void AppendQuotedName(std::string_view name, std::string* out) {
  out->push_back('`');
  for (char c : name) {
    if (c == '`') out->push_back('`');
    out->push_back(c);
  }
  out->push_back('`');
}

Status AppendLiteral(const codec::Datum& d, const model::ColumnInfo& col, std::string* out) {
  using codec::DatumKind;
  switch (d.kind()) {
    case DatumKind::kNull:
      out->append("NULL");
      return Status::Ok();
    case DatumKind::kInt64:
      out->append(std::to_string(d.int64()));
      return Status::Ok();
    case DatumKind::kUint64:
    case DatumKind::kBit:
      out->append(std::to_string(d.uint64()));
      return Status::Ok();
    case DatumKind::kFloat32:
    case DatumKind::kFloat64: {
      // float32 goes out as the double it widens to: read back into a FLOAT
      // column it rounds to the same float, and it compares equal to it.
      double v = d.kind() == DatumKind::kFloat32 ? static_cast<double>(d.float32()) : d.float64();
      RETURN_IF_ERROR(CheckFinite(v, col));
      AppendShortestDouble(v, out);
      return Status::Ok();
    }
    case DatumKind::kDecimal:
      if (IsPlainDecimal(d.bytes())) {
        out->append(d.bytes());
      } else {
        AppendQuotedString(d.bytes(), out);
      }
      return Status::Ok();
    case DatumKind::kBytes:
      if (event::IsBinaryColumn(col)) {
        AppendHexLiteral(d.bytes(), out);
      } else {
        AppendQuotedString(d.bytes(), out);
      }
      return Status::Ok();
    case DatumKind::kMinNotNull:
    case DatumKind::kMax:
      return InvalidArgument("column " + col.name.original + ": key sentinel has no SQL value");
    default:
      break;
  }
  // Time, duration, enum, set, JSON and vectors: their MySQL text, quoted.
  Result<std::optional<std::string>> text = event::DatumText(d, col);
  if (!text.ok()) return text.status().WithContext("column " + col.name.original);
  if (!text->has_value()) {
    out->append("NULL");
  } else {
    AppendQuotedString(**text, out);
  }
  return Status::Ok();
}

Status AppendEquals(const codec::Datum& d, const model::ColumnInfo& col, SqlFlavor flavor,
                    std::string* out) {
  if (d.is_null()) {
    AppendQuotedName(col.name.original, out);
    out->append(" IS NULL");
    return Status::Ok();
  }
  if (col.type.tp == codec::mysql_type::kJson) {
    if (flavor == SqlFlavor::kMariaDb) {
      out->append("JSON_EQUALS(");
      AppendQuotedName(col.name.original, out);
      out->append(", ");
      RETURN_IF_ERROR(AppendLiteral(d, col, out));
      out->append(")");
    } else {
      AppendQuotedName(col.name.original, out);
      out->append(" = CAST(");
      RETURN_IF_ERROR(AppendLiteral(d, col, out));
      out->append(" AS JSON)");
    }
    return Status::Ok();
  }
  AppendQuotedName(col.name.original, out);
  out->append(" = ");
  return AppendLiteral(d, col, out);
}

}  // namespace sluice::sink
