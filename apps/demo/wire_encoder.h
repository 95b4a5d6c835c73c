// The upstream half of sluice-demo: an MvccObserver that turns every
// prewrite, commit and rollback of the simulated store into cdcpb.Event rows,
// exactly as a TiKV CDC stream carries them (raw row keys, PREWRITE with the
// value and old value, COMMIT with the commit ts), batches them into
// ChangeDataEvent messages and serializes each batch to wire bytes.
// Called on the store's thread only.
#pragma once

#include <string>
#include <vector>

#include "cdcpb.pb.h"
#include "common/strong_id.h"
#include "simkv/mvcc_store.h"

namespace sluice::demo {

class WireEncoder : public simkv::MvccObserver {
 public:
  WireEncoder(uint64_t region_id, uint64_t request_id, size_t rows_per_batch)
      : region_id_(region_id), request_id_(request_id), rows_per_batch_(rows_per_batch) {}

  void OnPrewrite(const simkv::PrewriteEvent& e) override;
  void OnCommit(const simkv::CommitEvent& e) override;
  void OnRollback(const simkv::RollbackEvent& e) override;

  // Flushes pending rows, then appends a batched ResolvedTs message.
  void EmitResolvedTs(Ts ts);
  // Flushes pending rows (if any) into a message.
  void Flush();

  const std::vector<std::string>& messages() const { return messages_; }
  size_t wire_bytes() const { return wire_bytes_; }

 private:
  cdcpb::Event_Row* NewRow(uint64_t apply_index);

  uint64_t region_id_;
  uint64_t request_id_;
  size_t rows_per_batch_;
  cdcpb::ChangeDataEvent pending_;
  size_t pending_rows_ = 0;
  std::vector<std::string> messages_;
  size_t wire_bytes_ = 0;
};

}  // namespace sluice::demo
