// libFuzzer target: row values (v1 and v2) decoded against a column list that
// covers every column type, plus the binary JSON decoder. Decoders must
// return a status, never crash or read out of bounds.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "codec/json_binary.h"
#include "codec/mysql_type.h"
#include "codec/row.h"
#include "codec/rowcodec_v1.h"
#include "codec/rowcodec_v2.h"

namespace {

using sluice::codec::ColumnSpec;

std::vector<ColumnSpec> AllTypes() {
  namespace t = sluice::codec::mysql_type;
  const uint8_t types[] = {
      t::kTiny,       t::kShort,   t::kInt24,  t::kLong, t::kLonglong, t::kFloat,    t::kDouble,
      t::kNewDecimal, t::kVarchar, t::kString, t::kBlob, t::kDate,     t::kDatetime, t::kTimestamp,
      t::kDuration,   t::kYear,    t::kBit,    t::kEnum, t::kSet,      t::kJson,     t::kLonglong};
  std::vector<ColumnSpec> cols;
  int64_t id = 1;
  for (uint8_t type : types) {
    ColumnSpec c;
    c.id = id++;
    c.type = type;
    c.fsp = (id % 7);
    c.flen = 64;
    c.is_unsigned = (id % 5 == 0);
    cols.push_back(c);
  }
  cols.back().id = 300;  // a large-layout column id
  cols.front().is_handle = true;
  return cols;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::vector<ColumnSpec> kCols = AllTypes();
  std::string_view in(reinterpret_cast<const char*>(data), size);
  std::vector<sluice::codec::Datum> out;
  auto handle = sluice::codec::RowHandle::Int(7);
  (void)sluice::codec::DecodeRow(in, kCols, handle, &out).ok();
  (void)sluice::codec::DecodeRowV1(in, kCols, handle, &out).ok();
  sluice::codec::RowV2View view;
  if (sluice::codec::RowV2View::Parse(in, &view).ok()) {
    for (size_t i = 0; i < view.num_not_null(); ++i) (void)view.column_data(i);
  }
  (void)sluice::codec::JsonBinaryToText(in).ok();
  return 0;
}
