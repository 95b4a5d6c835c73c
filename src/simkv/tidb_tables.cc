#include "simkv/tidb_tables.h"

#include <string>
#include <utility>
#include <vector>

#include "codec/mysql_type.h"
#include "simkv/tidb_types.h"

namespace sluice::simkv {

namespace mt = codec::mysql_type;
namespace mf = codec::mysql_flag;

namespace {

// Appends columns with consecutive ids and offsets.
class ColumnList {
 public:
  explicit ColumnList(model::TableInfo* table) : table_(table) {}

  model::ColumnInfo& Add(std::string_view name, model::FieldType type) {
    int64_t offset = static_cast<int64_t>(table_->columns.size());
    table_->columns.push_back(tidb::MakeColumn(offset + 1, name, offset, std::move(type)));
    table_->max_col_id = offset + 1;
    return table_->columns.back();
  }

 private:
  model::TableInfo* table_;
};

model::TableInfo NewTable(std::string_view name) {
  model::TableInfo t;
  t.name = model::CIStr::From(name);
  t.charset = std::string(tidb::kUtf8mb4);
  t.collate = std::string(tidb::kUtf8mb4Bin);
  t.state = model::SchemaState::kPublic;
  t.version = tidb::kTableInfoVersion;
  return t;
}

// BIGINT NOT NULL PRIMARY KEY: the int handle.
void AddIntHandle(ColumnList* cols, model::TableInfo* t) {
  model::ColumnInfo& id = cols->Add("id", tidb::IntType(mt::kLonglong));
  tidb::SetNotNull(&id, /*has_default=*/false);
  id.type.flag |= mf::kPriKey;
  t->pk_is_handle = true;
}

void AddPad(ColumnList* cols, int64_t width) {
  if (width <= 0) return;
  // utf8mb4 VARCHAR holds up to 16383 characters; wider padding is TEXT.
  if (width <= 16383) {
    cols->Add("pad", tidb::VarcharType(width));
  } else {
    cols->Add("pad", tidb::TextType(width <= 16777215 ? mt::kMediumBlob : mt::kLongBlob));
  }
}

model::TableInfo Narrow(std::string_view name, const TableTemplateOptions& o) {
  model::TableInfo t = NewTable(name);
  ColumnList cols(&t);
  AddIntHandle(&cols, &t);
  tidb::SetNotNull(&cols.Add("k", tidb::IntType(mt::kLong)), /*has_default=*/false);
  cols.Add("c", tidb::VarcharType(64));
  AddPad(&cols, o.pad_width);
  return t;
}

void AddIntegerColumns(ColumnList* cols) {
  const std::pair<const char*, uint8_t> kInts[] = {{"c_tinyint", mt::kTiny},
                                                   {"c_smallint", mt::kShort},
                                                   {"c_mediumint", mt::kInt24},
                                                   {"c_int", mt::kLong},
                                                   {"c_bigint", mt::kLonglong}};
  for (const auto& [name, tp] : kInts) {
    cols->Add(name, tidb::IntType(tp));
    cols->Add(std::string(name) + "_u", tidb::IntType(tp, /*is_unsigned=*/true));
  }
}

void AddStringColumns(ColumnList* cols) {
  cols->Add("c_char", tidb::CharType(16));
  cols->Add("c_varchar", tidb::VarcharType(255));
  cols->Add("c_binary", tidb::BinaryType(16));
  cols->Add("c_varbinary", tidb::VarbinaryType(64));
  cols->Add("c_tinytext", tidb::TextType(mt::kTinyBlob));
  cols->Add("c_text", tidb::TextType(mt::kBlob));
  cols->Add("c_mediumtext", tidb::TextType(mt::kMediumBlob));
  cols->Add("c_longtext", tidb::TextType(mt::kLongBlob));
  cols->Add("c_tinyblob", tidb::BlobType(mt::kTinyBlob));
  cols->Add("c_blob", tidb::BlobType(mt::kBlob));
  cols->Add("c_mediumblob", tidb::BlobType(mt::kMediumBlob));
  cols->Add("c_longblob", tidb::BlobType(mt::kLongBlob));
}

void AddTimeColumns(ColumnList* cols) {
  cols->Add("c_date", tidb::DateType());
  cols->Add("c_datetime", tidb::DatetimeType(0));
  cols->Add("c_datetime3", tidb::DatetimeType(3));
  cols->Add("c_datetime6", tidb::DatetimeType(6));
  cols->Add("c_timestamp", tidb::TimestampType(0));
  cols->Add("c_timestamp6", tidb::TimestampType(6));
  cols->Add("c_time", tidb::TimeType(0));
  cols->Add("c_time2", tidb::TimeType(2));
  cols->Add("c_year", tidb::YearType());
}

model::TableInfo KitchenSink(std::string_view name, const TableTemplateOptions& o) {
  model::TableInfo t = NewTable(name);
  ColumnList cols(&t);
  AddIntHandle(&cols, &t);
  AddIntegerColumns(&cols);
  cols.Add("c_float", tidb::FloatType());
  cols.Add("c_double", tidb::DoubleType());
  cols.Add("c_decimal", tidb::DecimalType(20, 6));
  cols.Add("c_decimal0", tidb::DecimalType(10, 0));
  AddStringColumns(&cols);
  AddTimeColumns(&cols);
  cols.Add("c_bit1", tidb::BitType(1));
  cols.Add("c_bit", tidb::BitType(10));
  cols.Add("c_bit64", tidb::BitType(64));
  cols.Add("c_enum", tidb::EnumType({"red", "green", "blue"}));
  cols.Add("c_set", tidb::SetType({"x", "y", "z"}));
  cols.Add("c_json", tidb::JsonType());
  tidb::SetNotNull(&cols.Add("c_notnull", tidb::IntType(mt::kLong)), /*has_default=*/false);
  AddPad(&cols, o.pad_width);
  return t;
}

model::TableInfo Clustered(std::string_view name, const TableTemplateOptions& o) {
  model::TableInfo t = NewTable(name);
  ColumnList cols(&t);
  for (auto [col_name, type] :
       {std::pair{"id", tidb::IntType(mt::kLonglong)}, std::pair{"name", tidb::VarcharType(32)}}) {
    model::ColumnInfo& c = cols.Add(col_name, type);
    tidb::SetNotNull(&c, /*has_default=*/false);
    c.type.flag |= mf::kPriKey;
  }
  cols.Add("v", tidb::IntType(mt::kLong));
  cols.Add("c", tidb::VarcharType(64));
  AddPad(&cols, o.pad_width);
  model::IndexInfo pk;
  pk.id = 1;
  pk.name = model::CIStr::From("PRIMARY");
  pk.columns = {{model::CIStr::From("id"), 0, model::kUnspecifiedLength},
                {model::CIStr::From("name"), 1, model::kUnspecifiedLength}};
  pk.state = model::SchemaState::kPublic;
  pk.tp = model::IndexType::kBtree;
  pk.unique = true;
  pk.primary = true;
  t.indices.push_back(std::move(pk));
  t.max_idx_id = 1;
  t.is_common_handle = true;
  t.common_handle_version = 1;
  return t;
}

model::PartitionDefinition Definition(int index, std::string less_than) {
  model::PartitionDefinition d;
  std::string name = "p";
  name += std::to_string(index);
  d.name = model::CIStr::From(name);
  if (!less_than.empty()) d.less_than = {std::move(less_than)};
  return d;
}

model::TableInfo Partitioned(TableShape shape, std::string_view name,
                             const TableTemplateOptions& o) {
  model::TableInfo t = Narrow(name, o);
  model::PartitionInfo p;
  p.expr = "`id`";
  p.enable = true;
  bool range = shape == TableShape::kRangePartitioned;
  int n = range ? (o.range_partitions < 1 ? 1 : o.range_partitions)
                : (o.hash_partitions < 1 ? 1 : o.hash_partitions);
  p.type = range ? model::PartitionType::kRange : model::PartitionType::kHash;
  for (int i = 0; i < n; ++i) {
    std::string bound;
    if (range) {
      bound = i + 1 == n ? "MAXVALUE" : std::to_string(o.key_space * (i + 1) / n + 1);
    }
    p.definitions.push_back(Definition(i, std::move(bound)));
  }
  if (!range) p.num = static_cast<uint64_t>(n);
  t.partition = std::move(p);
  return t;
}

}  // namespace

std::string_view TableShapeName(TableShape shape) {
  switch (shape) {
    case TableShape::kNarrow:
      return "narrow";
    case TableShape::kKitchenSink:
      return "kitchen_sink";
    case TableShape::kClustered:
      return "clustered";
    case TableShape::kRangePartitioned:
      return "range_partitioned";
    case TableShape::kHashPartitioned:
      return "hash_partitioned";
  }
  return "unknown";
}

model::TableInfo TableTemplate(TableShape shape, std::string_view name,
                               const TableTemplateOptions& options) {
  switch (shape) {
    case TableShape::kKitchenSink:
      return KitchenSink(name, options);
    case TableShape::kClustered:
      return Clustered(name, options);
    case TableShape::kRangePartitioned:
    case TableShape::kHashPartitioned:
      return Partitioned(shape, name, options);
    case TableShape::kNarrow:
      break;
  }
  return Narrow(name, options);
}

model::DBInfo MysqlDbInfo() {
  model::DBInfo db;
  db.id = kMysqlDbId;
  db.name = model::CIStr::From("mysql");
  db.charset = std::string(tidb::kUtf8mb4);
  db.collate = std::string(tidb::kUtf8mb4Bin);
  db.state = model::SchemaState::kPublic;
  return db;
}

model::TableInfo DdlJobTableInfo() {
  model::TableInfo t = NewTable("tidb_ddl_job");
  t.id = kDdlJobTableId;
  ColumnList cols(&t);
  model::ColumnInfo& job_id = cols.Add("job_id", tidb::IntType(mt::kLonglong));
  tidb::SetNotNull(&job_id, /*has_default=*/false);
  job_id.type.flag |= mf::kPriKey;
  t.pk_is_handle = true;
  cols.Add("reorg", tidb::IntType(mt::kLong));
  cols.Add("schema_ids", tidb::TextType(mt::kBlob));
  cols.Add("table_ids", tidb::TextType(mt::kBlob));
  cols.Add("job_meta", tidb::BlobType(mt::kLongBlob));
  cols.Add("type", tidb::IntType(mt::kLong));
  cols.Add("processing", tidb::IntType(mt::kLong));
  return t;
}

}  // namespace sluice::simkv
