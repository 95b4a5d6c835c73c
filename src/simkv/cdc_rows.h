// How simkv's MVCC changes look on the CDC wire (cdcpb.Event.Row), following
// TiKV's CDC delegate and initializer:
//  - live prewrite of a put/delete: PREWRITE with value and old value;
//  - live commit: COMMIT with the value only when it is a short value
//    (<= 255 bytes, stored inline by TiKV); the client takes the value from
//    the matching PREWRITE;
//  - live one-phase commit: COMMITTED with value and old value;
//  - live rollback: ROLLBACK, op UNKNOWN, commit_ts 0;
//  - incremental scan: locks as PREWRITE, writes as COMMITTED with value and
//    old value, then one INITIALIZED row;
//  - lock-only (SELECT FOR UPDATE) mutations produce no rows.
// Keys are raw. Old values are dropped unless the request asked for
// ReadOldValue. Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "cdcpb.pb.h"
#include "simkv/mvcc_store.h"

namespace sluice::simkv {

// TiKV stores values up to this size inline in the write record.
inline constexpr size_t kShortValueMaxLen = 255;
// TiKV starts a new Event when a batch of rows reaches this size.
inline constexpr size_t kEventMaxBytes = 32 * 1024;

using Row = cdcpb::Event::Row;

// A row as views into its source (an MVCC event or a Row): what the live
// fan-out hands to a sink without building a Row. Valid while the source is.
// An empty old_value is the same as none on the wire.
struct RowView {
  cdcpb::Event::LogType type = cdcpb::Event::UNKNOWN;
  Row::OpType op_type = Row::UNKNOWN;
  uint64_t start_ts = 0;
  uint64_t commit_ts = 0;
  std::string_view key;
  std::string_view value;
  std::string_view old_value;
};

// nullopt for changes that produce no row (lock-only mutations).
std::optional<RowView> ViewOfPrewrite(const PrewriteEvent& event, bool with_old_value);
std::optional<RowView> ViewOfCommit(const CommitEvent& event, bool with_old_value);
RowView ViewOfRollback(const RollbackEvent& event);
RowView ViewOfRow(const Row& row);
// Sets every field of `row` from `view` (assigning into the row's strings, so
// a reused row keeps its buffers).
void FillRow(const RowView& view, Row* row);
Row ToRow(const RowView& view);

// An incremental scan's row: a lock as PREWRITE, a write as COMMITTED.
RowView ViewOfScanned(const ScannedRow& row, bool with_old_value);

// nullopt for changes that produce no row (lock-only mutations).
std::optional<Row> RowFromPrewrite(const PrewriteEvent& event, bool with_old_value);
std::optional<Row> RowFromCommit(const CommitEvent& event, bool with_old_value);
Row RowFromRollback(const RollbackEvent& event);
Row InitializedRow();

// Approximate bytes a row takes in memory and on the wire.
size_t RowBytes(const Row& row);
inline size_t RowBytes(const RowView& row) {
  return row.key.size() + row.value.size() + row.old_value.size() + 32;
}
size_t EventBytes(const cdcpb::Event& event);

// Rows of one (region, request, apply index) packed into one buffer: what
// goes on the wire as one Event. Each row's key, value and old value follow
// each other in `bytes`.
struct RowBatch {
  struct Packed {
    uint64_t start_ts = 0;
    uint64_t commit_ts = 0;
    uint32_t key_size = 0;
    uint32_t value_size = 0;
    uint32_t old_value_size = 0;
    cdcpb::Event::LogType type = cdcpb::Event::UNKNOWN;
    Row::OpType op_type = Row::UNKNOWN;
  };

  uint64_t region_id = 0;
  uint64_t request_id = 0;
  uint64_t index = 0;
  std::vector<Packed> rows;
  std::string bytes;
  size_t row_bytes = 0;  // RowBytes() of the rows, summed.

  void Append(const RowView& row);
  // Replaces *views by views of the rows (into `bytes`).
  void Views(std::vector<RowView>* views) const;
  void Clear();
};

// Appends an incremental scan's row (in TiKV's order: key order, a key's lock
// before its writes, writes oldest first) to the last batch of `*batches`,
// starting a new batch of (region, request) when the last one holds
// kEventMaxBytes of rows.
void AppendScanRow(const RowView& row, uint64_t region_id, uint64_t request_id,
                   std::vector<RowBatch>* batches);

cdcpb::Event ErrorEvent(uint64_t region_id, uint64_t request_id, cdcpb::Error error);

}  // namespace sluice::simkv
