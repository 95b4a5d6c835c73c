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

namespace sluice::kvclient {

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

}  // namespace sluice::kvclient
