#include "event/table_schema.h"

#include <fmt/format.h>

#include <charconv>
#include <cstdlib>

#include "codec/decimal.h"
#include "codec/json_binary.h"
#include "codec/mysql_type.h"
#include "codec/mytime.h"

namespace sluice::event {

namespace mt = codec::mysql_type;
namespace mf = codec::mysql_flag;

namespace {

template <typename T>
Result<T> ParseNumber(std::string_view text) {
  T v{};
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) {
    return InvalidArgument(fmt::format("default value '{}' is not a number", text));
  }
  return v;
}

Result<codec::Datum> ParseDefault(const model::ColumnInfo& c, const std::string& text) {
  const int fsp = static_cast<int>(c.type.decimal < 0 ? 0 : c.type.decimal);
  switch (c.type.tp) {
    case mt::kTiny:
    case mt::kShort:
    case mt::kInt24:
    case mt::kLong:
    case mt::kLonglong:
    case mt::kYear:
      if (c.type.HasFlag(mf::kUnsigned)) {
        ASSIGN_OR_RETURN(uint64_t u, ParseNumber<uint64_t>(text));
        return codec::Datum::Uint64(u);
      } else {
        ASSIGN_OR_RETURN(int64_t i, ParseNumber<int64_t>(text));
        return codec::Datum::Int64(i);
      }
    case mt::kFloat:
    case mt::kDouble: {
      ASSIGN_OR_RETURN(double d, ParseNumber<double>(text));
      return c.type.tp == mt::kFloat ? codec::Datum::Float32(static_cast<float>(d))
                                     : codec::Datum::Float64(d);
    }
    case mt::kNewDecimal: {
      ASSIGN_OR_RETURN(codec::DecimalParts parts, codec::ParseDecimal(text));
      (void)parts;
      return codec::Datum::Decimal(text, static_cast<int>(c.type.flen), fsp);
    }
    case mt::kDate:
    case mt::kDatetime:
    case mt::kTimestamp: {
      ASSIGN_OR_RETURN(codec::MysqlTime t, codec::ParseTime(text));
      return codec::Datum::Time(codec::ToPackedUint(t), c.type.tp, fsp);
    }
    case mt::kDuration: {
      ASSIGN_OR_RETURN(int64_t nanos, codec::ParseDuration(text));
      return codec::Datum::Duration(nanos, fsp);
    }
    case mt::kEnum:
      for (size_t i = 0; i < c.type.elems.size(); ++i) {
        if (c.type.elems[i] == text) return codec::Datum::Enum(i + 1);
      }
      return InvalidArgument(fmt::format("default '{}' is not an enum member", text));
    case mt::kSet: {
      uint64_t bits = 0;
      size_t start = 0;
      while (!text.empty() && start <= text.size()) {
        size_t comma = text.find(',', start);
        std::string_view item(text.data() + start,
                              (comma == std::string::npos ? text.size() : comma) - start);
        bool found = false;
        for (size_t i = 0; i < c.type.elems.size() && i < 64; ++i) {
          if (c.type.elems[i] == item) bits |= uint64_t{1} << i, found = true;
        }
        if (!found) return InvalidArgument(fmt::format("default '{}' is not a set", text));
        if (comma == std::string::npos) break;
        start = comma + 1;
      }
      return codec::Datum::Set(bits);
    }
    case mt::kBit: {
      uint64_t v = 0;  // origin_default_bit holds the big-endian bytes.
      if (text.size() > 8) return InvalidArgument("bit default longer than 8 bytes");
      for (unsigned char ch : text) v = (v << 8) | ch;
      return codec::Datum::Bit(v);
    }
    case mt::kJson: {
      ASSIGN_OR_RETURN(std::string bin, codec::JsonTextToBinary(text));
      return codec::Datum::Json(std::move(bin));
    }
    default:
      return codec::Datum::Bytes(text);
  }
}

Result<codec::Datum> OriginDefault(const model::ColumnInfo& c) {
  std::optional<std::string> text = c.OriginDefaultBytes();
  if (!text.has_value()) return codec::Datum::Null();
  Result<codec::Datum> d = ParseDefault(c, *text);
  if (!d.ok()) return d.status().WithContext(fmt::format("column {}", c.name.original));
  return d;
}

// Offsets of the row-identifying columns (see key_columns()).
std::vector<int> KeyColumns(const model::TableInfo& info,
                            const std::vector<model::ColumnInfo>& cols) {
  auto offset_of = [&](std::string_view lower) {
    for (size_t i = 0; i < cols.size(); ++i) {
      if (cols[i].name.lower == lower) return static_cast<int>(i);
    }
    return -1;
  };
  std::vector<int> keys;
  if (info.pk_is_handle) {
    for (size_t i = 0; i < cols.size(); ++i) {
      if (cols[i].IsPrimaryKey()) return {static_cast<int>(i)};
    }
  }
  const model::IndexInfo* chosen = info.GetPrimaryIndex();
  if (chosen == nullptr) {
    for (const model::IndexInfo& idx : info.indices) {
      if (!idx.unique || idx.state != model::SchemaState::kPublic) continue;
      bool all_not_null = true;
      for (const auto& ic : idx.columns) {
        int off = offset_of(ic.name.lower);
        if (off < 0 || !cols[off].type.HasFlag(mf::kNotNull)) all_not_null = false;
      }
      if (all_not_null) {
        chosen = &idx;
        break;
      }
    }
  }
  if (chosen == nullptr) return keys;
  for (const auto& ic : chosen->columns) {
    int off = offset_of(ic.name.lower);
    if (off < 0) return {};
    keys.push_back(off);
  }
  return keys;
}

}  // namespace

Result<TableSchemaPtr> TableSchema::Make(std::string schema_name, int64_t schema_id,
                                         model::TableInfo info, Ts version) {
  std::shared_ptr<TableSchema> s(new TableSchema());
  s->schema_name_ = std::move(schema_name);
  s->schema_id_ = schema_id;
  s->version_ = version;
  const model::IndexInfo* primary = info.is_common_handle ? info.GetPrimaryIndex() : nullptr;
  for (const model::ColumnInfo& c : info.columns) {
    if (!c.IsPublic()) continue;
    codec::ColumnSpec spec;
    spec.id = c.id;
    spec.type = c.type.tp;
    spec.is_unsigned = c.type.HasFlag(mf::kUnsigned);
    bool timed =
        c.type.tp == mt::kDatetime || c.type.tp == mt::kTimestamp || c.type.tp == mt::kDuration;
    spec.fsp = timed ? static_cast<int>(c.type.decimal < 0 ? 0 : c.type.decimal) : 0;
    spec.flen = static_cast<int>(c.type.flen);
    ASSIGN_OR_RETURN(spec.default_value, OriginDefault(c));
    spec.is_handle = info.pk_is_handle && c.IsPrimaryKey();
    if (primary != nullptr) {
      for (size_t i = 0; i < primary->columns.size(); ++i) {
        if (primary->columns[i].name.lower != c.name.lower) continue;
        spec.is_handle = true;
        spec.handle_offset = static_cast<int>(i);
      }
    }
    s->specs_.push_back(std::move(spec));
    s->columns_.push_back(c);
  }
  if (s->columns_.empty()) {
    return InvalidArgument(fmt::format("table {} has no public columns", info.name.original));
  }
  s->key_columns_ = KeyColumns(info, s->columns_);
  s->info_ = std::move(info);
  return TableSchemaPtr(std::move(s));
}

std::string QuoteName(std::string_view name) {
  std::string out = "`";
  for (char ch : name) {
    if (ch == '`') out += '`';
    out += ch;
  }
  out += '`';
  return out;
}

std::string TableSchema::QuotedName() const {
  return QuoteName(schema_name_) + "." + QuoteName(table_name());
}

}  // namespace sluice::event
