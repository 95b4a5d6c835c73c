#include "simkv/workload_test_util.h"

#include <charconv>
#include <string>
#include <tuple>

#include "codec/datum_codec.h"
#include "codec/metakey.h"
#include "codec/mysql_type.h"
#include "codec/mytime.h"
#include "codec/tablecodec.h"
#include "common/memcomparable.h"
#include "simkv/tidb_tables.h"

namespace sluice::simkv::testutil {

namespace mt = codec::mysql_type;
namespace mf = codec::mysql_flag;

namespace {

// [prefix, prefix with its last byte + 1): every field of meta hash `key`.
std::pair<std::string, std::string> HashRange(std::string_view key) {
  std::string start = codec::EncodeMetaHashFieldKey(key, "");
  start.resize(start.size() - memcomparable::EncodedLength(0));
  std::string end = start;
  end.back() = static_cast<char>(end.back() + 1);
  return {start, end};
}

Result<std::vector<std::pair<std::string, std::string>>> ScanHash(const MvccStore& store,
                                                                  std::string_view key, Ts ts) {
  auto [start, end] = HashRange(key);
  auto scan = store.Scan(start, end, ts, 0);
  if (!scan.ok()) return scan.status();
  std::vector<std::pair<std::string, std::string>> out;
  for (const KvPair& kv : scan.value()) {
    ASSIGN_OR_RETURN(codec::MetaKey mk, codec::DecodeMetaKey(kv.key));
    if (mk.type != codec::meta_type::kHashData || mk.key != key) {
      return Corruption("unexpected meta key in hash " + std::string(key));
    }
    out.emplace_back(mk.field, kv.value);
  }
  return out;
}

Result<int64_t> ReadInt(const MvccStore& store, std::string_view key, Ts ts) {
  auto got = store.Get(codec::EncodeMetaStringKey(key), ts);
  if (!got.ok()) return got.status();
  if (!got.value().has_value()) return int64_t{0};
  const std::string& s = *got.value();
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size()) return Corruption("not an integer: " + s);
  return v;
}

Result<codec::Datum> OriginDefault(const model::ColumnInfo& c) {
  std::optional<std::string> text = c.OriginDefaultBytes();
  if (!text.has_value()) return codec::Datum::Null();
  if (codec::IsStringType(c.type.tp)) return codec::Datum::Bytes(*text);
  if (codec::IsIntegerType(c.type.tp)) {
    if (c.type.HasFlag(mf::kUnsigned)) return codec::Datum::Uint64(std::stoull(*text));
    return codec::Datum::Int64(std::stoll(*text));
  }
  if (codec::IsTimeType(c.type.tp)) {
    ASSIGN_OR_RETURN(codec::MysqlTime t, codec::ParseTime(*text));
    return codec::Datum::Time(codec::ToPackedUint(t), c.type.tp, static_cast<int>(c.type.decimal));
  }
  return InvalidArgument("no default conversion for type " + std::to_string(c.type.tp));
}

}  // namespace

const model::TableInfo* MetaSnapshot::ByPhysicalId(int64_t id) const {
  for (const auto& [table_id, entry] : tables) {
    for (int64_t physical : entry.second.PhysicalTableIds()) {
      if (physical == id) return &entry.second;
    }
  }
  return nullptr;
}

const model::TableInfo* MetaSnapshot::ByName(std::string_view db, std::string_view table) const {
  for (const auto& [table_id, entry] : tables) {
    auto it = dbs.find(entry.first);
    if (it != dbs.end() && it->second.name.lower == db && entry.second.name.lower == table) {
      return &entry.second;
    }
  }
  return nullptr;
}

Result<MetaSnapshot> ReadMetaSnapshot(const MvccStore& store, Ts ts) {
  MetaSnapshot snap;
  ASSIGN_OR_RETURN(snap.schema_version, ReadInt(store, "SchemaVersionKey", ts));
  ASSIGN_OR_RETURN(snap.global_id, ReadInt(store, "NextGlobalID", ts));
  ASSIGN_OR_RETURN(auto dbs, ScanHash(store, "DBs", ts));
  for (const auto& [field, value] : dbs) {
    ASSIGN_OR_RETURN(model::DBInfo db, model::ParseDBInfo(value));
    if (field != "DB:" + std::to_string(db.id)) return Corruption("DBs field " + field);
    std::string db_key = field;
    int64_t db_id = db.id;
    snap.dbs.emplace(db_id, std::move(db));
    ASSIGN_OR_RETURN(auto tables, ScanHash(store, db_key, ts));
    for (const auto& [table_field, table_value] : tables) {
      ASSIGN_OR_RETURN(model::TableInfo info, model::ParseTableInfo(table_value));
      if (table_field != "Table:" + std::to_string(info.id)) {
        return Corruption("table field " + table_field);
      }
      snap.tables.emplace(info.id, std::make_pair(db_id, std::move(info)));
    }
  }
  return snap;
}

Result<std::vector<codec::ColumnSpec>> ColumnSpecsOf(const model::TableInfo& table) {
  std::vector<codec::ColumnSpec> specs;
  const model::IndexInfo* primary = table.is_common_handle ? table.GetPrimaryIndex() : nullptr;
  for (const model::ColumnInfo& c : table.columns) {
    if (!c.IsPublic()) continue;
    codec::ColumnSpec s;
    s.id = c.id;
    s.type = c.type.tp;
    s.is_unsigned = c.type.HasFlag(mf::kUnsigned);
    bool timed =
        c.type.tp == mt::kDatetime || c.type.tp == mt::kTimestamp || c.type.tp == mt::kDuration;
    s.fsp = timed ? static_cast<int>(c.type.decimal) : 0;
    s.flen = static_cast<int>(c.type.flen);
    ASSIGN_OR_RETURN(s.default_value, OriginDefault(c));
    s.is_handle = table.pk_is_handle && c.IsPrimaryKey();
    if (primary != nullptr) {
      for (size_t i = 0; i < primary->columns.size(); ++i) {
        if (primary->columns[i].name.lower != c.name.lower) continue;
        s.is_handle = true;
        s.handle_offset = static_cast<int>(i);
      }
    }
    specs.push_back(std::move(s));
  }
  return specs;
}

Result<int64_t> HandleOf(std::string_view key) {
  ASSIGN_OR_RETURN(codec::DecodedRowKey k, codec::DecodeRowKey(key));
  if (k.handle.is_int) return k.handle.int_value;
  ASSIGN_OR_RETURN(std::vector<codec::Datum> datums, codec::DecodeDatums(k.handle.common));
  if (datums.empty() || datums[0].kind() != codec::DatumKind::kInt64) {
    return Corruption("common handle does not start with an integer");
  }
  return datums[0].int64();
}

Result<model::Job> DecodeJobRow(const model::TableInfo& job_table, std::string_view key,
                                std::string_view value) {
  ASSIGN_OR_RETURN(codec::DecodedRowKey k, codec::DecodeRowKey(key));
  const model::ColumnInfo* col = job_table.FindColumnByName("job_meta");
  if (col == nullptr) return NotFound("tidb_ddl_job has no job_meta");
  codec::ColumnSpec spec;
  spec.id = col->id;
  spec.type = col->type.tp;
  std::vector<codec::Datum> row;
  RETURN_IF_ERROR(codec::DecodeRow(value, {&spec, 1}, k.handle, &row));
  if (row[0].kind() != codec::DatumKind::kBytes) return Corruption("job_meta is not bytes");
  ASSIGN_OR_RETURN(model::Job job, model::ParseJob(row[0].bytes()));
  if (job.id != k.handle.int_value) return Corruption("job id differs from the row handle");
  return job;
}

namespace {

using IntentKey = std::tuple<uint64_t, int64_t, int64_t>;  // commit ts, physical id, handle

Status CheckPut(const TruthChange& change, const RowIntent& row, const MetaSnapshot& snap) {
  const model::TableInfo* table = snap.ByPhysicalId(change.table_id.value());
  if (table == nullptr) return NotFound("no table for a change at its commit ts");
  ASSIGN_OR_RETURN(std::vector<codec::ColumnSpec> specs, ColumnSpecsOf(*table));
  std::vector<int64_t> ids;
  for (const codec::ColumnSpec& s : specs) ids.push_back(s.id);
  if (ids != row.column_ids) return Corruption("columns differ from the intended ones");
  ASSIGN_OR_RETURN(codec::DecodedRowKey key, codec::DecodeRowKey(change.key));
  std::vector<codec::Datum> out;
  RETURN_IF_ERROR(codec::DecodeRow(change.value, specs, key.handle, &out));
  for (size_t i = 0; i < out.size(); ++i) {
    if (!(out[i] == row.values[i])) {
      return Corruption("table " + table->name.original + " column " +
                        table->FindColumnById(ids[i])->name.original + ": decoded " +
                        out[i].DebugString() + ", intended " + row.values[i].DebugString());
    }
  }
  return Status::Ok();
}

}  // namespace

Status CheckRowsAgainstIntents(const MvccStore& store, const GroundTruth& truth,
                               const std::vector<TxnIntent>& intents, size_t* checked) {
  std::map<IntentKey, const RowIntent*> index;
  for (const TxnIntent& txn : intents) {
    for (const RowIntent& row : txn.rows) {
      index[{txn.commit_ts.value(), row.physical_id, row.handle}] = &row;
    }
  }
  std::map<uint64_t, MetaSnapshot> snapshots;
  *checked = 0;
  for (const TruthChange& change : truth.AllChanges()) {
    if (change.table_id.value() == kDdlJobTableId) continue;
    ASSIGN_OR_RETURN(int64_t handle, HandleOf(change.key));
    auto it = index.find({change.commit_ts.value(), change.table_id.value(), handle});
    if (it == index.end()) return NotFound("a committed change nobody intended");
    const RowIntent& row = *it->second;
    index.erase(it);
    ++*checked;
    if (change.kind == WriteKind::kDelete) {
      if (row.op != RowOp::kDelete) return Corruption("a delete that was meant as a put");
      continue;
    }
    if (row.op == RowOp::kDelete) return Corruption("a put that was meant as a delete");
    auto snap = snapshots.find(change.commit_ts.value());
    if (snap == snapshots.end()) {
      ASSIGN_OR_RETURN(MetaSnapshot s, ReadMetaSnapshot(store, change.commit_ts));
      snap = snapshots.emplace(change.commit_ts.value(), std::move(s)).first;
    }
    RETURN_IF_ERROR(CheckPut(change, row, snap->second));
  }
  if (!index.empty()) return NotFound(std::to_string(index.size()) + " intended rows missing");
  return Status::Ok();
}

std::unique_ptr<TsoAllocator> FixedTso() {
  return std::make_unique<TsoAllocator>([] { return int64_t{1700000000000}; });
}

}  // namespace sluice::simkv::testutil
