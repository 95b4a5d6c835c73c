#include "checker/storage_state.h"

#include <algorithm>
#include <map>

#include "codec/model/types.h"

namespace sluice::checker {

namespace {

using model::ActionType;
namespace st = sink::storage;

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// True for DDLs after which the table starts empty or is gone.
bool ClearsTable(uint8_t type) {
  auto t = static_cast<ActionType>(type);
  return t == ActionType::kCreateTable || t == ActionType::kTruncateTable ||
         t == ActionType::kDropTable;
}

RowValues Arrange(const TableData& layout, const std::vector<sink::codec::DecodedColumn>& cols) {
  RowValues row = layout.defaults;
  row.resize(layout.columns.size());
  for (const auto& c : cols) {
    auto it = std::find(layout.columns.begin(), layout.columns.end(), Lower(c.name));
    if (it != layout.columns.end()) row[it - layout.columns.begin()] = c.value;
  }
  return row;
}

struct Replayed {
  TableData data;
  uint64_t last_version = 0;
  bool dropped = false;
};

void Replay(const st::TableData& table, const TableData& layout, Replayed* out) {
  out->data = layout;
  out->data.rows.clear();
  std::map<uint64_t, std::vector<const st::ReadRow*>> by_version;
  for (const auto& [v, file] : table.versions) by_version[v];
  for (const st::ReadRow& r : table.rows) by_version[r.table_version].push_back(&r);
  for (const auto& [version, rows] : by_version) {
    auto def = table.versions.find(version);
    if (def != table.versions.end() && ClearsTable(def->second.type)) {
      out->data.rows.clear();
      out->dropped = static_cast<ActionType>(def->second.type) == ActionType::kDropTable;
    }
    if (!rows.empty()) out->dropped = false;
    for (const st::ReadRow* r : rows) {
      RowValues values = Arrange(layout, r->row.columns);
      if (r->row.op == sink::codec::RowOp::kDelete) {
        out->data.Erase(values);
      } else {
        out->data.Upsert(std::move(values));
      }
    }
    out->last_version = version;
  }
}

}  // namespace

Result<DatabaseState> ReadStorageState(const std::string& root, const st::ReaderOptions& options,
                                       const DatabaseState& expected) {
  ASSIGN_OR_RETURN(st::StorageContents contents, st::ReadStorage(root, options));
  std::map<TableName, Replayed> tables;
  for (const st::TableData& t : contents.tables) {
    TableName name{Lower(t.schema), Lower(t.table)};
    auto want = expected.find(name);
    Replayed r;
    Replay(t, want != expected.end() ? want->second : TableData{}, &r);
    tables[name] = std::move(r);
  }
  // DROP DATABASE drops every table of the schema it saw.
  for (const st::SchemaFile& f : contents.schema_files) {
    if (!f.table.empty() || static_cast<ActionType>(f.type) != ActionType::kDropSchema) continue;
    for (auto& [name, r] : tables) {
      if (name.first == Lower(f.schema) && r.last_version < f.table_version) r.dropped = true;
    }
  }
  DatabaseState state;
  for (auto& [name, r] : tables) {
    if (!r.dropped) state.emplace(name, std::move(r.data));
  }
  // The sink writes nothing for a table that existed before the changefeed
  // started and saw no change since: it is there, empty.
  for (const auto& [name, want] : expected) {
    if (want.rows.empty() && tables.count(name) == 0) {
      TableData empty = want;
      state.emplace(name, std::move(empty));
    }
  }
  return state;
}

}  // namespace sluice::checker
