#include "codec/model/job_documents.h"

namespace sluice::model::testdocs {
namespace {

constexpr char kOrdersInvolving[] = R"([{"database":"shop","table":"orders"}])";
constexpr char kEventsInvolving[] = R"([{"database":"shop","table":"events"}])";

std::string NoteColumn() {
  ColumnDoc c = IntColumn(2, "note", 1, 0);
  c.tp = 15;
  c.flen = 32;
  c.charset = "utf8mb4";
  c.collate = "utf8mb4_bin";
  c.origin_default = c.default_value = R"("x")";
  return Column(c);
}

std::string DecimalColumn(int64_t flen) {
  ColumnDoc c = IntColumn(4, "amount", 1, 0);
  c.tp = 0xf6;
  c.flen = flen;
  c.decimal = 2;
  return Column(c);
}

std::string EventsDefs(int64_t p0, int64_t p1) {
  return EventsTable({}, {RangeDef(p0, "p0", "100"), RangeDef(p1, "p1", "1000")});
}

JobDoc TableJob(int64_t id, int type, int64_t table_id, std::string table_name) {
  JobDoc j;
  j.id = id;
  j.type = type;
  j.schema_id = 100;
  j.table_id = table_id;
  j.table_name = std::move(table_name);
  j.seq_num = static_cast<uint64_t>(id - 1000);
  j.schema_version = id - 950;
  return j;
}

}  // namespace

std::string SmallTable(int64_t id, std::string_view name, int state, bool with_note) {
  TableDoc t;
  t.id = id;
  t.name = std::string(name);
  t.state = state;
  t.pk_is_handle = true;
  t.max_col_id = 2;
  t.columns = {Column(IntColumn(1, "id", 0, 515))};
  if (with_note) t.columns.push_back(NoteColumn());
  return Table(t);
}

JobDoc CreateSchemaJob() {
  JobDoc j = TableJob(1001, 1, 0, "");
  j.raw_args = Cat({"[", DB({}), "]"});
  j.query = "CREATE DATABASE shop";
  j.binlog_db = DB({});
  j.involving = R"([{"database":"shop","table":"*"}])";
  return j;
}

JobDoc DropSchemaJob() {
  JobDoc j = TableJob(1002, 2, 0, "");
  j.schema_state = 0;
  j.raw_args = "[[110,200,201,202]]";
  j.query = "DROP DATABASE shop";
  j.binlog_db = DB(Make<DBDoc>([](DBDoc& d) { d.state = 0; }));
  j.involving = R"([{"database":"shop","table":"*"}])";
  return j;
}

JobDoc CreateTableJob() {
  JobDoc j = TableJob(1003, 3, 110, "orders");
  j.raw_args = Cat({"[", OrdersTable(), ",false]"});
  j.query = "CREATE TABLE `Orders` (`id` BIGINT PRIMARY KEY AUTO_INCREMENT)";
  j.binlog_table = OrdersTable();
  j.involving = kOrdersInvolving;
  return j;
}

JobDoc DropTableJob() {
  JobDoc j = TableJob(1004, 4, 110, "orders");
  j.schema_state = 0;
  j.raw_args = R"(["dIAAAAAAAABu",null,null])";
  j.query = "DROP TABLE orders";
  j.binlog_table = SmallTable(110, "orders", 0);
  j.involving = kOrdersInvolving;
  return j;
}

JobDoc TruncateTableJob() {
  JobDoc j = TableJob(1005, 11, 110, "orders");
  j.raw_args = R"(["",null])";
  j.query = "TRUNCATE TABLE orders";
  j.binlog_table = SmallTable(120, "orders");
  j.involving = kOrdersInvolving;
  return j;
}

JobDoc RenameTableJob() {
  JobDoc j = TableJob(1006, 14, 110, "orders_v2");
  j.schema_id = 101;
  j.schema_name = "shop2";
  j.raw_args = Cat({"[100,", Name("orders_v2"), ",", Name("shop"), "]"});
  j.query = "RENAME TABLE shop.orders TO shop2.orders_v2";
  j.binlog_table = SmallTable(110, "orders_v2");
  j.involving =
      R"([{"database":"shop","table":"orders"},{"database":"shop2","table":"orders_v2"}])";
  return j;
}

JobDoc AddColumnJob() {
  JobDoc j = TableJob(1007, 5, 110, "orders");
  j.raw_args = Cat({"[", NoteColumn(), R"(,{"Tp":0,"RelativeColumn":null},0,false])"});
  j.query = "ALTER TABLE orders ADD COLUMN note VARCHAR(32) DEFAULT 'x'";
  j.binlog_table = SmallTable(110, "orders", 5, true);
  j.involving = kOrdersInvolving;
  return j;
}

JobDoc DropColumnJob() {
  JobDoc j = TableJob(1008, 6, 110, "orders");
  j.schema_state = 0;
  j.raw_args = Cat({"[", Name("note"), ",false]"});
  j.query = "ALTER TABLE orders DROP COLUMN note";
  j.binlog_table = SmallTable(110, "orders");
  j.involving = kOrdersInvolving;
  return j;
}

JobDoc ModifyColumnJob() {
  JobDoc j = TableJob(1009, 12, 110, "orders");
  j.version = 2;
  j.raw_args = Cat({R"({"old_column_name":)", Name("amount"),
                    R"(,"position":{"Tp":0,"RelativeColumn":null},"modify_column_type":1})"});
  j.query = "ALTER TABLE orders MODIFY amount DECIMAL(14,2)";
  TableDoc t;
  t.pk_is_handle = true;
  t.max_col_id = 4;
  t.columns = {Column(IntColumn(1, "id", 0, 515)), DecimalColumn(14)};
  j.binlog_table = Table(t);
  j.involving = kOrdersInvolving;
  return j;
}

JobDoc AddIndexJob() {
  JobDoc j = TableJob(1010, 7, 110, "orders");
  j.version = 2;
  j.raw_args = Cat({R"({"index_args":[{"index_name":)", Name("idx_amount"),
                    R"(,"unique":false,"index_id":3}]})"});
  j.query = R"(ALTER TABLE orders ADD INDEX idx_amount (amount) COMMENT 'amount \u003e 0')";
  j.reorg_meta = R"({"SQLMode":1436549152,"Location":{"name":"System","offset":0},"reorg_tp":2,)"
                 R"("is_dist_reorg":true,"resource_group_name":"default"})";
  TableDoc t;
  t.pk_is_handle = true;
  t.max_col_id = 4;
  t.max_idx_id = 3;
  t.columns = {Column(IntColumn(1, "id", 0, 515)), DecimalColumn(10)};
  t.indices = {Index(PlainIndex(3, "idx_amount", {{"amount", 1, -1}}))};
  j.binlog_table = Table(t);
  j.involving = kOrdersInvolving;
  return j;
}

JobDoc DropIndexJob() {
  JobDoc j = TableJob(1011, 8, 110, "orders");
  j.schema_state = 0;
  j.raw_args = Cat({"[", Name("idx_amount"), ",false]"});
  j.query = "ALTER TABLE orders DROP INDEX idx_amount";
  j.binlog_table = SmallTable(110, "orders");
  j.involving = kOrdersInvolving;
  return j;
}

JobDoc CreatePartitionedTableJob() {
  JobDoc j = TableJob(1012, 3, 200, "events");
  j.raw_args = Cat({"[", EventsTable(), ",false]"});
  j.query =
      "CREATE TABLE events (id BIGINT, ts INT, PRIMARY KEY (id, ts) CLUSTERED) "
      "PARTITION BY RANGE (ts) (PARTITION p0 VALUES LESS THAN (100), "
      "PARTITION p1 VALUES LESS THAN (1000))";
  j.binlog_table = EventsTable();
  j.involving = kEventsInvolving;
  return j;
}

JobDoc AddPartitionJob() {
  JobDoc j = TableJob(1013, 19, 200, "events");
  PartitionDoc added;
  added.expr = "`ts`";
  added.definitions = {RangeDef(203, "p2", "MAXVALUE")};
  j.raw_args = Cat({"[", Partition(added), "]"});
  j.query = "ALTER TABLE events ADD PARTITION (PARTITION p2 VALUES LESS THAN (MAXVALUE))";
  j.binlog_table = EventsTable({RangeDef(203, "p2", "MAXVALUE")});
  j.involving = kEventsInvolving;
  return j;
}

JobDoc DropPartitionJob() {
  JobDoc j = TableJob(1014, 20, 200, "events");
  j.version = 2;
  j.schema_state = 0;
  j.raw_args = R"({"old_physical_tbl_ids":[202]})";
  j.query = "ALTER TABLE events DROP PARTITION p1";
  j.binlog_table = EventsTable({}, {RangeDef(201, "p0", "100")});
  j.involving = kEventsInvolving;
  return j;
}

JobDoc TruncatePartitionJob() {
  JobDoc j = TableJob(1015, 23, 200, "events");
  j.raw_args = "[[201]]";
  j.query = "ALTER TABLE events TRUNCATE PARTITION p0";
  j.binlog_table = EventsDefs(205, 202);
  j.involving = kEventsInvolving;
  return j;
}

JobDoc ExchangePartitionJob() {
  JobDoc j = TableJob(1016, 42, 300, "t300");
  j.schema_id = 101;
  j.schema_name = "shop2";
  j.raw_args = R"([201,100,200,"p0",true])";
  j.query = "ALTER TABLE shop.events EXCHANGE PARTITION p0 WITH TABLE shop2.t300";
  j.binlog_table = EventsDefs(300, 202);
  j.involving = R"([{"database":"shop","table":"events"},{"database":"shop2","table":"t300"}])";
  return j;
}

JobDoc ReorganizePartitionJob() {
  JobDoc j = TableJob(1017, 64, 200, "events");
  j.version = 2;
  j.raw_args = R"({"old_physical_tbl_ids":[201,202]})";
  j.query = "ALTER TABLE events REORGANIZE PARTITION p0, p1 INTO (...)";
  j.binlog_table = EventsDefs(206, 207);
  j.involving = kEventsInvolving;
  return j;
}

JobDoc CreateTablesJob() {
  JobDoc j = TableJob(1018, 60, 0, "");
  j.query = "CREATE TABLE a (id BIGINT PRIMARY KEY); CREATE TABLE b (id BIGINT PRIMARY KEY)";
  j.binlog_table = SmallTable(131, "b");
  j.binlog_multiple = Cat({"[", SmallTable(130, "a"), ",", SmallTable(131, "b"), "]"});
  j.involving = R"([{"database":"shop","table":"a"},{"database":"shop","table":"b"}])";
  return j;
}

JobDoc RenameTablesJob() {
  JobDoc j = TableJob(1019, 47, 110, "");
  j.schema_id = 101;
  j.raw_args = Cat({"[[100,100],[101,101],[", Name("orders"), ",", Name("a"), "],[110,130],[",
                    Name("shop"), ",", Name("shop"), "],[", Name("orders"), ",", Name("a2"), "]]"});
  j.query = "RENAME TABLE shop.orders TO shop2.orders, shop.a TO shop2.a2";
  j.binlog_table = SmallTable(130, "a2");
  j.binlog_multiple = Cat({"[", SmallTable(110, "orders"), ",", SmallTable(130, "a2"), "]"});
  j.involving = "";
  return j;
}

}  // namespace sluice::model::testdocs
