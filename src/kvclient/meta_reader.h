// MetaReader: reads TiDB's schema (the 'm' meta keys: databases and tables)
// as of a ts, through snapshot reads on the upstream (TiKV's KvScan), the way
// TiCDC bootstraps its schema store. Thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <utility>

#include "codec/model/db_info.h"
#include "codec/model/table_info.h"
#include "common/status.h"
#include "common/strong_id.h"

namespace sluice::pd {
class PdClient;
}

namespace sluice::kvclient {

class SnapshotReader;

struct MetaSnapshot {
  Ts ts;
  int64_t schema_version = 0;
  std::map<int64_t, model::DBInfo> dbs;  // By database id, `mysql` included.
  // By table id: (database id, table info).
  std::map<int64_t, std::pair<int64_t, model::TableInfo>> tables;
};

class MetaReader {
 public:
  virtual ~MetaReader() = default;
  // The schema as of `ts`. Corruption for meta values that do not parse;
  // Unavailable / Timeout when the upstream cannot be read (retryable);
  // kGcSafepointExceeded when ts is below the GC safepoint.
  virtual Result<MetaSnapshot> Read(Ts ts) = 0;
};

// KvMetaReader: MetaReader over snapshot reads (snapshot_reader.h). Reads the
// string "SchemaVersionKey", the hash "DBs" (fields "DB:<id>" -> DBInfo
// JSON) and, for each database, the hash "DB:<id>" (fields "Table:<id>" ->
// TableInfo JSON; the auto-id fields "TID:"/"IID:" and any other field are
// skipped), each hash as one scan of its fields' key range, all at the same
// ts. Like client-go, it refuses a ts below PD's GC safe point before
// reading (kGcSafepointExceeded). A key that is not a meta key of the hash
// scanned, a field name that is not "<prefix><decimal id>", a value that
// does not parse, or an id in the JSON that differs from the field's id is
// kCorruption. Borrows the PdClient and the SnapshotReader (both must outlive
// it); thread-safe as they are.
class KvMetaReader final : public MetaReader {
 public:
  KvMetaReader(pd::PdClient* pd, SnapshotReader* reader);

  Result<MetaSnapshot> Read(Ts ts) override;

 private:
  pd::PdClient* const pd_;
  SnapshotReader* const reader_;
};

}  // namespace sluice::kvclient
