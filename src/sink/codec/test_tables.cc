#include "sink/codec/test_tables.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "codec/json_binary.h"
#include "codec/mysql_type.h"
#include "codec/mytime.h"

namespace sluice::sink::testing {

namespace mt = codec::mysql_type;
namespace mf = codec::mysql_flag;

namespace {

template <typename T>
T Must(Result<T> r) {
  if (!r.ok()) {
    std::fprintf(stderr, "test fixture: %s\n", r.status().ToString().c_str());
    std::abort();
  }
  return std::move(r).value();
}

model::ColumnInfo Sized(model::ColumnInfo c, int64_t flen, int64_t decimal) {
  c.type.flen = flen;
  c.type.decimal = decimal;
  return c;
}

model::ColumnInfo Binary(model::ColumnInfo c) {
  c.type.charset = "binary";
  c.type.collate = "binary";
  c.type.flag |= mf::kBinary;
  return c;
}

model::ColumnInfo WithElems(model::ColumnInfo c, std::vector<std::string> elems) {
  c.type.elems = std::move(elems);
  return c;
}

event::TableSchemaPtr Make(std::string db, std::string name, int64_t id,
                           std::vector<model::ColumnInfo> cols, Ts version, bool pk_is_handle) {
  model::TableInfo t;
  t.id = id;
  t.name = model::CIStr::From(name);
  t.pk_is_handle = pk_is_handle;
  for (size_t i = 0; i < cols.size(); ++i) cols[i].offset = static_cast<int64_t>(i);
  t.columns = std::move(cols);
  t.state = model::SchemaState::kPublic;
  return Must(event::TableSchema::Make(std::move(db), 2, std::move(t), version));
}

codec::Datum Vector(std::vector<float> v) {
  std::string raw(4 + v.size() * 4, '\0');
  uint32_t dim = static_cast<uint32_t>(v.size());
  std::memcpy(raw.data(), &dim, 4);
  std::memcpy(raw.data() + 4, v.data(), v.size() * 4);
  codec::Datum d;
  d.ResetOwned(codec::DatumKind::kVectorFloat32)->assign(raw);
  return d;
}

}  // namespace

model::ColumnInfo Column(int64_t id, std::string_view name, uint8_t tp, uint64_t flag,
                         std::string charset) {
  model::ColumnInfo c;
  c.id = id;
  c.name = model::CIStr::From(name);
  c.type.tp = tp;
  c.type.flag = flag;
  c.type.flen = model::kUnspecifiedLength;
  c.type.decimal = model::kUnspecifiedLength;
  c.type.charset = std::move(charset);
  c.state = model::SchemaState::kPublic;
  return c;
}

event::TableSchemaPtr AllTypesSchema(Ts version) {
  std::vector<model::ColumnInfo> cols = {
      Column(1, "id", mt::kLong, mf::kPriKey | mf::kNotNull),
      Column(2, "c_tinyint", mt::kTiny),
      Column(3, "c_tinyint_u", mt::kTiny, mf::kUnsigned),
      Column(4, "c_smallint", mt::kShort),
      Column(5, "c_mediumint", mt::kInt24),
      Column(6, "c_int", mt::kLong),
      Column(7, "c_bigint", mt::kLonglong),
      Column(8, "c_bigint_u", mt::kLonglong, mf::kUnsigned),
      Column(9, "c_float", mt::kFloat),
      Column(10, "c_double", mt::kDouble),
      Sized(Column(11, "c_decimal", mt::kNewDecimal), 10, 4),
      Sized(Column(12, "c_char", mt::kString), 16, 0),
      Sized(Column(13, "c_varchar", mt::kVarchar), 16, 0),
      Column(14, "c_text", mt::kBlob),
      Binary(Sized(Column(15, "c_binary", mt::kString), 16, 0)),
      Binary(Sized(Column(16, "c_varbinary", mt::kVarchar), 16, 0)),
      Binary(Column(17, "c_blob", mt::kBlob)),
      Column(18, "c_date", mt::kDate),
      Sized(Column(19, "c_datetime", mt::kDatetime), 23, 3),
      Column(20, "c_timestamp", mt::kTimestamp),
      Sized(Column(21, "c_time", mt::kDuration), 12, 2),
      Column(22, "c_year", mt::kYear, mf::kUnsigned | mf::kZerofill),
      WithElems(Column(23, "c_enum", mt::kEnum), {"a", "b", "c"}),
      WithElems(Column(24, "c_set", mt::kSet), {"a", "b", "c"}),
      Sized(Column(25, "c_bit", mt::kBit, mf::kUnsigned), 64, 0),
      Column(26, "c_json", mt::kJson),
      Sized(Column(27, "c_vector", mt::kVectorFloat32), 3, 0),
  };
  return Make("db", "all_types", 50, std::move(cols), version, true);
}

codec::Datum Str(std::string s) { return codec::Datum::Bytes(std::move(s)); }

codec::Datum DateTime(std::string_view text, uint8_t type, int fsp) {
  return codec::Datum::Time(codec::ToPackedUint(Must(codec::ParseTime(text))), type, fsp);
}

std::vector<codec::Datum> AllTypesRow(int64_t id) {
  return {
      codec::Datum::Int64(id),
      codec::Datum::Int64(-128),
      codec::Datum::Uint64(255),
      codec::Datum::Int64(32767),
      codec::Datum::Int64(8388607),
      codec::Datum::Int64(2147483647),
      codec::Datum::Int64(9223372036854775807),
      codec::Datum::Uint64(18446744073709551615u),
      codec::Datum::Float32(3.14f),
      codec::Datum::Float64(1e6),
      codec::Datum::Decimal("123.4560", 10, 4),
      Str("abc"),
      Str("a,\"b\"\r\nc"),
      Str("你好, <world> & more"),
      Str(std::string("\x05\x07\n\x0f$2+cx<&\xff\xfe-7F", 16)),
      Str(std::string("\x00\x01\x80", 3)),
      Str("hello world"),
      DateTime("2014-06-04", mt::kDate, 0),
      DateTime("2015-12-20 23:58:58.123", mt::kDatetime, 3),
      DateTime("1973-12-30 15:30:00", mt::kTimestamp, 0),
      codec::Datum::Duration(Must(codec::ParseDuration("-838:59:59.50")), 2),
      codec::Datum::Int64(1970),
      codec::Datum::Enum(2),
      codec::Datum::Set(5),
      codec::Datum::Bit(683),
      codec::Datum::Json(Must(codec::JsonTextToBinary(R"({"key":"value","n":[1,2]})"))),
      Vector({1.0f, 2.5f, -3.0f}),
  };
}

std::vector<codec::Datum> AllTypesNullRow(int64_t id) {
  std::vector<codec::Datum> row(27);
  row[0] = codec::Datum::Int64(id);
  return row;
}

event::TableSchemaPtr EmployeeSchema(Ts version) {
  std::vector<model::ColumnInfo> cols = {
      Column(1, "Id", mt::kLong, mf::kNotNull),
      Sized(Column(2, "LastName", mt::kVarchar), 20, 0),
      Sized(Column(3, "FirstName", mt::kVarchar), 30, 0),
      Column(4, "HireDate", mt::kDate),
      Sized(Column(5, "OfficeLocation", mt::kVarchar), 20, 0),
  };
  return Make("hr", "employee", 60, std::move(cols), version, false);
}

std::vector<codec::Datum> EmployeeRow(int64_t id, std::string last, std::string first,
                                      std::string_view hire_date, std::string office) {
  return {codec::Datum::Int64(id), Str(std::move(last)), Str(std::move(first)),
          DateTime(hire_date, mt::kDate, 0), Str(std::move(office))};
}

event::TableSchemaPtr KvSchema(std::string db, std::string name, int64_t table_id, Ts version) {
  std::vector<model::ColumnInfo> cols = {
      Column(1, "id", mt::kLonglong, mf::kPriKey | mf::kNotNull),
      Sized(Column(2, "v", mt::kVarchar), 64, 0),
  };
  return Make(std::move(db), std::move(name), table_id, std::move(cols), version, true);
}

std::vector<codec::Datum> KvRow(int64_t id, std::string v) {
  return {codec::Datum::Int64(id), Str(std::move(v))};
}

event::RowChange Insert(std::vector<codec::Datum> row) {
  event::RowChange r;
  r.kind = event::RowKind::kInsert;
  r.row = std::move(row);
  return r;
}

event::RowChange Update(std::vector<codec::Datum> before, std::vector<codec::Datum> after) {
  event::RowChange r;
  r.kind = event::RowKind::kUpdate;
  r.pre_row = std::move(before);
  r.row = std::move(after);
  return r;
}

event::RowChange Delete(std::vector<codec::Datum> row) {
  event::RowChange r;
  r.kind = event::RowKind::kDelete;
  r.pre_row = std::move(row);
  return r;
}

event::DmlEventPtr Dml(event::TableSchemaPtr schema, Ts commit_ts,
                       std::vector<event::RowChange> rows, int64_t physical_table_id) {
  auto e = std::make_shared<event::DmlEvent>();
  e->physical_table_id = physical_table_id != 0 ? physical_table_id : schema->table_id();
  e->schema = std::move(schema);
  e->start_ts = Ts(commit_ts.value() - 1);
  e->commit_ts = commit_ts;
  e->rows = std::move(rows);
  return e;
}

}  // namespace sluice::sink::testing
