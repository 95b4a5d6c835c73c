// SchemaDisk: the schema store's RocksDB under <data_dir>/schema_store. It
// holds the bootstrap snapshot (its ts, the databases and tables outside
// the system schemas, the tidb_ddl_job TableInfo), every applied DDL job and
// the resolved ts up to which the job history is complete. Writes keep the
// invariant "every applied job with finished ts <= the stored resolved ts is
// stored". Bad bytes on disk are Corruption; RocksDB failures IoError.
// Owned by one SchemaStore; calls are serialised by it.
//
// Layout (integers big-endian; table and database ids with the sign bit
// flipped so that byte order is numeric order):
//   "F"            format version, one byte (1)
//   "S"            snapshot ts (8 bytes)
//   "R"            resolved ts (8 bytes)
//   "J"            TableInfo JSON of mysql.tidb_ddl_job
//   "d" + id       DBInfo JSON
//   "t" + id       database id (8 bytes) + TableInfo JSON
//   "j" + ts       job JSON (start_ts and binlog.FinishedTS set from the row)
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "codec/model/job.h"
#include "codec/model/table_info.h"
#include "common/status.h"
#include "common/strong_id.h"
#include "kvclient/meta_reader.h"

namespace rocksdb {
class DB;
}

namespace sluice::schemastore {

inline constexpr uint8_t kDiskFormatVersion = 1;

struct DiskBounds {
  Ts snapshot_ts;
  Ts resolved_ts;
};

struct DiskState {
  DiskBounds bounds;
  model::TableInfo job_table;
  kvclient::MetaSnapshot snapshot;  // ts = bounds.snapshot_ts
  std::vector<model::Job> jobs;     // In finished-ts order.
};

class SchemaDisk {
 public:
  // Opens (creating if needed) the RocksDB at `dir`.
  static Result<std::unique_ptr<SchemaDisk>> Open(const std::string& dir);
  ~SchemaDisk();
  SchemaDisk(const SchemaDisk&) = delete;
  SchemaDisk& operator=(const SchemaDisk&) = delete;

  // The stored bounds; nullopt when the store holds no bootstrap (a new or
  // wiped directory). Corruption for a malformed or unknown format.
  Result<std::optional<DiskBounds>> ReadBounds();
  // Everything stored. Corruption for any value that does not parse.
  Result<DiskState> Load();

  // Deletes everything.
  Status Wipe();
  // Stores a bootstrap at snap.ts (resolved ts = snap.ts), replacing
  // nothing: call on an empty store. Synced.
  Status WriteBootstrap(const kvclient::MetaSnapshot& snap, const model::TableInfo& job_table);
  // Stores `jobs` and the new resolved ts in one write (WAL, not synced).
  Status WriteRound(const std::vector<const model::Job*>& jobs, Ts resolved);
  // Syncs the WAL.
  Status Sync();

  // Keys, for tests that damage the store on purpose.
  static std::string JobKey(Ts finished_ts);
  static std::string ResolvedKey() { return "R"; }

 private:
  SchemaDisk(std::string dir, std::unique_ptr<rocksdb::DB> db);

  const std::string dir_;
  std::unique_ptr<rocksdb::DB> db_;
};

}  // namespace sluice::schemastore
