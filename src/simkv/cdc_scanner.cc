#include "simkv/cdc_scanner.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/logging.h"
#include "simkv/cdc_errors.h"
#include "simkv/cdc_rows.h"

namespace sluice::simkv {

namespace {

constexpr int kScanAttempts = 3;  // GC may move between reading and scanning.

}  // namespace

CdcScanner::CdcScanner(CdcHub* hub, MvccStore* store, StoreId store_id, size_t threads)
    : hub_(hub), store_(store), store_id_(store_id), threads_(threads == 0 ? 1 : threads) {}

void CdcScanner::Start() {
  const std::string name = "cdc-scan-" + std::to_string(store_id_.value());
  for (size_t i = 0; i < threads_; ++i) {
    workers_.Start(name, [this](StopToken token) {
      // Pop() still hands out queued tasks once stopping; they are dropped.
      while (std::optional<ScanTask> task = queue_.Pop(token)) {
        if (token.cancelled()) break;
        Run(std::move(*task), token);
      }
    });
    // Readers ignore the stop token and end when Stop() closes reads_,
    // after the workers are joined: a worker waits for the read it handed
    // out.
    readers_.Start(name, [this](const StopToken&) {
      while (std::optional<std::shared_ptr<Read>> read = reads_.Pop()) {
        Read& r = **read;
        r.applied_index = ReadSnapshot(r.task, &r.batches);
        r.batches.Close();
      }
    });
  }
}

void CdcScanner::Stop() {
  queue_.Close();
  workers_.Stop();
  reads_.Close();
  readers_.Stop();
}

void CdcScanner::Schedule(ScanTask task) {
  if (!queue_.Push(std::move(task)))
    LOG_WARN("cdc: store {} scan dropped, stopping", store_id_.value());
}

void CdcScanner::Run(ScanTask task, const CancelToken& token) {
  auto read = std::make_shared<Read>(std::move(task));
  const DownstreamSpec& spec = *read->task.spec;
  // A reader reads the snapshot and hands each batch over as soon as it is
  // full; this thread sends them meanwhile, so the downstream works on the
  // first rows while the rest are read (TiKV streams its incremental scan
  // too). The reader keeps the store's lock for the whole read; only the
  // sending is out of its way.
  // reads_ is closed only after the workers are joined, so this succeeds.
  if (!reads_.Push(std::shared_ptr<Read>(read))) return;
  bool sending = true;
  while (std::optional<RowBatch> batch = read->batches.Pop()) {
    // After a failed send the rest is only drained: the hub failed the region.
    sending =
        sending && spec.sink->WaitForSpace(token) && hub_->SendScanRows(spec, std::move(*batch));
  }
  // The reader set the result before it closed the batches, and the queue's
  // mutex orders the two (Pop() takes no token: nullopt means closed).
  const Result<uint64_t>& applied_index = read->applied_index;
  if (!applied_index.ok()) {
    LOG_WARN("cdc: region {} scan failed: {}", spec.region_id.value(),
             applied_index.status().ToString());
    hub_->Fail(spec, RegionNotFoundError(spec.region_id.value()));
    return;
  }
  if (sending) hub_->FinishScan(spec, applied_index.value());
}

Result<uint64_t> CdcScanner::ReadSnapshot(const ScanTask& task, UnboundedMpscQueue<RowBatch>* out) {
  const DownstreamSpec& spec = *task.spec;
  Result<uint64_t> applied_index = Status(Code::kInternal, "not scanned");
  // A failed read visits no row (VisitCommitted checks the safe point
  // first), so it can be retried without sending anything twice.
  for (int attempt = 0; attempt < kScanAttempts && !applied_index.ok(); ++attempt) {
    Ts after = spec.checkpoint_ts;
    Ts gc_safe_point = store_->gc_safe_point();
    if (after < gc_safe_point) {
      LOG_WARN("cdc: region {} request {} checkpoint {} is below the gc safe point {}",
               spec.region_id.value(), spec.request_id, after.value(), gc_safe_point.value());
      after = gc_safe_point;
    }
    // The rows are packed straight out of the store: each byte is copied
    // once before the stream's writer encodes it. AppendScanRow opens a new
    // batch when the last one is full; the full one goes out at once.
    std::vector<RowBatch> open;
    applied_index = store_->VisitCommitted(
        task.range.start, task.range.end, after, kMaxTs, [&](const ScannedRow& row) {
          AppendScanRow(ViewOfScanned(row, spec.old_value), spec.region_id.value(), spec.request_id,
                        &open);
          if (open.size() > 1) {
            out->Push(std::move(open.front()));
            open.erase(open.begin());
          }
        });
    for (RowBatch& batch : open) out->Push(std::move(batch));
  }
  return applied_index;
}

}  // namespace sluice::simkv
