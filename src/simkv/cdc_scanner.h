// CdcScanner: the incremental scans of one store (TiKV's CDC Initializer on
// its scan pool). Each task reads a VisitCommitted snapshot of the observed
// range from the request's checkpoint ts into packed row batches, sends them
// through the hub as they fill (locks as PREWRITE, writes as COMMITTED, in
// key order), then lets the hub send INITIALIZED and the live rows that came
// after the snapshot.
//
// A checkpoint below the GC safe point is scanned from the safe point (with a
// warning): history below it is gone, as it would be in TiKV.
//
// Threads: `threads` workers and as many readers, owned here, started by
// Start() and joined by Stop(). A worker hands its task's snapshot read to a
// reader and sends the batches while the reader fills them; a worker has at
// most one read out, so with as many readers as workers a read never waits
// behind another. Schedule() may be called from any thread and never
// blocks.
#pragma once

#include <cstddef>
#include <memory>
#include <utility>

#include "common/lifecycle.h"
#include "common/queue.h"
#include "common/strong_id.h"
#include "simkv/cdc_hub.h"
#include "simkv/mvcc_store.h"

namespace sluice::simkv {

class CdcScanner {
 public:
  // Borrows the hub and the store; both must outlive the scanner.
  CdcScanner(CdcHub* hub, MvccStore* store, StoreId store_id, size_t threads);
  ~CdcScanner() { Stop(); }
  CdcScanner(const CdcScanner&) = delete;
  CdcScanner& operator=(const CdcScanner&) = delete;

  void Start();
  // Stops the sending of running scans (a read in progress runs to its end
  // under the store lock), drops queued ones and joins the workers, then
  // the readers.
  void Stop();
  void Schedule(ScanTask task);

 private:
  // A snapshot read handed from a worker to a reader. Shared, because the
  // worker returns as soon as it sees `batches` closed, while the reader may
  // still be inside Close(); the task's last reference may so drop on the
  // reader.
  struct Read {
    explicit Read(ScanTask t) : task(std::move(t)) {}
    const ScanTask task;
    UnboundedMpscQueue<RowBatch> batches;
    Result<uint64_t> applied_index = Status(Code::kInternal, "not scanned");
  };

  void Run(ScanTask task, const CancelToken& token);
  // Reads the task's snapshot into `out`, batch by batch as each fills
  // (retrying a read the GC safe point refused); returns its apply index.
  Result<uint64_t> ReadSnapshot(const ScanTask& task, UnboundedMpscQueue<RowBatch>* out);

  CdcHub* const hub_;
  MvccStore* const store_;
  const StoreId store_id_;
  const size_t threads_;
  UnboundedMpscQueue<ScanTask> queue_;
  UnboundedMpscQueue<std::shared_ptr<Read>> reads_;
  ThreadGroup workers_;
  ThreadGroup readers_;
};

}  // namespace sluice::simkv
