#include "codec/model/test_documents.h"

#include <cctype>

namespace sluice::model::testdocs {
namespace {

std::string B(bool b) { return b ? "true" : "false"; }
std::string N(int64_t v) { return std::to_string(v); }
std::string U(uint64_t v) { return std::to_string(v); }
std::string Q(std::string_view s) { return Cat({"\"", s, "\""}); }

template <typename T, typename Fn>
std::string JoinOrNull(const std::vector<T>& items, Fn fn) {
  if (items.empty()) return "null";
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += ",";
    out += fn(items[i]);
  }
  out += "]";
  return out;
}

std::string Identity(const std::string& s) { return s; }

std::string IndexColumn(const IndexColumnDoc& c) {
  return Cat({R"({"name":)", Name(c.name), R"(,"offset":)", N(c.offset), R"(,"length":)",
              N(c.length), "}"});
}

std::string Definition(const PartitionDefDoc& d) {
  std::string out =
      Cat({R"({"id":)", N(d.id), R"(,"name":)", Name(d.name), R"(,"less_than":)", d.less_than,
           R"(,"in_values":)", d.in_values, R"(,"policy_ref_info":null)"});
  if (!d.comment.empty()) out += Cat({R"(,"comment":)", Q(d.comment)});
  out += "}";
  return out;
}

std::string FieldTypeText(const ColumnDoc& c) {
  return Cat({R"({"Tp":)", N(c.tp), R"(,"Flag":)", U(c.flag), R"(,"Flen":)", N(c.flen),
              R"(,"Decimal":)", N(c.decimal), R"(,"Charset":)", Q(c.charset), R"(,"Collate":)",
              Q(c.collate), R"(,"Elems":)", c.elems, R"(,"ElemsIsBinaryLit":null,"Array":false})"});
}

}  // namespace

std::string Cat(std::initializer_list<std::string_view> parts) {
  std::string out;
  for (std::string_view part : parts) out.append(part);
  return out;
}

std::string Name(std::string_view original) {
  std::string lower(original);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return Cat({R"({"O":)", Q(original), R"(,"L":)", Q(lower), "}"});
}

std::string Column(const ColumnDoc& c) {
  std::string out = Cat({R"({"id":)",
                         N(c.id),
                         R"(,"name":)",
                         Name(c.name),
                         R"(,"offset":)",
                         N(c.offset),
                         R"(,"origin_default":)",
                         c.origin_default,
                         R"(,"origin_default_bit":)",
                         c.origin_default_bit,
                         R"(,"default":)",
                         c.default_value,
                         R"(,"default_bit":)",
                         c.default_bit,
                         R"(,"default_is_expr":false,"generated_expr_string":)",
                         Q(c.generated_expr),
                         R"(,"generated_stored":)",
                         B(c.generated_stored),
                         R"(,"dependences":)",
                         c.dependences,
                         R"(,"type":)",
                         FieldTypeText(c)});
  if (!c.changing_type.empty()) out += Cat({R"(,"changing_type":)", c.changing_type});
  out += Cat({R"(,"state":)", N(c.state), R"(,"comment":)", Q(c.comment),
              R"(,"hidden":false,"change_state_info":)", c.change_state_info, R"(,"version":)",
              N(c.version), "}"});
  return out;
}

std::string Index(const IndexDoc& i) {
  return Cat({R"({"id":)", N(i.id), R"(,"idx_name":)", Name(i.name),
              R"(,"tbl_name":{"O":"","L":""},"idx_cols":)", JoinOrNull(i.columns, IndexColumn),
              R"(,"state":)", N(i.state),
              R"(,"backfill_state":0,"comment":"","index_type":1,"is_unique":)", B(i.unique),
              R"(,"is_primary":)", B(i.primary), R"(,"is_invisible":)", B(i.invisible),
              R"(,"is_global":)", B(i.global),
              R"(,"mv_index":false,"vector_index":null,"inverted_index":null})"});
}

std::string Partition(const PartitionDoc& p) {
  return Cat({R"({"type":)",
              N(p.type),
              R"(,"expr":)",
              Q(p.expr),
              R"(,"columns":)",
              p.columns,
              R"(,"enable":)",
              B(p.enable),
              R"(,"is_empty_columns":false,"definitions":)",
              JoinOrNull(p.definitions, Definition),
              R"(,"adding_definitions":)",
              JoinOrNull(p.adding, Definition),
              R"(,"dropping_definitions":)",
              JoinOrNull(p.dropping, Definition),
              R"(,"NewPartitionIDs":null,"states":null,"num":)",
              U(p.num),
              R"(,"ddl_state":)",
              N(p.ddl_state),
              R"(,"new_table_id":0,"ddl_type":0,"ddl_expr":"","ddl_columns":null,)",
              R"("ddl_update_indexes":null})"});
}

std::string Table(const TableDoc& t) {
  return Cat({R"({"id":)",
              N(t.id),
              R"(,"name":)",
              Name(t.name),
              R"(,"charset":"utf8mb4","collate":"utf8mb4_bin","cols":)",
              JoinOrNull(t.columns, Identity),
              R"(,"index_info":)",
              JoinOrNull(t.indices, Identity),
              R"(,"constraint_info":null,"fk_info":null,"state":)",
              N(t.state),
              R"(,"pk_is_handle":)",
              B(t.pk_is_handle),
              R"(,"is_common_handle":)",
              B(t.is_common_handle),
              R"(,"common_handle_version":)",
              N(t.common_handle_version),
              R"(,"comment":)",
              Q(t.comment),
              R"(,"auto_inc_id":)",
              N(t.auto_inc_id),
              R"(,"auto_id_cache":0,"auto_rand_id":0,"max_col_id":)",
              N(t.max_col_id),
              R"(,"max_idx_id":)",
              N(t.max_idx_id),
              R"(,"max_fk_id":0,"max_cst_id":0,)",
              R"("update_timestamp":)",
              U(t.update_timestamp),
              R"(,"ShardRowIDBits":0,"max_shard_row_id_bits":0,"auto_random_bits":0,)",
              R"("auto_random_range_bits":0,"pre_split_regions":0,"partition":)",
              t.partition,
              R"(,"compression":"","view":)",
              t.view,
              R"(,"sequence":null,"Lock":null,"version":)",
              N(t.version),
              R"(,"tiflash_replica":null,"is_columnar":false,"temp_table_type":0,)",
              R"("cache_table_status":0,"policy_ref_info":null,"stats_options":null,)",
              R"("exchange_partition_info":null,"ttl_info":null,"revision":)",
              U(t.revision),
              "}"});
}

std::string DB(const DBDoc& d) {
  return Cat({R"({"id":)", N(d.id), R"(,"db_name":)", Name(d.name),
              R"(,"charset":"utf8mb4","collate":"utf8mb4_bin","Deprecated":{},"state":)",
              N(d.state), R"(,"policy_ref_info":null,"read_only":false,"archived":false})"});
}

std::string JobText(const JobDoc& j) {
  std::string out = Cat({R"({"id":)",
                         N(j.id),
                         R"(,"type":)",
                         N(j.type),
                         R"(,"schema_id":)",
                         N(j.schema_id),
                         R"(,"table_id":)",
                         N(j.table_id),
                         R"(,"schema_name":)",
                         Q(j.schema_name),
                         R"(,"table_name":)",
                         Q(j.table_name),
                         R"(,"state":)",
                         N(j.state),
                         R"(,"warning":null,"err":null,"err_count":0,"row_count":0,"raw_args":)",
                         j.raw_args,
                         R"(,"schema_state":)",
                         N(j.schema_state),
                         R"(,"snapshot_ver":0,"real_start_ts":449883218931146753,)",
                         R"("start_ts":449883218931146752,"dependency_id":0,"query":)",
                         Q(j.query),
                         R"(,"binlog":{"SchemaVersion":)",
                         N(j.schema_version),
                         R"(,"DBInfo":)",
                         j.binlog_db,
                         R"(,"TableInfo":)",
                         j.binlog_table,
                         R"(,"FinishedTS":0,"MultipleTableInfos":)",
                         j.binlog_multiple,
                         R"(},"version":)",
                         N(j.version),
                         R"(,"reorg_meta":)",
                         j.reorg_meta,
                         R"(,"multi_schema_info":null,"priority":0,"seq_num":)",
                         U(j.seq_num),
                         R"(,"charset":"utf8mb4","collate":"utf8mb4_bin",)"});
  if (!j.involving.empty()) out += Cat({R"("involving_schema_info":)", j.involving, ","});
  out += R"("admin_operator":0,"trace_info":{"connection_id":3,"session_alias":""},)"
         R"("bdr_role":"","cdc_write_source":0,"local_mode":false,"sql_mode":1436549152,)"
         R"("last_schema_version":0})";
  return out;
}

ColumnDoc IntColumn(int64_t id, std::string_view name, int64_t offset, uint64_t flag) {
  return Make<ColumnDoc>([&](ColumnDoc& c) {
    c.id = id;
    c.name = std::string(name);
    c.offset = offset;
    c.flag = flag;
  });
}

IndexDoc PlainIndex(int64_t id, std::string_view name, std::vector<IndexColumnDoc> columns) {
  return Make<IndexDoc>([&](IndexDoc& i) {
    i.id = id;
    i.name = std::string(name);
    i.columns = std::move(columns);
  });
}

PartitionDefDoc RangeDef(int64_t id, std::string_view name, std::string_view bound) {
  return Make<PartitionDefDoc>([&](PartitionDefDoc& d) {
    d.id = id;
    d.name = std::string(name);
    d.less_than = Cat({"[\"", bound, "\"]"});
  });
}

std::string OrdersTable(int64_t id, std::string_view name) {
  ColumnDoc customer = IntColumn(2, "Customer", 1, 0);
  customer.tp = 15;
  customer.flen = 64;
  customer.charset = "utf8mb4";
  customer.collate = "utf8mb4_bin";
  customer.default_value = R"("anon")";
  ColumnDoc status = customer;
  status.id = 3;
  status.name = "status";
  status.offset = 2;
  status.tp = 0xf7;
  status.flen = 4;
  status.elems = R"(["new","paid"])";
  status.default_value = R"("new")";
  ColumnDoc amount = IntColumn(4, "amount", 3, 0);
  amount.tp = 0xf6;
  amount.flen = 10;
  amount.decimal = 2;
  ColumnDoc flags = IntColumn(5, "flags", 4, 32);
  flags.tp = 16;
  flags.flen = 8;
  flags.origin_default = flags.default_value = R"("\u0005")";
  flags.origin_default_bit = flags.default_bit = R"("BQ==")";
  ColumnDoc total = IntColumn(6, "total", 5, 0);
  total.tp = 0xf6;
  total.flen = 12;
  total.decimal = 2;
  total.generated_expr = "`amount` * 2";
  total.dependences = R"({"amount":{}})";
  IndexDoc unique = PlainIndex(1, "uk_customer", {{"Customer", 1, 10}});
  unique.unique = true;

  TableDoc t;
  t.id = id;
  t.name = std::string(name);
  t.pk_is_handle = true;
  t.comment = R"(orders \u003c 1M rows)";
  t.auto_inc_id = 30001;
  t.max_col_id = 6;
  t.max_idx_id = 2;
  t.columns = {Column(IntColumn(1, "id", 0, 515)),
               Column(customer),
               Column(status),
               Column(amount),
               Column(flags),
               Column(total)};
  t.indices = {Index(unique),
               Index(PlainIndex(2, "idx_status_amount", {{"status", 2, -1}, {"amount", 3, -1}}))};
  return Table(t);
}

std::string EventsTable(const std::vector<PartitionDefDoc>& extra,
                        const std::vector<PartitionDefDoc>& replace) {
  PartitionDoc p;
  p.expr = "`ts`";
  p.definitions = replace;
  if (replace.empty()) p.definitions = {RangeDef(201, "p0", "100"), RangeDef(202, "p1", "1000")};
  p.definitions.insert(p.definitions.end(), extra.begin(), extra.end());
  ColumnDoc ts = IntColumn(2, "ts", 1, 3);
  ts.tp = 3;
  ts.flen = 11;
  IndexDoc primary = PlainIndex(1, "PRIMARY", {{"id", 0, -1}, {"ts", 1, -1}});
  primary.unique = true;
  primary.primary = true;

  TableDoc t;
  t.id = 200;
  t.name = "events";
  t.is_common_handle = true;
  t.common_handle_version = 1;
  t.max_col_id = 2;
  t.max_idx_id = 1;
  t.columns = {Column(IntColumn(1, "id", 0, 3)), Column(ts)};
  t.indices = {Index(primary)};
  t.partition = Partition(p);
  return Table(t);
}

}  // namespace sluice::model::testdocs
