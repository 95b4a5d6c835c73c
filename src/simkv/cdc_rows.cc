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

RowView ViewOfScanned(const ScannedRow& scanned, bool with_old_value) {
  RowView row;
  row.start_ts = scanned.start_ts.value();
  row.key = scanned.key;
  row.value = scanned.value;
  if (scanned.is_lock) {
    row.type = cdcpb::Event::PREWRITE;
    row.op_type = OpOf(scanned.lock_op);
  } else {
    row.type = cdcpb::Event::COMMITTED;
    row.op_type = OpOf(scanned.kind);
    row.commit_ts = scanned.commit_ts.value();
  }
  if (with_old_value && scanned.old_value.has_value()) row.old_value = *scanned.old_value;
  return row;
}

void RowBatch::Append(const RowView& row) {
  Packed packed;
  packed.start_ts = row.start_ts;
  packed.commit_ts = row.commit_ts;
  packed.key_size = static_cast<uint32_t>(row.key.size());
  packed.value_size = static_cast<uint32_t>(row.value.size());
  packed.old_value_size = static_cast<uint32_t>(row.old_value.size());
  packed.type = row.type;
  packed.op_type = row.op_type;
  rows.push_back(packed);
  bytes.append(row.key).append(row.value).append(row.old_value);
  row_bytes += RowBytes(row);
}

void RowBatch::Views(std::vector<RowView>* views) const {
  views->clear();
  const char* data = bytes.data();
  for (const Packed& packed : rows) {
    RowView& view = views->emplace_back();
    view.type = packed.type;
    view.op_type = packed.op_type;
    view.start_ts = packed.start_ts;
    view.commit_ts = packed.commit_ts;
    view.key = std::string_view(data, packed.key_size);
    data += packed.key_size;
    view.value = std::string_view(data, packed.value_size);
    data += packed.value_size;
    view.old_value = std::string_view(data, packed.old_value_size);
    data += packed.old_value_size;
  }
}

void RowBatch::Clear() {
  rows.clear();
  bytes.clear();
  row_bytes = 0;
}

void AppendScanRow(const RowView& row, uint64_t region_id, uint64_t request_id,
                   std::vector<RowBatch>* batches) {
  if (batches->empty() || (batches->back().row_bytes > 0 &&
                           batches->back().row_bytes + RowBytes(row) >= kEventMaxBytes)) {
    RowBatch& batch = batches->emplace_back();
    batch.region_id = region_id;
    batch.request_id = request_id;
  }
  batches->back().Append(row);
}

cdcpb::Event ErrorEvent(uint64_t region_id, uint64_t request_id, cdcpb::Error error) {
  cdcpb::Event event;
  event.set_region_id(region_id);
  event.set_request_id(request_id);
  *event.mutable_error() = std::move(error);
  return event;
}

}  // namespace sluice::simkv
