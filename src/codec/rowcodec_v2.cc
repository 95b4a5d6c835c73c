// Row format v2: parsing and decoding.
#include "codec/rowcodec_v2.h"

#include "codec/crc32.h"
#include "codec/decimal.h"
#include "codec/endian.h"
#include "codec/json_binary.h"
#include "codec/mysql_type.h"
#include "codec/number.h"

namespace sluice::codec {

namespace {

constexpr size_t kRowHeaderSize = 6;

// Checks that ids [begin, end) are strictly ascending.
bool Ascending(const RowV2View& row, size_t begin, size_t end) {
  for (size_t i = begin + 1; i < end; ++i) {
    if (row.column_id(i - 1) >= row.column_id(i)) return false;
  }
  return true;
}

}  // namespace

int64_t RowV2View::column_id(size_t i) const {
  if (large_) return internal::LoadLe32(ids_ + 4 * i);
  return static_cast<uint8_t>(ids_[i]);
}

uint32_t RowV2View::EndOffset(size_t i) const {
  return large_ ? internal::LoadLe32(offsets_ + 4 * i) : internal::LoadLe16(offsets_ + 2 * i);
}

std::string_view RowV2View::column_data(size_t i) const {
  uint32_t start = i == 0 ? 0 : EndOffset(i - 1);
  return data_.substr(start, EndOffset(i) - start);
}

int RowV2View::Search(size_t lo, size_t hi, int64_t id) const {
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    int64_t v = column_id(mid);
    if (v == id) return static_cast<int>(mid);
    if (v < id) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return -1;
}

int RowV2View::Find(int64_t id, bool* is_null) const {
  *is_null = false;
  int i = Search(0, num_not_null_, id);
  if (i >= 0) return i;
  *is_null = Search(num_not_null_, num_not_null_ + num_null_, id) >= 0;
  return -1;
}

int RowV2View::Finder::Find(int64_t id, bool* is_null) {
  if (id < last_id_) {  // out of order: restart the merge
    not_null_pos_ = 0;
    null_pos_ = row_.num_not_null_;
  }
  last_id_ = id;
  *is_null = false;
  size_t end = row_.num_not_null_;
  while (not_null_pos_ < end && row_.column_id(not_null_pos_) < id) ++not_null_pos_;
  if (not_null_pos_ < end && row_.column_id(not_null_pos_) == id) {
    return static_cast<int>(not_null_pos_);
  }
  end += row_.num_null_;
  while (null_pos_ < end && row_.column_id(null_pos_) < id) ++null_pos_;
  *is_null = null_pos_ < end && row_.column_id(null_pos_) == id;
  return -1;
}

Status RowV2View::ParseChecksum(std::string_view tail) {
  if (!has_checksum_) {
    return tail.empty() ? Status::Ok() : Corruption("row v2: trailing bytes after data");
  }
  if (tail.empty()) return Corruption("row v2: missing checksum header");
  checksum_header_ = static_cast<uint8_t>(tail[0]);
  if ((checksum_header_ & 0xF0) != 0 || checksum_version() > 2) {
    return Corruption("row v2: unknown checksum header");
  }
  size_t want = 1 + 4 + (has_extra_checksum() ? 4 : 0);
  if (tail.size() != want) return Corruption("row v2: checksum length mismatch");
  checksum_ = internal::LoadLe32(tail.data() + 1);
  if (has_extra_checksum()) extra_checksum_ = internal::LoadLe32(tail.data() + 5);
  return Status::Ok();
}

Status RowV2View::ValidateLayout() const {
  uint32_t prev = 0;
  for (size_t i = 0; i < num_not_null_; ++i) {
    uint32_t end = EndOffset(i);
    if (end < prev) return Corruption("row v2: decreasing offsets");
    prev = end;
  }
  if (!Ascending(*this, 0, num_not_null_) ||
      !Ascending(*this, num_not_null_, num_not_null_ + num_null_)) {
    return Corruption("row v2: column ids not ascending");
  }
  return Status::Ok();
}

Status RowV2View::ParseLayout(std::string_view value) {
  size_t ids_len = (num_not_null_ + num_null_) * (large_ ? 4 : 1);
  size_t offsets_len = num_not_null_ * (large_ ? 4 : 2);
  if (value.size() - kRowHeaderSize < ids_len + offsets_len) {
    return Corruption("row v2: truncated column ids or offsets");
  }
  ids_ = value.data() + kRowHeaderSize;
  offsets_ = ids_ + ids_len;
  RETURN_IF_ERROR(ValidateLayout());
  size_t data_begin = kRowHeaderSize + ids_len + offsets_len;
  size_t data_len = num_not_null_ == 0 ? 0 : EndOffset(num_not_null_ - 1);
  if (data_len > value.size() - data_begin) return Corruption("row v2: data shorter than offsets");
  data_ = value.substr(data_begin, data_len);
  raw_row_ = value.substr(0, data_begin + data_len);
  return ParseChecksum(value.substr(data_begin + data_len));
}

Status RowV2View::Parse(std::string_view value, RowV2View* out) {
  if (value.size() < kRowHeaderSize) return Corruption("row v2: truncated header");
  if (static_cast<uint8_t>(value[0]) != kRowV2Version) return Corruption("row v2: bad version");
  uint8_t flags = static_cast<uint8_t>(value[1]);
  if ((flags & ~(row_v2_flag::kLarge | row_v2_flag::kChecksum)) != 0) {
    return Corruption("row v2: unknown flags");
  }
  RowV2View row;
  row.large_ = (flags & row_v2_flag::kLarge) != 0;
  row.has_checksum_ = (flags & row_v2_flag::kChecksum) != 0;
  row.num_not_null_ = internal::LoadLe16(value.data() + 2);
  row.num_null_ = internal::LoadLe16(value.data() + 4);
  RETURN_IF_ERROR(row.ParseLayout(value));
  *out = row;
  return Status::Ok();
}

namespace {

// Integers are stored in 1, 2, 4 or 8 bytes; other widths are corrupt.
bool VarInt(std::string_view d, int64_t* v) {
  switch (d.size()) {
    case 1:
      *v = static_cast<int8_t>(d[0]);
      return true;
    case 2:
      *v = static_cast<int16_t>(internal::LoadLe16(d.data()));
      return true;
    case 4:
      *v = static_cast<int32_t>(internal::LoadLe32(d.data()));
      return true;
    case 8:
      *v = static_cast<int64_t>(internal::LoadLe64(d.data()));
      return true;
    default:
      return false;
  }
}

bool VarUint(std::string_view d, uint64_t* v) {
  switch (d.size()) {
    case 1:
      *v = static_cast<uint8_t>(d[0]);
      return true;
    case 2:
      *v = internal::LoadLe16(d.data());
      return true;
    case 4:
      *v = internal::LoadLe32(d.data());
      return true;
    case 8:
      *v = internal::LoadLe64(d.data());
      return true;
    default:
      return false;
  }
}

Status BadWidth(std::string_view d) {
  return Corruption("row v2: integer of " + std::to_string(d.size()) + " bytes");
}

Status DecodeInteger(const ColumnSpec& col, std::string_view data, Datum* out) {
  if (col.is_unsigned && col.type != mysql_type::kYear) {
    uint64_t v = 0;
    if (!VarUint(data, &v)) return BadWidth(data);
    out->SetUint64(v);
  } else {
    int64_t v = 0;
    if (!VarInt(data, &v)) return BadWidth(data);
    out->SetInt64(v);
  }
  return Status::Ok();
}

Status DecodeFloatValue(const ColumnSpec& col, std::string_view data, Datum* out) {
  if (data.size() != 8) return Corruption("row v2: float is not 8 bytes");
  double v = ComparableToFloat(internal::LoadBe64(data.data()));
  if (col.type == mysql_type::kFloat) {
    out->SetFloat32(static_cast<float>(v));
  } else {
    out->SetFloat64(v);
  }
  return Status::Ok();
}

Status DecodeDecimalValue(std::string_view data, Datum* out) {
  if (data.size() < 2) return Corruption("row v2: truncated decimal header");
  int precision = static_cast<uint8_t>(data[0]);
  int frac = static_cast<uint8_t>(data[1]);
  std::string_view bin = data.substr(2);
  RETURN_IF_ERROR(DecodeDecimalBin(&bin, precision, frac, out->ResetDecimal(precision, frac)));
  if (!bin.empty()) return Corruption("row v2: trailing bytes after decimal");
  return Status::Ok();
}

Status DecodeJsonValue(std::string_view data, Datum* out) {
  ASSIGN_OR_RETURN(size_t n, JsonBinaryLength(data));
  if (n != data.size()) return Corruption("row v2: JSON length mismatch");
  out->SetView(DatumKind::kJson, data);
  return Status::Ok();
}

Status DecodeVectorValue(std::string_view data, Datum* out) {
  if (data.size() < 4 || data.size() != 4 + uint64_t{internal::LoadLe32(data.data())} * 4) {
    return Corruption("row v2: vector length mismatch");
  }
  out->SetView(DatumKind::kVectorFloat32, data);
  return Status::Ok();
}

Status DecodeUnsignedAs(DatumKind kind, std::string_view data, Datum* out) {
  uint64_t v = 0;
  if (!VarUint(data, &v)) return BadWidth(data);
  out->SetUnsigned(kind, v);
  return Status::Ok();
}

Status DecodeTime(const ColumnSpec& col, std::string_view data, Datum* out) {
  uint64_t packed = 0;
  if (!VarUint(data, &packed)) return BadWidth(data);
  bool is_date = col.type == mysql_type::kDate || col.type == mysql_type::kNewDate;
  out->SetTime(packed, col.type, is_date ? 0 : col.fsp);
  return Status::Ok();
}

Status DecodeDurationValue(const ColumnSpec& col, std::string_view data, Datum* out) {
  int64_t nanos = 0;
  if (!VarInt(data, &nanos)) return BadWidth(data);
  out->SetDuration(nanos, col.fsp);
  return Status::Ok();
}

}  // namespace

Status DecodeRowV2Value(const ColumnSpec& col, std::string_view data, Datum* out) {
  switch (col.type) {
    case mysql_type::kTiny:
    case mysql_type::kShort:
    case mysql_type::kInt24:
    case mysql_type::kLong:
    case mysql_type::kLonglong:
    case mysql_type::kYear:
      return DecodeInteger(col, data, out);
    case mysql_type::kFloat:
    case mysql_type::kDouble:
      return DecodeFloatValue(col, data, out);
    case mysql_type::kNewDecimal:
      return DecodeDecimalValue(data, out);
    case mysql_type::kDate:
    case mysql_type::kNewDate:
    case mysql_type::kDatetime:
    case mysql_type::kTimestamp:
      return DecodeTime(col, data, out);
    case mysql_type::kDuration:
      return DecodeDurationValue(col, data, out);
    case mysql_type::kEnum:
      return DecodeUnsignedAs(DatumKind::kEnum, data, out);
    case mysql_type::kSet:
      return DecodeUnsignedAs(DatumKind::kSet, data, out);
    case mysql_type::kBit:
      return DecodeUnsignedAs(DatumKind::kBit, data, out);
    case mysql_type::kJson:
      return DecodeJsonValue(data, out);
    case mysql_type::kVectorFloat32:
      return DecodeVectorValue(data, out);
    default:
      if (!IsStringType(col.type)) {
        return InvalidArgument("unsupported column type " + std::to_string(col.type));
      }
      out->SetBytesView(data);
      return Status::Ok();
  }
}

Status DecodeRowV2(std::string_view value, std::span<const ColumnSpec> cols,
                   const RowHandle& handle, std::vector<Datum>* out) {
  RowV2View row;
  RETURN_IF_ERROR(RowV2View::Parse(value, &row));
  out->resize(cols.size());
  RowV2View::Finder finder(row);
  for (size_t i = 0; i < cols.size(); ++i) {
    const ColumnSpec& col = cols[i];
    bool is_null = false;
    int idx = finder.Find(col.id, &is_null);
    Datum* d = &(*out)[i];
    if (idx >= 0) {
      RETURN_IF_ERROR(DecodeRowV2Value(col, row.column_data(static_cast<size_t>(idx)), d));
    } else {
      RETURN_IF_ERROR(FillMissingColumn(col, handle, is_null, d));
    }
  }
  return Status::Ok();
}

uint32_t ComputeRowV2Checksum(std::string_view raw_row, uint8_t checksum_header,
                              std::string_view key_or_handle) {
  uint32_t crc = Crc32Update(0, raw_row);
  char header = static_cast<char>(checksum_header);
  crc = Crc32Update(crc, std::string_view(&header, 1));
  return Crc32Update(crc, key_or_handle);
}

}  // namespace sluice::codec
