// Row format v2: encoding.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <numeric>

#include "codec/decimal.h"
#include "codec/endian.h"
#include "codec/number.h"
#include "codec/rowcodec_v2.h"

namespace sluice::codec {

namespace {

constexpr size_t kMaxSmallId = 255;
constexpr size_t kMaxSmallData = 0xFFFF;

void AppendCompactInt(int64_t v, std::string* out) {
  int n = v == static_cast<int8_t>(v)    ? 1
          : v == static_cast<int16_t>(v) ? 2
          : v == static_cast<int32_t>(v) ? 4
                                         : 8;
  internal::AppendLe(static_cast<uint64_t>(v), n, out);
}

void AppendCompactUint(uint64_t v, std::string* out) {
  int n = v <= 0xFF ? 1 : v <= 0xFFFF ? 2 : v <= 0xFFFFFFFF ? 4 : 8;
  internal::AppendLe(v, n, out);
}

Status AppendDecimal(const Datum& d, std::string* out) {
  int precision = d.precision();
  int frac = d.frac();
  if (precision == 0) RETURN_IF_ERROR(DecimalPrecisionAndFrac(d.bytes(), &precision, &frac));
  out->push_back(static_cast<char>(precision));
  out->push_back(static_cast<char>(frac));
  return EncodeDecimalBin(d.bytes(), precision, frac, out);
}

// Column ids sorted ascending, with the position of each in the input.
Result<std::vector<size_t>> SortedOrder(std::span<const int64_t> ids, size_t num_values) {
  if (ids.size() != num_values) return InvalidArgument("row v2: ids and values differ in count");
  if (ids.size() > std::numeric_limits<uint16_t>::max()) {
    return InvalidArgument("row v2: too many columns");
  }
  std::vector<size_t> order(ids.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return ids[a] < ids[b]; });
  for (size_t i = 0; i < order.size(); ++i) {
    int64_t id = ids[order[i]];
    if (id < 0 || id > std::numeric_limits<uint32_t>::max()) {
      return InvalidArgument("row v2: column id out of range");
    }
    if (i > 0 && ids[order[i - 1]] == id) return InvalidArgument("row v2: duplicate column id");
  }
  return order;
}

struct EncodedColumns {
  std::vector<int64_t> not_null_ids;
  std::vector<int64_t> null_ids;
  std::vector<size_t> end_offsets;
  std::string data;
};

void AppendIdsAndOffsets(const EncodedColumns& cols, bool large, std::string* out) {
  for (const auto* ids : {&cols.not_null_ids, &cols.null_ids}) {
    for (int64_t id : *ids) internal::AppendLe(static_cast<uint64_t>(id), large ? 4 : 1, out);
  }
  for (size_t off : cols.end_offsets) internal::AppendLe(off, large ? 4 : 2, out);
}

Status AppendChecksum(const RowV2EncodeOptions& options, size_t row_begin, std::string* out) {
  if (options.checksum_version == 0) return Status::Ok();
  if (options.checksum_version != 1 && options.checksum_version != 2) {
    return InvalidArgument("row v2: checksum version must be 0, 1 or 2");
  }
  uint8_t header = static_cast<uint8_t>(options.checksum_version) |
                   (options.with_extra_checksum ? kRowV2ChecksumExtraFlag : 0);
  std::string_view raw(out->data() + row_begin, out->size() - row_begin);
  uint32_t crc = ComputeRowV2Checksum(raw, header, options.checksum_key);
  out->push_back(static_cast<char>(header));
  internal::AppendLe32(crc, out);
  if (options.with_extra_checksum) internal::AppendLe32(options.extra_checksum, out);
  return Status::Ok();
}

}  // namespace

Status EncodeRowV2Value(const Datum& d, std::string* out) {
  switch (d.kind()) {
    case DatumKind::kInt64:
    case DatumKind::kDuration:
      AppendCompactInt(d.int64(), out);
      return Status::Ok();
    case DatumKind::kUint64:
    case DatumKind::kTime:
    case DatumKind::kEnum:
    case DatumKind::kSet:
    case DatumKind::kBit:
      AppendCompactUint(d.uint64(), out);
      return Status::Ok();
    case DatumKind::kFloat32:
    case DatumKind::kFloat64:
      internal::AppendBe64(FloatToComparable(d.float64()), out);
      return Status::Ok();
    case DatumKind::kDecimal:
      return AppendDecimal(d, out);
    case DatumKind::kBytes:
    case DatumKind::kJson:
    case DatumKind::kVectorFloat32:
      out->append(d.bytes());
      return Status::Ok();
    default:
      return InvalidArgument("row v2: cannot store a " + std::string(DatumKindName(d.kind())));
  }
}

Status EncodeRowV2(std::span<const int64_t> col_ids, std::span<const Datum> values,
                   std::string* out, const RowV2EncodeOptions& options) {
  ASSIGN_OR_RETURN(std::vector<size_t> order, SortedOrder(col_ids, values.size()));
  EncodedColumns cols;
  for (size_t i : order) {
    if (values[i].is_null()) {
      cols.null_ids.push_back(col_ids[i]);
      continue;
    }
    RETURN_IF_ERROR(EncodeRowV2Value(values[i], &cols.data));
    cols.not_null_ids.push_back(col_ids[i]);
    cols.end_offsets.push_back(cols.data.size());
  }
  if (cols.data.size() > std::numeric_limits<uint32_t>::max()) {
    return InvalidArgument("row v2: row data over 4 GiB");
  }
  int64_t max_id = order.empty() ? 0 : col_ids[order.back()];
  bool large = options.force_large || static_cast<size_t>(max_id) > kMaxSmallId ||
               cols.data.size() > kMaxSmallData;
  size_t row_begin = out->size();
  out->push_back(static_cast<char>(kRowV2Version));
  out->push_back(static_cast<char>((large ? row_v2_flag::kLarge : 0) |
                                   (options.checksum_version != 0 ? row_v2_flag::kChecksum : 0)));
  internal::AppendLe16(static_cast<uint16_t>(cols.not_null_ids.size()), out);
  internal::AppendLe16(static_cast<uint16_t>(cols.null_ids.size()), out);
  AppendIdsAndOffsets(cols, large, out);
  out->append(cols.data);
  Status st = AppendChecksum(options, row_begin, out);
  if (!st.ok()) out->resize(row_begin);
  return st;
}

}  // namespace sluice::codec
