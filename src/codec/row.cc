#include "codec/row.h"

#include "codec/datum_codec.h"
#include "codec/mysql_type.h"
#include "codec/rowcodec_v1.h"
#include "codec/rowcodec_v2.h"

namespace sluice::codec {

namespace {

Status KindMismatch(const ColumnSpec& col, const Datum& d) {
  return Corruption("column " + std::to_string(col.id) + " of type " + std::to_string(col.type) +
                    " cannot hold a " + std::string(DatumKindName(d.kind())));
}

bool IsIntegral(const Datum& d) {
  return d.kind() == DatumKind::kInt64 || d.kind() == DatumKind::kUint64;
}

Status ConvertInteger(const ColumnSpec& col, Datum* d) {
  if (!IsIntegral(*d)) return KindMismatch(col, *d);
  bool want_unsigned = col.is_unsigned && col.type != mysql_type::kYear;
  if (want_unsigned && d->kind() == DatumKind::kInt64) {
    d->SetUint64(static_cast<uint64_t>(d->int64()));
  } else if (!want_unsigned && d->kind() == DatumKind::kUint64) {
    d->SetInt64(static_cast<int64_t>(d->uint64()));
  }
  return Status::Ok();
}

Status ConvertFloat(const ColumnSpec& col, Datum* d) {
  if (d->kind() != DatumKind::kFloat64 && d->kind() != DatumKind::kFloat32) {
    return KindMismatch(col, *d);
  }
  if (col.type == mysql_type::kFloat) {
    d->SetFloat32(static_cast<float>(d->float64()));
  } else {
    d->SetFloat64(d->float64());
  }
  return Status::Ok();
}

Status ExpectKind(const ColumnSpec& col, const Datum& d, DatumKind kind) {
  return d.kind() == kind ? Status::Ok() : KindMismatch(col, d);
}

int TimeFsp(const ColumnSpec& col) {
  bool is_date = col.type == mysql_type::kDate || col.type == mysql_type::kNewDate;
  return is_date ? 0 : col.fsp;
}

Status ConvertTime(const ColumnSpec& col, Datum* d) {
  if (d->kind() != DatumKind::kUint64 && d->kind() != DatumKind::kTime) {
    return KindMismatch(col, *d);
  }
  d->SetTime(d->uint64(), col.type, TimeFsp(col));
  return Status::Ok();
}

Status ConvertDuration(const ColumnSpec& col, Datum* d) {
  if (d->kind() != DatumKind::kInt64 && d->kind() != DatumKind::kDuration) {
    return KindMismatch(col, *d);
  }
  d->SetDuration(d->int64(), col.fsp);
  return Status::Ok();
}

// ENUM, SET and BIT are stored as plain unsigned integers.
Status ConvertUnsignedAs(const ColumnSpec& col, DatumKind kind, Datum* d) {
  if (d->kind() == DatumKind::kInt64) {
    d->SetUnsigned(kind, static_cast<uint64_t>(d->int64()));
  } else if (d->kind() == DatumKind::kUint64 || d->kind() == kind) {
    d->SetUnsigned(kind, d->uint64());
  } else {
    return KindMismatch(col, *d);
  }
  return Status::Ok();
}

}  // namespace

Status ConvertDatumForColumn(const ColumnSpec& col, Datum* d) {
  if (d->is_null()) return Status::Ok();
  switch (col.type) {
    case mysql_type::kTiny:
    case mysql_type::kShort:
    case mysql_type::kInt24:
    case mysql_type::kLong:
    case mysql_type::kLonglong:
    case mysql_type::kYear:
      return ConvertInteger(col, d);
    case mysql_type::kFloat:
    case mysql_type::kDouble:
      return ConvertFloat(col, d);
    case mysql_type::kNewDecimal:
      return ExpectKind(col, *d, DatumKind::kDecimal);
    case mysql_type::kJson:
      return ExpectKind(col, *d, DatumKind::kJson);
    case mysql_type::kVectorFloat32:
      return ExpectKind(col, *d, DatumKind::kVectorFloat32);
    case mysql_type::kDate:
    case mysql_type::kNewDate:
    case mysql_type::kDatetime:
    case mysql_type::kTimestamp:
      return ConvertTime(col, d);
    case mysql_type::kDuration:
      return ConvertDuration(col, d);
    case mysql_type::kEnum:
      return ConvertUnsignedAs(col, DatumKind::kEnum, d);
    case mysql_type::kSet:
      return ConvertUnsignedAs(col, DatumKind::kSet, d);
    case mysql_type::kBit:
      return ConvertUnsignedAs(col, DatumKind::kBit, d);
    default:
      if (IsStringType(col.type)) return ExpectKind(col, *d, DatumKind::kBytes);
      return InvalidArgument("unsupported column type " + std::to_string(col.type));
  }
}

namespace {

// Decodes the `offset`-th datum of a common handle into `out`.
Status CommonHandleColumn(const ColumnSpec& col, std::string_view encoded, Datum* out) {
  if (col.handle_offset < 0) return InvalidArgument("negative handle_offset");
  for (int i = 0; i < col.handle_offset; ++i) {
    ASSIGN_OR_RETURN(size_t n, PeekDatumLength(encoded));
    encoded.remove_prefix(n);
  }
  RETURN_IF_ERROR(DecodeDatum(&encoded, out));
  return ConvertDatumForColumn(col, out);
}

}  // namespace

Status FillMissingColumn(const ColumnSpec& col, const RowHandle& handle, bool stored_null,
                         Datum* out) {
  if (col.is_handle && handle.is_int) {
    if (col.is_unsigned) {
      out->SetUint64(static_cast<uint64_t>(handle.int_value));
    } else {
      out->SetInt64(handle.int_value);
    }
    return Status::Ok();
  }
  if (col.is_handle && !handle.common.empty() && !IsStringType(col.type)) {
    return CommonHandleColumn(col, handle.common, out);
  }
  if (stored_null) {
    out->SetNull();
  } else {
    *out = col.default_value;
  }
  return Status::Ok();
}

Status DecodeRow(std::string_view value, std::span<const ColumnSpec> cols, const RowHandle& handle,
                 std::vector<Datum>* out) {
  if (value.empty()) return Corruption("row: empty value");
  if (IsRowV2(value)) return DecodeRowV2(value, cols, handle, out);
  return DecodeRowV1(value, cols, handle, out);
}

}  // namespace sluice::codec
