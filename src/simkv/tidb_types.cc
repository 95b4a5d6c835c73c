#include "simkv/tidb_types.h"

#include <utility>

#include "codec/mysql_type.h"

namespace sluice::simkv::tidb {

namespace mt = codec::mysql_type;
namespace mf = codec::mysql_flag;

namespace {

model::FieldType Make(uint8_t tp, int64_t flen, int64_t decimal, uint64_t flag = 0) {
  model::FieldType t;
  t.tp = tp;
  t.flen = flen;
  t.decimal = decimal;
  t.flag = flag;
  t.charset = std::string(kBinary);
  t.collate = std::string(kBinary);
  return t;
}

model::FieldType MakeString(uint8_t tp, int64_t flen) {
  model::FieldType t = Make(tp, flen, 0);
  t.charset = std::string(kUtf8mb4);
  t.collate = std::string(kUtf8mb4Bin);
  return t;
}

int64_t BlobLength(uint8_t blob_tp) {
  switch (blob_tp) {
    case mt::kTinyBlob:
      return 255;
    case mt::kMediumBlob:
      return 16777215;
    case mt::kLongBlob:
      return 4294967295;
    default:
      return 65535;
  }
}

// Width of a fractional-seconds suffix: "." + fsp digits.
int64_t FspWidth(int fsp) { return fsp > 0 ? fsp + 1 : 0; }

}  // namespace

model::FieldType IntType(uint8_t tp, bool is_unsigned) {
  int64_t flen = 20;
  switch (tp) {
    case mt::kTiny:
      flen = is_unsigned ? 3 : 4;
      break;
    case mt::kShort:
      flen = is_unsigned ? 5 : 6;
      break;
    case mt::kInt24:
      flen = is_unsigned ? 8 : 9;
      break;
    case mt::kLong:
      flen = is_unsigned ? 10 : 11;
      break;
    default:
      break;
  }
  return Make(tp, flen, 0, is_unsigned ? mf::kUnsigned : 0);
}

model::FieldType FloatType() { return Make(mt::kFloat, 12, model::kUnspecifiedLength); }
model::FieldType DoubleType() { return Make(mt::kDouble, 22, model::kUnspecifiedLength); }

model::FieldType DecimalType(int precision, int frac) {
  return Make(mt::kNewDecimal, precision, frac);
}

model::FieldType CharType(int64_t length) { return MakeString(mt::kString, length); }
model::FieldType VarcharType(int64_t length) { return MakeString(mt::kVarchar, length); }

model::FieldType BinaryType(int64_t length) { return Make(mt::kString, length, 0, mf::kBinary); }

model::FieldType VarbinaryType(int64_t length) {
  return Make(mt::kVarchar, length, 0, mf::kBinary);
}

model::FieldType TextType(uint8_t blob_tp) { return MakeString(blob_tp, BlobLength(blob_tp)); }

model::FieldType BlobType(uint8_t blob_tp) {
  return Make(blob_tp, BlobLength(blob_tp), 0, mf::kBinary | mf::kBlob);
}

model::FieldType DateType() { return Make(mt::kDate, 10, 0, mf::kBinary); }

model::FieldType DatetimeType(int fsp) {
  return Make(mt::kDatetime, 19 + FspWidth(fsp), fsp, mf::kBinary);
}

model::FieldType TimestampType(int fsp) {
  return Make(mt::kTimestamp, 19 + FspWidth(fsp), fsp, mf::kBinary);
}

model::FieldType TimeType(int fsp) {
  return Make(mt::kDuration, 10 + FspWidth(fsp), fsp, mf::kBinary);
}

model::FieldType YearType() { return Make(mt::kYear, 4, 0, mf::kUnsigned | mf::kZerofill); }

model::FieldType BitType(int bits) { return Make(mt::kBit, bits, 0, mf::kUnsigned); }

model::FieldType EnumType(std::vector<std::string> elems) {
  model::FieldType t = MakeString(mt::kEnum, model::kUnspecifiedLength);
  t.flag = mf::kEnum;
  t.elems = std::move(elems);
  return t;
}

model::FieldType SetType(std::vector<std::string> elems) {
  model::FieldType t = MakeString(mt::kSet, model::kUnspecifiedLength);
  t.flag = mf::kSet;
  t.elems = std::move(elems);
  return t;
}

model::FieldType JsonType() { return Make(mt::kJson, 4294967295, 0, mf::kBinary); }

model::ColumnInfo MakeColumn(int64_t id, std::string_view name, int64_t offset,
                             model::FieldType type) {
  model::ColumnInfo c;
  c.id = id;
  c.name = model::CIStr::From(name);
  c.offset = offset;
  c.type = std::move(type);
  c.state = model::SchemaState::kPublic;
  c.version = kColumnInfoVersion;
  return c;
}

void SetNotNull(model::ColumnInfo* column, bool has_default) {
  column->type.flag |= mf::kNotNull;
  if (!has_default) column->type.flag |= mf::kNoDefaultValue;
}

void SetDefault(model::ColumnInfo* column, std::string value) {
  column->type.flag &= ~static_cast<uint64_t>(mf::kNoDefaultValue);
  column->origin_default = value;
  column->default_value = std::move(value);
}

}  // namespace sluice::simkv::tidb
