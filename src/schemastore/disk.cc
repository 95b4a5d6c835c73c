#include "schemastore/disk.h"

#include <fmt/format.h>
#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include <utility>

#include "codec/model/db_info.h"

namespace sluice::schemastore {

namespace {

Status FromRocks(const rocksdb::Status& status, std::string_view what) {
  if (status.ok()) return Status::Ok();
  std::string msg = fmt::format("schema store {}: {}", what, status.ToString());
  if (status.IsCorruption()) return Corruption(std::move(msg));
  return IoError(std::move(msg));
}

void PutU64(std::string* out, uint64_t v) {
  for (int i = 7; i >= 0; --i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

uint64_t GetU64(std::string_view in) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | static_cast<uint8_t>(in[i]);
  return v;
}

std::string IdKey(char prefix, int64_t id) {
  std::string key(1, prefix);
  PutU64(&key, static_cast<uint64_t>(id) ^ (uint64_t{1} << 63));
  return key;
}

int64_t IdOfKey(std::string_view key) {
  return static_cast<int64_t>(GetU64(key.substr(1)) ^ (uint64_t{1} << 63));
}

std::string U64Value(uint64_t v) {
  std::string out;
  PutU64(&out, v);
  return out;
}

rocksdb::Options DbOptions() {
  rocksdb::Options options;
  options.create_if_missing = true;
  options.paranoid_checks = true;
  options.max_open_files = 64;
  options.keep_log_file_num = 2;
  return options;
}

}  // namespace

std::string SchemaDisk::JobKey(Ts finished_ts) {
  std::string key = "j";
  PutU64(&key, finished_ts.value());
  return key;
}

SchemaDisk::SchemaDisk(std::string dir, std::unique_ptr<rocksdb::DB> db)
    : dir_(std::move(dir)), db_(std::move(db)) {}

SchemaDisk::~SchemaDisk() {
  if (db_ != nullptr) db_->Close().PermitUncheckedError();
}

Result<std::unique_ptr<SchemaDisk>> SchemaDisk::Open(const std::string& dir) {
  rocksdb::DB* raw = nullptr;
  RETURN_IF_ERROR(FromRocks(rocksdb::DB::Open(DbOptions(), dir, &raw), "open"));
  return std::unique_ptr<SchemaDisk>(new SchemaDisk(dir, std::unique_ptr<rocksdb::DB>(raw)));
}

Result<std::optional<DiskBounds>> SchemaDisk::ReadBounds() {
  std::string format;
  rocksdb::Status st = db_->Get(rocksdb::ReadOptions(), "F", &format);
  if (st.IsNotFound()) {
    // A bootstrap writes "F" with everything else in one batch: without it
    // the store holds nothing usable.
    return std::optional<DiskBounds>();
  }
  RETURN_IF_ERROR(FromRocks(st, "read format"));
  if (format.size() != 1 || static_cast<uint8_t>(format[0]) != kDiskFormatVersion) {
    return Corruption("schema store: unknown disk format");
  }
  DiskBounds bounds;
  for (auto [key, out] : {std::pair<const char*, Ts*>{"S", &bounds.snapshot_ts},
                          std::pair<const char*, Ts*>{"R", &bounds.resolved_ts}}) {
    std::string value;
    st = db_->Get(rocksdb::ReadOptions(), key, &value);
    if (st.IsNotFound()) return Corruption(fmt::format("schema store: key {} missing", key));
    RETURN_IF_ERROR(FromRocks(st, "read bounds"));
    if (value.size() != 8) return Corruption(fmt::format("schema store: key {} malformed", key));
    *out = Ts(GetU64(value));
  }
  if (bounds.resolved_ts < bounds.snapshot_ts) {
    return Corruption("schema store: resolved ts below the snapshot ts");
  }
  return std::optional<DiskBounds>(bounds);
}

Result<DiskState> SchemaDisk::Load() {
  ASSIGN_OR_RETURN(std::optional<DiskBounds> bounds, ReadBounds());
  if (!bounds.has_value()) return NotFound("schema store: nothing stored");
  DiskState state;
  state.bounds = *bounds;
  state.snapshot.ts = bounds->snapshot_ts;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions()));
  bool have_job_table = false;
  Ts last_job;
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    std::string_view key(it->key().data(), it->key().size());
    std::string_view value(it->value().data(), it->value().size());
    if (key == "J") {
      ASSIGN_OR_RETURN(state.job_table, model::ParseTableInfo(value));
      have_job_table = true;
      continue;
    }
    if (key.size() != 9) continue;  // "F", "S", "R".
    const std::string where = fmt::format("schema store key '{}'", key[0]);
    if (key[0] == 'd') {
      Result<model::DBInfo> db = model::ParseDBInfo(value);
      if (!db.ok()) return db.status().WithContext(where);
      if (db->id != IdOfKey(key)) return Corruption(where + ": id differs from the key");
      state.snapshot.dbs.emplace(db->id, std::move(db).value());
    } else if (key[0] == 't') {
      if (value.size() < 8) return Corruption(where + ": short value");
      int64_t db_id = static_cast<int64_t>(GetU64(value) ^ (uint64_t{1} << 63));
      Result<model::TableInfo> table = model::ParseTableInfo(value.substr(8));
      if (!table.ok()) return table.status().WithContext(where);
      if (table->id != IdOfKey(key)) return Corruption(where + ": id differs from the key");
      state.snapshot.tables.emplace(table->id, std::make_pair(db_id, std::move(table).value()));
    } else if (key[0] == 'j') {
      Result<model::Job> job = model::ParseJob(value);
      if (!job.ok()) return job.status().WithContext(where);
      Ts ts(GetU64(key.substr(1)));
      if (!job->binlog.has_value() || job->binlog->finished_ts != ts.value() || ts <= last_job) {
        return Corruption(where + ": finished ts differs from the key");
      }
      last_job = ts;
      state.jobs.push_back(std::move(job).value());
    }
  }
  RETURN_IF_ERROR(FromRocks(it->status(), "scan"));
  if (!have_job_table) return Corruption("schema store: tidb_ddl_job TableInfo missing");
  return state;
}

Status SchemaDisk::Wipe() {
  RETURN_IF_ERROR(FromRocks(db_->Close(), "close"));
  db_.reset();
  RETURN_IF_ERROR(FromRocks(rocksdb::DestroyDB(dir_, DbOptions()), "destroy"));
  rocksdb::DB* raw = nullptr;
  RETURN_IF_ERROR(FromRocks(rocksdb::DB::Open(DbOptions(), dir_, &raw), "reopen"));
  db_.reset(raw);
  return Status::Ok();
}

Status SchemaDisk::WriteBootstrap(const kvclient::MetaSnapshot& snap,
                                  const model::TableInfo& job_table) {
  rocksdb::WriteBatch batch;
  auto put = [&](const std::string& key, const std::string& value) {
    return FromRocks(batch.Put(key, value), "batch");
  };
  RETURN_IF_ERROR(put("F", std::string(1, static_cast<char>(kDiskFormatVersion))));
  RETURN_IF_ERROR(put("S", U64Value(snap.ts.value())));
  RETURN_IF_ERROR(put("R", U64Value(snap.ts.value())));
  RETURN_IF_ERROR(put("J", model::ToJson(job_table)));
  for (const auto& [id, db] : snap.dbs) RETURN_IF_ERROR(put(IdKey('d', id), model::ToJson(db)));
  for (const auto& [id, entry] : snap.tables) {
    std::string value = U64Value(static_cast<uint64_t>(entry.first) ^ (uint64_t{1} << 63));
    value += model::ToJson(entry.second);
    RETURN_IF_ERROR(put(IdKey('t', id), value));
  }
  rocksdb::WriteOptions options;
  options.sync = true;
  return FromRocks(db_->Write(options, &batch), "write bootstrap");
}

Status SchemaDisk::WriteRound(const std::vector<const model::Job*>& jobs, Ts resolved) {
  rocksdb::WriteBatch batch;
  for (const model::Job* job : jobs) {
    RETURN_IF_ERROR(
        FromRocks(batch.Put(JobKey(Ts(job->binlog->finished_ts)), model::ToJson(*job)), "batch"));
  }
  RETURN_IF_ERROR(FromRocks(batch.Put("R", U64Value(resolved.value())), "batch"));
  return FromRocks(db_->Write(rocksdb::WriteOptions(), &batch), "write");
}

Status SchemaDisk::Sync() { return FromRocks(db_->FlushWAL(/*sync=*/true), "sync"); }

}  // namespace sluice::schemastore
