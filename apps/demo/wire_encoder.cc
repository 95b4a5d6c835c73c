#include "apps/demo/wire_encoder.h"

namespace sluice::demo {

cdcpb::Event_Row* WireEncoder::NewRow(uint64_t apply_index) {
  cdcpb::Event* event = pending_.add_events();
  event->set_region_id(region_id_);
  event->set_request_id(request_id_);
  event->set_index(apply_index);
  ++pending_rows_;
  return event->mutable_entries()->add_entries();
}

void WireEncoder::OnPrewrite(const simkv::PrewriteEvent& e) {
  if (e.op == simkv::MutationOp::kLock) return;  // TiKV sends nothing for lock-only keys.
  cdcpb::Event_Row* row = NewRow(e.apply_index);
  row->set_type(cdcpb::Event_LogType_PREWRITE);
  row->set_start_ts(e.start_ts.value());
  row->set_key(std::string(e.key));
  if (e.op == simkv::MutationOp::kPut) {
    row->set_op_type(cdcpb::Event_Row_OpType_PUT);
    row->set_value(std::string(e.value));
  } else {
    row->set_op_type(cdcpb::Event_Row_OpType_DELETE);
  }
  if (e.old_value) row->set_old_value(std::string(*e.old_value));
  if (pending_rows_ >= rows_per_batch_) Flush();
}

void WireEncoder::OnCommit(const simkv::CommitEvent& e) {
  if (e.kind == simkv::WriteKind::kLock) return;
  cdcpb::Event_Row* row = NewRow(e.apply_index);
  row->set_start_ts(e.start_ts.value());
  row->set_commit_ts(e.commit_ts.value());
  row->set_key(std::string(e.key));
  bool put = e.kind == simkv::WriteKind::kPut;
  row->set_op_type(put ? cdcpb::Event_Row_OpType_PUT : cdcpb::Event_Row_OpType_DELETE);
  if (e.one_pc) {
    // Without a prewrite to pair with, TiKV sends the whole row.
    row->set_type(cdcpb::Event_LogType_COMMITTED);
    if (put) row->set_value(std::string(e.value));
    if (e.old_value) row->set_old_value(std::string(*e.old_value));
  } else {
    row->set_type(cdcpb::Event_LogType_COMMIT);
  }
  if (pending_rows_ >= rows_per_batch_) Flush();
}

void WireEncoder::OnRollback(const simkv::RollbackEvent& e) {
  if (!e.removed_lock || e.lock_op == simkv::MutationOp::kLock) return;
  cdcpb::Event_Row* row = NewRow(e.apply_index);
  row->set_type(cdcpb::Event_LogType_ROLLBACK);
  row->set_start_ts(e.start_ts.value());
  row->set_key(std::string(e.key));
  if (pending_rows_ >= rows_per_batch_) Flush();
}

void WireEncoder::EmitResolvedTs(Ts ts) {
  Flush();
  cdcpb::ChangeDataEvent msg;
  cdcpb::ResolvedTs* resolved = msg.mutable_resolved_ts();
  resolved->add_regions(region_id_);
  resolved->set_ts(ts.value());
  resolved->set_request_id(request_id_);
  messages_.push_back(msg.SerializeAsString());
  wire_bytes_ += messages_.back().size();
}

void WireEncoder::Flush() {
  if (pending_rows_ == 0) return;
  messages_.push_back(pending_.SerializeAsString());
  wire_bytes_ += messages_.back().size();
  pending_.Clear();
  pending_rows_ = 0;
}

}  // namespace sluice::demo
