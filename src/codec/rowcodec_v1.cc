#include "codec/rowcodec_v1.h"

#include <algorithm>

#include "codec/datum_codec.h"

namespace sluice::codec {

namespace {

constexpr uint8_t kMissing = 0;
constexpr uint8_t kFound = 1;
constexpr uint8_t kFoundNull = 2;

// tablecodec.flatten: the plain kind a value is stored as in v1.
Datum Flatten(const Datum& d) {
  switch (d.kind()) {
    case DatumKind::kTime:
    case DatumKind::kEnum:
    case DatumKind::kSet:
    case DatumKind::kBit:
      return Datum::Uint64(d.uint64());
    case DatumKind::kDuration:
      return Datum::Int64(d.int64());
    default:
      return d;
  }
}

// Positions of `cols` sorted by column id, for lookups while scanning.
std::vector<size_t> OrderById(std::span<const ColumnSpec> cols) {
  std::vector<size_t> order(cols.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return cols[a].id < cols[b].id; });
  return order;
}

}  // namespace

Status DecodeRowV1(std::string_view value, std::span<const ColumnSpec> cols,
                   const RowHandle& handle, std::vector<Datum>* out) {
  if (value.empty()) return Corruption("row v1: empty value");
  if (value.size() == 1 && value[0] == static_cast<char>(datum_flag::kNil)) value = {};
  std::vector<size_t> order = OrderById(cols);
  std::vector<uint8_t> found(cols.size(), kMissing);
  out->resize(cols.size());
  Datum id_datum;
  Datum scratch;
  while (!value.empty()) {
    RETURN_IF_ERROR(DecodeDatum(&value, &id_datum));
    if (id_datum.kind() != DatumKind::kInt64) return Corruption("row v1: column id is not an int");
    if (value.empty()) return Corruption("row v1: column id without a value");
    int64_t id = id_datum.int64();
    auto it = std::lower_bound(order.begin(), order.end(), id,
                               [&](size_t i, int64_t v) { return cols[i].id < v; });
    RETURN_IF_ERROR(DecodeDatum(&value, &scratch));
    for (; it != order.end() && cols[*it].id == id; ++it) {
      Datum* d = &(*out)[*it];
      *d = scratch;
      RETURN_IF_ERROR(ConvertDatumForColumn(cols[*it], d));
      found[*it] = d->is_null() ? kFoundNull : kFound;
    }
  }
  for (size_t i = 0; i < cols.size(); ++i) {
    if (found[i] == kFound) continue;
    RETURN_IF_ERROR(FillMissingColumn(cols[i], handle, found[i] == kFoundNull, &(*out)[i]));
  }
  return Status::Ok();
}

Status EncodeRowV1(std::span<const int64_t> col_ids, std::span<const Datum> values,
                   std::string* out) {
  if (col_ids.size() != values.size())
    return InvalidArgument("row v1: ids and values differ in count");
  if (col_ids.empty()) {
    out->push_back(static_cast<char>(datum_flag::kNil));
    return Status::Ok();
  }
  std::string row;
  for (size_t i = 0; i < col_ids.size(); ++i) {
    RETURN_IF_ERROR(EncodeValueDatum(Datum::Int64(col_ids[i]), &row));
    RETURN_IF_ERROR(EncodeValueDatum(Flatten(values[i]), &row));
  }
  out->append(row);
  return Status::Ok();
}

}  // namespace sluice::codec
