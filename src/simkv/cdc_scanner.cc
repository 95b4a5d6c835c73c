#include "simkv/cdc_scanner.h"

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
  for (size_t i = 0; i < threads_; ++i) {
    workers_.Start("cdc-scan-" + std::to_string(store_id_.value()), [this](StopToken token) {
      while (std::optional<ScanTask> task = queue_.Pop(token)) Run(*task, token);
    });
  }
}

void CdcScanner::Stop() {
  queue_.Close();
  workers_.Stop();
}

void CdcScanner::Schedule(ScanTask task) {
  if (!queue_.Push(std::move(task)))
    LOG_WARN("cdc: store {} scan dropped, stopping", store_id_.value());
}

void CdcScanner::Run(const ScanTask& task, const CancelToken& token) {
  const DownstreamSpec& spec = *task.spec;
  // The rows are packed straight out of the store: each byte is copied once
  // before the stream's writer encodes it.
  std::vector<RowBatch> batches;
  Result<uint64_t> applied_index = Status(Code::kInternal, "not scanned");
  for (int attempt = 0; attempt < kScanAttempts && !applied_index.ok(); ++attempt) {
    Ts after = spec.checkpoint_ts;
    Ts gc_safe_point = store_->gc_safe_point();
    if (after < gc_safe_point) {
      LOG_WARN("cdc: region {} request {} checkpoint {} is below the gc safe point {}",
               spec.region_id.value(), spec.request_id, after.value(), gc_safe_point.value());
      after = gc_safe_point;
    }
    batches.clear();
    applied_index = store_->VisitCommitted(
        task.range.start, task.range.end, after, kMaxTs, [&](const ScannedRow& row) {
          AppendScanRow(ViewOfScanned(row, spec.old_value), spec.region_id.value(), spec.request_id,
                        &batches);
        });
  }
  if (!applied_index.ok()) {
    LOG_WARN("cdc: region {} scan failed: {}", spec.region_id.value(),
             applied_index.status().ToString());
    hub_->Fail(spec, RegionNotFoundError(spec.region_id.value()));
    return;
  }
  for (RowBatch& batch : batches) {
    if (!spec.sink->WaitForSpace(token)) return;
    if (!hub_->SendScanRows(spec, std::move(batch))) return;
  }
  hub_->FinishScan(spec, applied_index.value());
}

}  // namespace sluice::simkv
