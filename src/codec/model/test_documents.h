// Test-only builders of TiDB-shaped JSON documents. Keys, key order and value
// encodings are spelled out here by hand from TiDB's struct definitions
// (pkg/meta/model, pkg/parser/types), independently of the emitters, so a
// test comparing ToJson() with these bytes checks one against the other.
// Output is compact, as Go's json.Marshal writes it.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::model::testdocs {

// Concatenates `parts`.
std::string Cat(std::initializer_list<std::string_view> parts);

// A document struct built from its defaults and then `set(doc)`.
template <typename Doc, typename SetFn>
Doc Make(SetFn set) {
  Doc doc;
  set(doc);
  return doc;
}

// {"O":"Name","L":"name"}
std::string Name(std::string_view original);

struct ColumnDoc {
  int64_t id = 1;
  std::string name = "id";
  int64_t offset = 0;
  int tp = 8;  // BIGINT
  uint64_t flag = 0;
  int64_t flen = 20;
  int64_t decimal = 0;
  std::string charset = "binary";
  std::string collate = "binary";
  std::string elems = "null";           // JSON array text.
  std::string origin_default = "null";  // JSON value text.
  std::string origin_default_bit = "null";
  std::string default_value = "null";
  std::string default_bit = "null";
  std::string generated_expr;
  bool generated_stored = false;
  std::string dependences = "null";  // JSON object text.
  std::string changing_type;         // FieldType JSON text; omitted when empty.
  int state = 5;
  std::string comment;
  std::string change_state_info = "null";
  int version = 2;
};
std::string Column(const ColumnDoc& c);
// A BIGINT (binary charset) column with the given flag bits.
ColumnDoc IntColumn(int64_t id, std::string_view name, int64_t offset, uint64_t flag);

// An IndexInfo over (name, offset, prefix length) columns.
struct IndexColumnDoc {
  std::string name;
  int64_t offset = 0;
  int64_t length = -1;
};
struct IndexDoc {
  int64_t id = 1;
  std::string name;
  std::vector<IndexColumnDoc> columns;
  int state = 5;
  bool unique = false;
  bool primary = false;
  bool invisible = false;
  bool global = false;
};
std::string Index(const IndexDoc& i);
// A public, non-unique BTREE index.
IndexDoc PlainIndex(int64_t id, std::string_view name, std::vector<IndexColumnDoc> columns);

struct PartitionDefDoc {
  int64_t id = 0;
  std::string name;
  std::string less_than = "null";  // JSON array text.
  std::string in_values = "null";
  std::string comment;  // Omitted when empty.
};
struct PartitionDoc {
  int type = 1;  // RANGE
  std::string expr;
  std::string columns = "null";
  bool enable = true;
  std::vector<PartitionDefDoc> definitions;
  std::vector<PartitionDefDoc> adding;
  std::vector<PartitionDefDoc> dropping;
  uint64_t num = 0;
  int ddl_state = 0;
};
std::string Partition(const PartitionDoc& p);
// A RANGE partition with the single bound `bound` ("100", "MAXVALUE").
PartitionDefDoc RangeDef(int64_t id, std::string_view name, std::string_view bound);

struct TableDoc {
  int64_t id = 110;
  std::string name = "orders";
  std::vector<std::string> columns;  // Column() texts.
  std::vector<std::string> indices;  // Index() texts.
  int state = 5;
  bool pk_is_handle = false;
  bool is_common_handle = false;
  int common_handle_version = 0;
  std::string comment;  // Already JSON-escaped.
  int64_t auto_inc_id = 0;
  int64_t max_col_id = 1;
  int64_t max_idx_id = 0;
  uint64_t update_timestamp = 449883219036004357ULL;
  std::string partition = "null";  // Partition() text.
  std::string view = "null";
  int version = 5;
  uint64_t revision = 1;
};
std::string Table(const TableDoc& t);

struct DBDoc {
  int64_t id = 100;
  std::string name = "shop";
  int state = 5;
};
std::string DB(const DBDoc& d);

struct JobDoc {
  int64_t id = 0;
  int type = 0;
  int64_t schema_id = 0;
  int64_t table_id = 0;
  std::string schema_name = "shop";
  std::string table_name;
  int state = 4;  // Done
  std::string raw_args = "null";
  int schema_state = 5;
  std::string query;  // Already JSON-escaped.
  int64_t schema_version = 0;
  std::string binlog_db = "null";
  std::string binlog_table = "null";
  std::string binlog_multiple = "null";
  int version = 1;
  std::string reorg_meta = "null";
  uint64_t seq_num = 1;
  std::string involving = R"([{"database":"shop","table":"orders"}])";  // Empty: omitted.
};
std::string JobText(const JobDoc& j);

// A realistic `shop.orders` table: int handle, varchar with default, ENUM,
// DECIMAL, BIT with default bytes, a virtual generated column, a unique
// prefix index and a composite index.
std::string OrdersTable(int64_t id = 110, std::string_view name = "Orders");

// A RANGE-partitioned, clustered table `shop.events` (id 200). Its
// partitions are `replace` if given, else p0 (201, < 100) and p1 (202,
// < 1000); `extra` definitions follow.
std::string EventsTable(const std::vector<PartitionDefDoc>& extra = {},
                        const std::vector<PartitionDefDoc>& replace = {});

}  // namespace sluice::model::testdocs
