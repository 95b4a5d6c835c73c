#include "event/value_format.h"

#include <charconv>
#include <cstdio>
#include <cstring>

#include "codec/json_binary.h"
#include "codec/mysql_type.h"
#include "codec/mytime.h"

namespace sluice::event {

namespace {

template <typename F>
std::string ShortestFloat(F v) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  if (ec != std::errc()) return std::to_string(v);
  return std::string(buf, end);
}

std::string SetText(uint64_t bits, const model::ColumnInfo& col) {
  std::string out;
  for (size_t i = 0; i < col.type.elems.size() && i < 64; ++i) {
    if (((bits >> i) & 1) == 0) continue;
    if (!out.empty()) out += ',';
    out += col.type.elems[i];
  }
  return out;
}

// TiDB prints a vector as "[1,2.5,3]".
Result<std::optional<std::string>> VectorText(std::string_view raw) {
  if (raw.size() < 4) return Corruption("vector shorter than its dimension");
  uint32_t dim = 0;
  std::memcpy(&dim, raw.data(), 4);
  if (raw.size() != 4 + size_t{dim} * 4) return Corruption("vector length does not match");
  std::string out = "[";
  for (uint32_t i = 0; i < dim; ++i) {
    float f;
    std::memcpy(&f, raw.data() + 4 + i * 4, 4);
    if (i > 0) out += ',';
    out += ShortestFloat(f);
  }
  out += ']';
  return std::optional<std::string>(std::move(out));
}

}  // namespace

bool IsBinaryColumn(const model::ColumnInfo& col) {
  namespace t = codec::mysql_type;
  switch (col.type.tp) {
    case t::kBit:
      return true;
    case t::kString:
    case t::kVarchar:
    case t::kVarString:
    case t::kTinyBlob:
    case t::kMediumBlob:
    case t::kLongBlob:
    case t::kBlob:
      return col.type.charset == "binary";
    default:
      return false;
  }
}

Result<std::optional<std::string>> DatumText(const codec::Datum& d, const model::ColumnInfo& col) {
  using codec::DatumKind;
  switch (d.kind()) {
    case DatumKind::kNull:
      return std::optional<std::string>();
    case DatumKind::kInt64:
      return std::optional<std::string>(std::to_string(d.int64()));
    case DatumKind::kUint64:
    case DatumKind::kBit:
      return std::optional<std::string>(std::to_string(d.uint64()));
    case DatumKind::kFloat32:
      return std::optional<std::string>(ShortestFloat(d.float32()));
    case DatumKind::kFloat64:
      return std::optional<std::string>(ShortestFloat(d.float64()));
    case DatumKind::kBytes:
    case DatumKind::kDecimal:
      return std::optional<std::string>(std::string(d.bytes()));
    case DatumKind::kTime:
      return std::optional<std::string>(
          codec::FormatTime(codec::FromPackedUint(d.uint64()), d.time_type(), d.fsp()));
    case DatumKind::kDuration:
      return std::optional<std::string>(codec::FormatDuration(d.int64(), d.fsp()));
    case DatumKind::kEnum: {
      uint64_t i = d.uint64();
      if (i == 0) return std::optional<std::string>(std::string());
      if (i > col.type.elems.size()) return Corruption("enum index out of range");
      return std::optional<std::string>(col.type.elems[i - 1]);
    }
    case DatumKind::kSet:
      return std::optional<std::string>(SetText(d.uint64(), col));
    case DatumKind::kJson: {
      ASSIGN_OR_RETURN(std::string text, codec::JsonBinaryToText(d.bytes()));
      return std::optional<std::string>(std::move(text));
    }
    case DatumKind::kVectorFloat32:
      return VectorText(d.bytes());
    default:
      return Corruption("value kind has no text form");
  }
}

}  // namespace sluice::event
