#include "simkv/cdc_rows.h"

#include <string>
#include <utility>

namespace sluice::simkv {

namespace {

cdcpb::Event::Row::OpType OpOf(MutationOp op) {
  return op == MutationOp::kDelete ? Row::DELETE : Row::PUT;
}

cdcpb::Event::Row::OpType OpOf(WriteKind kind) {
  return kind == WriteKind::kDelete ? Row::DELETE : Row::PUT;
}

template <typename OldValue>
void SetOldValue(const OldValue& old_value, bool with_old_value, Row* row) {
  if (with_old_value && old_value.has_value()) row->set_old_value(std::string(*old_value));
}

cdcpb::Event NewEntriesEvent(uint64_t region_id, uint64_t request_id) {
  cdcpb::Event event;
  event.set_region_id(region_id);
  event.set_request_id(request_id);
  event.mutable_entries();
  return event;
}

}  // namespace

std::optional<Row> RowFromPrewrite(const PrewriteEvent& event, bool with_old_value) {
  if (event.op == MutationOp::kLock) return std::nullopt;
  Row row;
  row.set_start_ts(event.start_ts.value());
  row.set_type(cdcpb::Event::PREWRITE);
  row.set_op_type(OpOf(event.op));
  row.set_key(std::string(event.key));
  row.set_value(std::string(event.value));
  SetOldValue(event.old_value, with_old_value, &row);
  return row;
}

std::optional<Row> RowFromCommit(const CommitEvent& event, bool with_old_value) {
  if (event.kind != WriteKind::kPut && event.kind != WriteKind::kDelete) return std::nullopt;
  Row row;
  row.set_start_ts(event.start_ts.value());
  row.set_commit_ts(event.commit_ts.value());
  row.set_op_type(OpOf(event.kind));
  row.set_key(std::string(event.key));
  if (event.one_pc) {
    row.set_type(cdcpb::Event::COMMITTED);
    row.set_value(std::string(event.value));
    SetOldValue(event.old_value, with_old_value, &row);
  } else {
    row.set_type(cdcpb::Event::COMMIT);
    if (event.value.size() <= kShortValueMaxLen) row.set_value(std::string(event.value));
  }
  return row;
}

Row RowFromRollback(const RollbackEvent& event) {
  Row row;
  row.set_start_ts(event.start_ts.value());
  row.set_type(cdcpb::Event::ROLLBACK);
  row.set_op_type(Row::UNKNOWN);
  row.set_key(std::string(event.key));
  return row;
}

Row RowFromScan(const CommittedRow& committed, bool with_old_value) {
  Row row;
  row.set_start_ts(committed.start_ts.value());
  row.set_commit_ts(committed.commit_ts.value());
  row.set_type(cdcpb::Event::COMMITTED);
  row.set_op_type(OpOf(committed.kind));
  row.set_key(committed.key);
  row.set_value(committed.value);
  SetOldValue(committed.old_value, with_old_value, &row);
  return row;
}

Row RowFromScan(const PrewriteRow& prewrite, bool with_old_value) {
  Row row;
  row.set_start_ts(prewrite.lock.start_ts.value());
  row.set_type(cdcpb::Event::PREWRITE);
  row.set_op_type(OpOf(prewrite.lock.op));
  row.set_key(prewrite.lock.key);
  row.set_value(prewrite.lock.value);
  SetOldValue(prewrite.old_value, with_old_value, &row);
  return row;
}

Row InitializedRow() {
  Row row;
  row.set_type(cdcpb::Event::INITIALIZED);
  return row;
}

size_t RowBytes(const Row& row) {
  return row.key().size() + row.value().size() + row.old_value().size() + 32;
}

size_t EventBytes(const cdcpb::Event& event) {
  size_t bytes = 32;
  if (event.has_entries()) {
    for (const Row& row : event.entries().entries()) bytes += RowBytes(row);
  } else if (event.has_error()) {
    bytes += event.error().ByteSizeLong();
  }
  return bytes;
}

std::vector<cdcpb::Event> ScanEvents(const CommittedScan& scan, uint64_t region_id,
                                     uint64_t request_id, bool with_old_value) {
  std::vector<cdcpb::Event> events;
  size_t bytes = 0;  // Row bytes in events.back().
  auto add = [&](Row row) {
    size_t row_bytes = RowBytes(row);
    if (events.empty() || (bytes > 0 && bytes + row_bytes >= kEventMaxBytes)) {
      events.push_back(NewEntriesEvent(region_id, request_id));
      bytes = 0;
    }
    bytes += row_bytes;
    *events.back().mutable_entries()->add_entries() = std::move(row);
  };
  size_t p = 0;
  for (const CommittedRow& committed : scan.rows) {
    while (p < scan.prewrites.size() && scan.prewrites[p].lock.key <= committed.key) {
      add(RowFromScan(scan.prewrites[p++], with_old_value));
    }
    add(RowFromScan(committed, with_old_value));
  }
  for (; p < scan.prewrites.size(); ++p) add(RowFromScan(scan.prewrites[p], with_old_value));
  return events;
}

cdcpb::Event ErrorEvent(uint64_t region_id, uint64_t request_id, cdcpb::Error error) {
  cdcpb::Event event;
  event.set_region_id(region_id);
  event.set_request_id(request_id);
  *event.mutable_error() = std::move(error);
  return event;
}

}  // namespace sluice::simkv
