#include "checker/expected.h"

#include <fmt/format.h>

#include "codec/mysql_type.h"
#include "codec/row.h"
#include "codec/tablecodec.h"
#include "event/table_schema.h"
#include "event/value_format.h"

namespace sluice::checker {

namespace mt = codec::mysql_type;

namespace {

bool IsSystemSchema(std::string_view lower) {
  return lower == "mysql" || lower == "information_schema" || lower == "performance_schema" ||
         lower == "metrics_schema" || lower == "sys" || lower == "tidb_cdc";
}

// Offsets (into schema->columns()) of the columns the checker keeps.
std::vector<int> KeptColumns(const event::TableSchema& schema) {
  std::vector<int> kept;
  for (size_t i = 0; i < schema.columns().size(); ++i) {
    if (!schema.IsGenerated(static_cast<int>(i))) kept.push_back(static_cast<int>(i));
  }
  return kept;
}

TableData LayoutFromSchema(const event::TableSchema& schema, const std::vector<int>& kept) {
  TableData t;
  std::vector<int> position(schema.columns().size(), -1);
  for (size_t k = 0; k < kept.size(); ++k) {
    const model::ColumnInfo& c = schema.columns()[kept[k]];
    position[kept[k]] = static_cast<int>(k);
    t.columns.push_back(c.name.lower);
    t.approximate.push_back(c.type.tp == mt::kFloat || c.type.tp == mt::kDouble);
    t.bit.push_back(c.type.tp == mt::kBit);
    Result<std::optional<std::string>> dflt =
        event::DatumText(schema.specs()[kept[k]].default_value, c);
    t.defaults.push_back(dflt.ok() ? *dflt : std::nullopt);
  }
  for (int off : schema.key_columns()) {
    if (position[off] < 0) {  // A generated key column: fall back to the whole row.
      t.key_columns.clear();
      break;
    }
    t.key_columns.push_back(position[off]);
  }
  return t;
}

Status AddRows(const simkv::GroundTruth& truth, int64_t physical_id,
               const event::TableSchema& schema, const std::vector<int>& kept, Ts ts,
               TableData* out) {
  std::vector<codec::Datum> datums;
  for (const auto& [key, value] : truth.StateAt(TableId(physical_id), ts)) {
    auto fail = [&](const Status& s) {
      return s.WithContext(fmt::format("table {} (physical {}) at ts {}", schema.table_name(),
                                       physical_id, ts.value()));
    };
    Result<codec::DecodedRowKey> k = codec::DecodeRowKey(key);
    if (!k.ok()) return fail(k.status());
    Status s = codec::DecodeRow(value, schema.specs(), k->handle, &datums);
    if (!s.ok()) return fail(s);
    RowValues row;
    for (int off : kept) {
      Result<std::optional<std::string>> text =
          event::DatumText(datums[off], schema.columns()[off]);
      if (!text.ok()) return fail(text.status());
      row.push_back(std::move(*text));
    }
    out->Upsert(std::move(row));
  }
  return Status::Ok();
}

}  // namespace

Result<TableData> LayoutOf(const model::TableInfo& info) {
  ASSIGN_OR_RETURN(event::TableSchemaPtr schema, event::TableSchema::Make("", 0, info, Ts(0)));
  return LayoutFromSchema(*schema, KeptColumns(*schema));
}

Result<DatabaseState> ExpectedState(const simkv::GroundTruth& truth,
                                    const kvclient::MetaSnapshot& snap, Ts ts) {
  DatabaseState state;
  for (const auto& [table_id, entry] : snap.tables) {
    const auto& [db_id, info] = entry;
    auto db = snap.dbs.find(db_id);
    if (db == snap.dbs.end()) return Corruption(fmt::format("table {} has no database", table_id));
    if (IsSystemSchema(db->second.name.lower) || info.IsView() || info.IsSequence()) continue;
    ASSIGN_OR_RETURN(event::TableSchemaPtr schema,
                     event::TableSchema::Make(db->second.name.original, db_id, info, ts));
    std::vector<int> kept = KeptColumns(*schema);
    TableData data = LayoutFromSchema(*schema, kept);
    for (int64_t physical : info.PhysicalTableIds()) {
      RETURN_IF_ERROR(AddRows(truth, physical, *schema, kept, ts, &data));
    }
    state.emplace(TableName{db->second.name.lower, info.name.lower}, std::move(data));
  }
  return state;
}

}  // namespace sluice::checker
