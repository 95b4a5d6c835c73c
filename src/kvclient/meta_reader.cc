#include "kvclient/meta_reader.h"

#include <charconv>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "codec/metakey.h"
#include "common/logging.h"
#include "common/memcomparable.h"
#include "kvclient/snapshot_reader.h"
#include "pd/pd_client.h"

namespace sluice::kvclient {

namespace {

constexpr std::string_view kSchemaVersionKey = "SchemaVersionKey";
constexpr std::string_view kDbsKey = "DBs";
constexpr std::string_view kDbPrefix = "DB:";
constexpr std::string_view kTablePrefix = "Table:";

// The key range of every field of meta hash `key`: from
// 'm' + EncodeBytes(key) + EncodeUint('h') to the same with its last byte + 1.
std::pair<std::string, std::string> HashRange(std::string_view key) {
  std::string start = codec::EncodeMetaHashFieldKey(key, "");
  start.resize(start.size() - memcomparable::EncodedLength(0));
  std::string end = start;
  end.back() = static_cast<char>(end.back() + 1);
  return {std::move(start), std::move(end)};
}

// The id of a field "<prefix><decimal>"; nullopt if it is not one.
std::optional<int64_t> FieldId(std::string_view field, std::string_view prefix) {
  if (field.substr(0, prefix.size()) != prefix) return std::nullopt;
  std::string_view digits = field.substr(prefix.size());
  if (digits.empty() || digits.front() == '+') return std::nullopt;
  int64_t id = 0;
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), id);
  if (ec != std::errc() || ptr != digits.data() + digits.size()) return std::nullopt;
  return id;
}

Result<int64_t> ParseSchemaVersion(const std::optional<std::string>& value) {
  if (!value.has_value()) return int64_t{0};  // TiDB reads a missing version as 0.
  int64_t version = 0;
  const std::string& text = *value;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), version);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size()) {
    return Corruption("meta: SchemaVersionKey is not an integer: " + RedactText(text));
  }
  return version;
}

// The fields and values of meta hash `key` at `ts`, in field order.
Result<std::vector<std::pair<std::string, std::string>>> ReadHash(SnapshotReader* reader,
                                                                  std::string_view key, Ts ts) {
  auto [start, end] = HashRange(key);
  ASSIGN_OR_RETURN(KvPairs pairs, reader->Scan(start, end, ts, 0));
  std::vector<std::pair<std::string, std::string>> fields;
  fields.reserve(pairs.size());
  for (auto& [raw_key, value] : pairs) {
    Result<codec::MetaKey> decoded = codec::DecodeMetaKey(raw_key);
    if (!decoded.ok()) return decoded.status().WithContext("meta: hash " + std::string(key));
    if (decoded->type != codec::meta_type::kHashData || decoded->key != key) {
      return Corruption("meta: key " + Redact(raw_key) + " is not a field of hash " +
                        std::string(key));
    }
    fields.emplace_back(std::move(decoded->field), std::move(value));
  }
  return fields;
}

Status ReadTables(SnapshotReader* reader, int64_t db_id, Ts ts, MetaSnapshot* snapshot) {
  const std::string db_key = std::string(kDbPrefix) + std::to_string(db_id);
  ASSIGN_OR_RETURN(auto fields, ReadHash(reader, db_key, ts));
  for (const auto& [field, value] : fields) {
    if (field.substr(0, kTablePrefix.size()) != kTablePrefix) continue;  // TID:, IID:, ...
    std::optional<int64_t> id = FieldId(field, kTablePrefix);
    if (!id.has_value()) {
      return Corruption("meta: hash " + db_key + " has a bad field " + RedactText(field));
    }
    Result<model::TableInfo> table = model::ParseTableInfo(value);
    if (!table.ok()) return table.status().WithContext("meta: " + db_key + " " + field);
    if (table->id != *id) {
      return Corruption("meta: " + db_key + " " + field + " holds table id " +
                        std::to_string(table->id));
    }
    snapshot->tables.emplace(*id, std::make_pair(db_id, std::move(table).value()));
  }
  return Status::Ok();
}

}  // namespace

KvMetaReader::KvMetaReader(pd::PdClient* pd, SnapshotReader* reader) : pd_(pd), reader_(reader) {}

Result<MetaSnapshot> KvMetaReader::Read(Ts ts) {
  ASSIGN_OR_RETURN(Ts safe_point, pd_->GetGcSafePoint());
  if (ts < safe_point) {
    return Status(Code::kGcSafepointExceeded, "meta: ts " + std::to_string(ts.value()) +
                                                  " is below the GC safe point " +
                                                  std::to_string(safe_point.value()));
  }
  MetaSnapshot snapshot;
  snapshot.ts = ts;
  ASSIGN_OR_RETURN(std::optional<std::string> version,
                   reader_->Get(codec::EncodeMetaStringKey(kSchemaVersionKey), ts));
  ASSIGN_OR_RETURN(snapshot.schema_version, ParseSchemaVersion(version));
  ASSIGN_OR_RETURN(auto dbs, ReadHash(reader_, kDbsKey, ts));
  for (const auto& [field, value] : dbs) {
    std::optional<int64_t> id = FieldId(field, kDbPrefix);
    if (!id.has_value()) return Corruption("meta: hash DBs has a bad field " + RedactText(field));
    Result<model::DBInfo> db = model::ParseDBInfo(value);
    if (!db.ok()) return db.status().WithContext("meta: DBs " + field);
    if (db->id != *id) {
      return Corruption("meta: DBs " + field + " holds database id " + std::to_string(db->id));
    }
    snapshot.dbs.emplace(*id, std::move(db).value());
    RETURN_IF_ERROR(ReadTables(reader_, *id, ts, &snapshot));
  }
  return snapshot;
}

}  // namespace sluice::kvclient
