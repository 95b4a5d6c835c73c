// RawKvEntry: one committed row change as the log puller hands it to the
// event store and the event store hands it to readers (TiCDC's RawKVEntry).
// A plain value; no threading concerns.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/strong_id.h"

namespace sluice {

enum class KvOp : uint8_t {
  kPut = 1,
  kDelete = 2,
};

// Order of changes inside one transaction in the event store: deletes first,
// then updates (a put with an old value), then inserts, as TiCDC does.
enum class DmlOrder : uint8_t {
  kDelete = 1,
  kUpdate = 2,
  kInsert = 3,
};

struct RawKvEntry {
  KvOp op = KvOp::kPut;
  std::string key;        // Raw TiKV key (not memcomparable), e.g. t{id}_r{handle}.
  std::string value;      // Empty for deletes.
  std::string old_value;  // Present only when the subscription asked for it.
  Ts start_ts;
  Ts commit_ts;
  RegionId region_id;

  DmlOrder dml_order() const {
    if (op == KvOp::kDelete) return DmlOrder::kDelete;
    return old_value.empty() ? DmlOrder::kInsert : DmlOrder::kUpdate;
  }
  // Bytes this entry accounts for in quotas: payload plus a fixed overhead.
  size_t ApproximateBytes() const {
    return key.size() + value.size() + old_value.size() + kFixedOverhead;
  }
  friend bool operator==(const RawKvEntry&, const RawKvEntry&) = default;

  static constexpr size_t kFixedOverhead = 64;
};

using KvBatch = std::vector<RawKvEntry>;

inline size_t ApproximateBytes(const KvBatch& batch) {
  size_t total = 0;
  for (const RawKvEntry& entry : batch) total += entry.ApproximateBytes();
  return total;
}

}  // namespace sluice
