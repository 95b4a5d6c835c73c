// Codec throughput: row format v2 decode and encode of a 10-column mixed row,
// and memcomparable row-key decode. Single-threaded, so rows/s is per core.
//   build/bench/codec_bench [--benchmark_min_time=1]
#include <string>
#include <vector>

#include "bench/bench_reporter.h"
#include "codec/datum.h"
#include "codec/json_binary.h"
#include "codec/mysql_type.h"
#include "codec/mytime.h"
#include "codec/row.h"
#include "codec/rowcodec_v2.h"
#include "codec/tablecodec.h"
#include "common/memcomparable.h"

namespace sluice::codec {
namespace {

namespace t = mysql_type;

// A typical OLTP row: ints, strings, a decimal, times, an enum, a JSON
// document and one NULL column.
struct MixedRow {
  std::vector<ColumnSpec> cols;
  std::vector<int64_t> ids;
  std::vector<Datum> values;
  std::string json;
};

MixedRow MakeMixedRow() {
  MixedRow r;
  auto add = [&r](int64_t id, uint8_t type, bool is_unsigned, int fsp, Datum d) {
    ColumnSpec c;
    c.id = id;
    c.type = type;
    c.is_unsigned = is_unsigned;
    c.fsp = fsp;
    r.cols.push_back(c);
    r.ids.push_back(id);
    r.values.push_back(std::move(d));
  };
  auto json = JsonTextToBinary(R"({"a": 1, "tags": ["x", "y"]})");
  r.json = json.ok() ? *json : std::string();
  MysqlTime ts{2026, 12, 2, 13, 45, 7, 123000};
  add(1, t::kLong, false, 0, Datum::Int64(123456));
  add(2, t::kLonglong, true, 0, Datum::Uint64(9876543210ULL));
  add(3, t::kVarchar, false, 0, Datum::BytesView("customer-000042-name"));
  add(4, t::kDouble, false, 0, Datum::Float64(3.14159));
  add(5, t::kNewDecimal, false, 0, Datum::Decimal("12345.67", 12, 2));
  add(6, t::kDatetime, false, 3, Datum::Time(ToPackedUint(ts), t::kDatetime, 3));
  add(7, t::kDate, false, 0, Datum::Time(ToPackedUint({2026, 12, 2}), t::kDate, 0));
  add(8, t::kEnum, false, 0, Datum::Enum(2));
  add(9, t::kJson, false, 0, Datum::JsonView(r.json));
  add(10, t::kVarchar, false, 0, Datum::Null());
  return r;
}

void BM_RowV2Decode(benchmark::State& state) {
  MixedRow row = MakeMixedRow();
  std::string value;
  if (!EncodeRowV2(row.ids, row.values, &value).ok()) {
    state.SkipWithError("encode failed");
    return;
  }
  std::vector<Datum> out;
  RowHandle handle = RowHandle::Int(42);
  for (auto _ : state) {
    Status st = DecodeRow(value, row.cols, handle, &out);
    if (!st.ok()) {
      state.SkipWithError("decode failed");
      break;
    }
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["rows_per_s"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
  state.counters["row_bytes"] = static_cast<double>(value.size());
}
BENCHMARK(BM_RowV2Decode);

void BM_RowV2Encode(benchmark::State& state) {
  MixedRow row = MakeMixedRow();
  std::string value;
  for (auto _ : state) {
    value.clear();
    Status st = EncodeRowV2(row.ids, row.values, &value);
    if (!st.ok()) {
      state.SkipWithError("encode failed");
      break;
    }
    benchmark::DoNotOptimize(value.data());
  }
  state.counters["rows_per_s"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_RowV2Encode);

// Region/span boundaries arrive memcomparable-encoded: decode to the raw row
// key, then split it into table id and handle.
void BM_ComparableRowKeyDecode(benchmark::State& state) {
  std::vector<std::string> keys;
  for (int64_t h = 0; h < 1024; ++h) {
    keys.push_back(memcomparable::EncodeBytes(EncodeRowKey(TableId(100 + h % 7), h * 7919)));
  }
  std::string raw;
  size_t i = 0;
  for (auto _ : state) {
    raw.clear();
    std::string_view in = keys[i++ & 1023];
    Status st = memcomparable::DecodeBytes(&in, &raw);
    auto decoded = DecodeRowKey(raw);
    if (!st.ok() || !decoded.ok()) {
      state.SkipWithError("decode failed");
      break;
    }
    benchmark::DoNotOptimize(decoded->handle.int_value);
  }
  state.counters["keys_per_s"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_ComparableRowKeyDecode);

// Baseline for the line above: the memcomparable decode alone.
void BM_MemcomparableDecode(benchmark::State& state) {
  std::vector<std::string> keys;
  for (int64_t h = 0; h < 1024; ++h) {
    keys.push_back(memcomparable::EncodeBytes(EncodeRowKey(TableId(100), h)));
  }
  std::string raw;
  size_t i = 0;
  for (auto _ : state) {
    raw.clear();
    std::string_view in = keys[i++ & 1023];
    Status st = memcomparable::DecodeBytes(&in, &raw);
    benchmark::DoNotOptimize(st.ok());
  }
  state.counters["keys_per_s"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_MemcomparableDecode);

}  // namespace
}  // namespace sluice::codec

SLUICE_BENCH_MAIN();
