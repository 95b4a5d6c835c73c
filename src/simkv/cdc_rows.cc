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

// Copies a view or a const string; moves a string passed as an rvalue.
template <typename OldValue>
void SetOldValue(OldValue&& old_value, bool with_old_value, Row* row) {
  if (with_old_value && old_value.has_value()) {
    row->set_old_value(std::string(*std::forward<OldValue>(old_value)));
  }
}

cdcpb::Event NewEntriesEvent(uint64_t region_id, uint64_t request_id) {
  cdcpb::Event event;
  event.set_region_id(region_id);
  event.set_request_id(request_id);
  event.mutable_entries();
  return event;
}

}  // namespace

std::optional<RowView> ViewOfPrewrite(const PrewriteEvent& event, bool with_old_value) {
  if (event.op == MutationOp::kLock) return std::nullopt;
  RowView row;
  row.start_ts = event.start_ts.value();
  row.type = cdcpb::Event::PREWRITE;
  row.op_type = OpOf(event.op);
  row.key = event.key;
  row.value = event.value;
  if (with_old_value && event.old_value.has_value()) row.old_value = *event.old_value;
  return row;
}

std::optional<RowView> ViewOfCommit(const CommitEvent& event, bool with_old_value) {
  if (event.kind != WriteKind::kPut && event.kind != WriteKind::kDelete) return std::nullopt;
  RowView row;
  row.start_ts = event.start_ts.value();
  row.commit_ts = event.commit_ts.value();
  row.op_type = OpOf(event.kind);
  row.key = event.key;
  if (event.one_pc) {
    row.type = cdcpb::Event::COMMITTED;
    row.value = event.value;
    if (with_old_value && event.old_value.has_value()) row.old_value = *event.old_value;
  } else {
    row.type = cdcpb::Event::COMMIT;
    if (event.value.size() <= kShortValueMaxLen) row.value = event.value;
  }
  return row;
}

RowView ViewOfRollback(const RollbackEvent& event) {
  RowView row;
  row.start_ts = event.start_ts.value();
  row.type = cdcpb::Event::ROLLBACK;
  row.op_type = Row::UNKNOWN;
  row.key = event.key;
  return row;
}

RowView ViewOfRow(const Row& row) {
  return RowView{row.type(), row.op_type(), row.start_ts(), row.commit_ts(),
                 row.key(),  row.value(),   row.old_value()};
}

void FillRow(const RowView& view, Row* row) {
  row->set_start_ts(view.start_ts);
  row->set_commit_ts(view.commit_ts);
  row->set_type(view.type);
  row->set_op_type(view.op_type);
  row->set_key(view.key.data(), view.key.size());
  row->set_value(view.value.data(), view.value.size());
  row->set_old_value(view.old_value.data(), view.old_value.size());
}

Row ToRow(const RowView& view) {
  Row row;
  FillRow(view, &row);
  return row;
}

std::optional<Row> RowFromPrewrite(const PrewriteEvent& event, bool with_old_value) {
  std::optional<RowView> view = ViewOfPrewrite(event, with_old_value);
  if (!view) return std::nullopt;
  return ToRow(*view);
}

std::optional<Row> RowFromCommit(const CommitEvent& event, bool with_old_value) {
  std::optional<RowView> view = ViewOfCommit(event, with_old_value);
  if (!view) return std::nullopt;
  return ToRow(*view);
}

Row RowFromRollback(const RollbackEvent& event) { return ToRow(ViewOfRollback(event)); }

Row RowFromScan(CommittedRow&& committed, bool with_old_value) {
  Row row;
  row.set_start_ts(committed.start_ts.value());
  row.set_commit_ts(committed.commit_ts.value());
  row.set_type(cdcpb::Event::COMMITTED);
  row.set_op_type(OpOf(committed.kind));
  row.set_key(std::move(committed.key));
  row.set_value(std::move(committed.value));
  SetOldValue(std::move(committed.old_value), with_old_value, &row);
  return row;
}

Row RowFromScan(PrewriteRow&& prewrite, bool with_old_value) {
  Row row;
  row.set_start_ts(prewrite.lock.start_ts.value());
  row.set_type(cdcpb::Event::PREWRITE);
  row.set_op_type(OpOf(prewrite.lock.op));
  row.set_key(std::move(prewrite.lock.key));
  row.set_value(std::move(prewrite.lock.value));
  SetOldValue(std::move(prewrite.old_value), with_old_value, &row);
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

std::vector<cdcpb::Event> ScanEvents(CommittedScan&& scan, uint64_t region_id, uint64_t request_id,
                                     bool with_old_value) {
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
  for (CommittedRow& committed : scan.rows) {
    while (p < scan.prewrites.size() && scan.prewrites[p].lock.key <= committed.key) {
      add(RowFromScan(std::move(scan.prewrites[p++]), with_old_value));
    }
    add(RowFromScan(std::move(committed), with_old_value));
  }
  for (; p < scan.prewrites.size(); ++p) {
    add(RowFromScan(std::move(scan.prewrites[p]), with_old_value));
  }
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
