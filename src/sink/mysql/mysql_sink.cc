#include "sink/mysql/mysql_sink.h"

#include <fmt/format.h>

#include <algorithm>

#include "common/logging.h"
#include "common/tso.h"
#include "sink/mysql/mysql_error.h"
#include "sink/mysql/row_keys.h"

namespace sluice::sink {

Result<std::unique_ptr<MysqlSink>> MysqlSink::Create(const SinkUri& uri, MysqlSinkOptions options) {
  if (options.clock == nullptr) return InvalidArgument("mysql sink: options.clock is required");
  if (options.changefeed_id.empty()) return InvalidArgument("mysql sink: changefeed id is empty");
  if (options.dml_max_retry < 1 || options.ddl_max_retry < 1) {
    return InvalidArgument("mysql sink: retry counts must be at least 1");
  }
  ASSIGN_OR_RETURN(MysqlSinkConfig config, MysqlSinkConfig::FromUri(uri));
  std::unique_ptr<MysqlSink> sink(new MysqlSink(std::move(config), std::move(options)));
  {
    MutexLock lock(&sink->control_mu_);
    RETURN_IF_ERROR(sink->EnsureControlConnection());
    RETURN_IF_ERROR(sink->fence()->Claim(sink->control_.get()));
  }
  for (size_t i = 0; i < sink->workers_.size(); ++i) {
    MysqlSink* self = sink.get();
    sink->threads_.Start(fmt::format("mysql-sink-{}", i),
                         [self, i](StopToken stop) { self->RunWorker(i, stop); });
  }
  LOG_INFO("mysql sink: changefeed {} writes to {} with {} workers, replicating ts {}",
           sink->options_.changefeed_id, uri.Redacted(), sink->workers_.size(),
           sink->replicating_ts_.value());
  return sink;
}

MysqlSink::MysqlSink(MysqlSinkConfig config, MysqlSinkOptions options)
    : config_(std::move(config)),
      options_(std::move(options)),
      scheme_(config_.tidb_scheme ? "tidb" : "mysql"),
      clock_(options_.clock),
      replicating_ts_(options_.replicating_ts),
      bytes_quota_(std::max<uint64_t>(options_.max_queued_bytes, 1)),
      rows_quota_(std::max<uint64_t>(options_.max_queued_rows, 1)),
      // A worker whose queue ends with the same table (or where the
      // transaction starts a batch) may be up to one batch ahead of the
      // least loaded and still take it; workers pop batches of max-txn-row.
      detector_(static_cast<size_t>(config_.worker_count), static_cast<size_t>(config_.max_txn_row),
                static_cast<size_t>(config_.max_txn_row)),
      ddl_ts_(options_.cluster_id, options_.changefeed_id),
      fence_(std::make_shared<const EpochFence>(options_.cluster_id, options_.changefeed_id,
                                                options_.epoch)) {
  if (replicating_ts_.value() == 0) replicating_ts_ = tso::FromWallTime(clock_->WallNow());
  checkpoint_.store(options_.start_ts.value());
  for (int i = 0; i < config_.worker_count; ++i) {
    workers_.push_back(std::make_unique<Worker>(static_cast<size_t>(i), options_.backoff));
  }
}

MysqlSink::~MysqlSink() { Close(); }

std::shared_ptr<const EpochFence> MysqlSink::fence() const {
  MutexLock lock(&fence_mu_);
  return fence_;
}

Status MysqlSink::AdoptEpoch(uint64_t epoch) {
  std::shared_ptr<const EpochFence> current = fence();
  if (!current->enabled() || epoch <= current->epoch()) return Status::Ok();
  auto next =
      std::make_shared<const EpochFence>(options_.cluster_id, options_.changefeed_id, epoch);
  {
    // Its own connection: a DDL may hold the control connection while it
    // waits for this very adoption.
    ASSIGN_OR_RETURN(std::unique_ptr<MysqlConnection> conn,
                     MysqlConnection::Connect(config_.connect));
    RETURN_IF_ERROR(next->Claim(conn.get()));
  }
  MutexLock lock(&fence_mu_);
  fence_ = std::move(next);
  LOG_INFO("mysql sink: changefeed {} now writes for maintainer epoch {}", options_.changefeed_id,
           epoch);
  return Status::Ok();
}

bool MysqlSink::AwaitAdoption(uint64_t refused_epoch, const CancelToken& stop) {
  const Clock::TimePoint deadline = clock_->Now() + options_.fence_adoption_grace;
  counters_.fence_waits.fetch_add(1, std::memory_order_relaxed);
  while (fence()->epoch() <= refused_epoch) {
    if (closing_.load() || !CheckWritePermit(options_.write_permit).ok()) return false;
    if (clock_->Now() >= deadline) return false;
    if (!clock_->SleepFor(std::chrono::milliseconds(20), stop)) return false;
  }
  LOG_INFO("mysql sink: changefeed {}: a write refused under epoch {} is retried under {}",
           options_.changefeed_id, refused_epoch, fence()->epoch());
  return true;
}

Status MysqlSink::EnsureControlConnection() {
  if (control_ != nullptr) return Status::Ok();
  ASSIGN_OR_RETURN(control_, MysqlConnection::Connect(config_.connect));
  control_id_.store(control_->connection_id());
  LOG_INFO("mysql sink: changefeed {} control connected; connection_id={}", options_.changefeed_id,
           control_->connection_id());
  return Status::Ok();
}

void MysqlSink::AddDmlEvent(event::DmlEventPtr event) {
  if (event == nullptr || failed() || closing_.load()) return;  // Dropped: the sink is done.
  const size_t rows = event->rows.size();
  if (rows == 0) {
    orderer_.Done(event->dispatcher_id, orderer_.Register(event));
    return;
  }
  PendingTxn txn;
  txn.event = event;
  CancelToken token = close_source_.token();
  if (!QuotaLease::Acquire(&rows_quota_, rows, token, &txn.rows).ok()) return;
  uint64_t bytes = std::max<uint64_t>(event->ApproximateBytes(), 1);
  if (!QuotaLease::Acquire(&bytes_quota_, bytes, token, &txn.bytes).ok()) return;
  std::vector<uint64_t> keys = ConflictKeys(*event);
  txn.seq = orderer_.Register(event);
  // Grouped as the statement builder groups rows.
  const auto table = static_cast<uint64_t>(StatementTableOf(*event));
  detector_.Add(std::move(keys), std::move(txn), rows, table);
}

void MysqlSink::RunWorker(size_t index, const StopToken& stop) {
  Worker* worker = workers_[index].get();
  std::vector<Detector::Ticket*> batch;
  std::vector<FlushOrderer::Written> written;
  while (true) {
    batch.clear();
    if (!detector_.Pop(index, static_cast<size_t>(config_.max_txn_row), &batch)) break;
    if (failed()) continue;  // Abandoned: the detector frees them on destruction.
    Status st = WriteBatch(worker, batch, stop);
    if (!st.ok()) {
      Fail(st);
      continue;
    }
    // The whole batch under one lock of each: the detector's is shared with
    // AddDmlEvent() and every worker.
    written.clear();
    uint64_t rows = 0;
    for (Detector::Ticket* t : batch) {
      written.push_back({t->item.event->dispatcher_id, t->item.seq});
      rows += t->weight;
    }
    counters_.rows.fetch_add(rows, std::memory_order_relaxed);
    detector_.Finish(batch);  // Deletes the tickets, releasing their quota.
    orderer_.Done(written);
    counters_.txns.fetch_add(batch.size(), std::memory_order_relaxed);
    counters_.batches.fetch_add(1, std::memory_order_relaxed);
    MutexLock lock(&mu_);
    progress_.SignalAll();
  }
  worker->conn.reset();
  worker->conn_id.store(0);
}

void MysqlSink::Fail(const Status& st) {
  MutexLock lock(&mu_);
  if (status_.ok()) {
    status_ = st;
    LOG_ERROR("mysql sink: changefeed {} failed: {} {}", options_.changefeed_id,
              CodeName(st.code()), RedactText(st.message()));
  }
  failed_.store(true, std::memory_order_release);
  progress_.SignalAll();
}

Status MysqlSink::status() const {
  MutexLock lock(&mu_);
  return status_;
}

void MysqlSink::AddCheckpointTs(Ts ts) {
  uint64_t prev = checkpoint_.load();
  while (ts.value() > prev && !checkpoint_.compare_exchange_weak(prev, ts.value())) {
  }
  // Later events have commit ts > checkpoint; none is below the replicating
  // ts once checkpoint + 1 reaches it.
  if (prev + 1 < replicating_ts_.value() && ts.value() + 1 >= replicating_ts_.value()) {
    LOG_INFO("mysql sink: changefeed {} checkpoint {} passed replicating ts {}, safe mode off",
             options_.changefeed_id, ts.value(), replicating_ts_.value());
  }
}

bool MysqlSink::in_startup_safe_mode() const {
  return checkpoint_.load() + 1 < replicating_ts_.value();
}

void MysqlSink::Close() {
  {
    MutexLock lock(&mu_);
    if (closed_) return;
    closed_ = true;
    closing_.store(true);
    // Write what is queued unless the sink failed.
    while (detector_.pending() > 0 && !failed()) progress_.Wait(&mu_);
  }
  close_source_.Cancel();
  detector_.Close();
  rows_quota_.Close();
  bytes_quota_.Close();
  threads_.Stop();
  orderer_.Abandon();
  MutexLock lock(&control_mu_);
  control_.reset();
  control_id_.store(0);
}

MysqlSinkStats MysqlSink::stats() const {
  MysqlSinkStats s;
  s.rows_written = counters_.rows.load();
  s.txns_written = counters_.txns.load();
  s.batches_written = counters_.batches.load();
  s.safe_mode_batches = counters_.safe_batches.load();
  s.ddls_executed = counters_.ddls.load();
  s.ddls_skipped = counters_.ddls_skipped.load();
  s.retries = counters_.retries.load();
  s.reconnects = counters_.reconnects.load();
  s.fence_waits = counters_.fence_waits.load();
  return s;
}

std::vector<uint64_t> MysqlSink::ConnectionIds() const {
  std::vector<uint64_t> ids;
  if (uint64_t id = control_id_.load(); id != 0) ids.push_back(id);
  for (const auto& w : workers_) {
    if (uint64_t id = w->conn_id.load(); id != 0) ids.push_back(id);
  }
  return ids;
}

Result<std::vector<TableRecovery>> MysqlSink::GetTableRecoveryInfo(
    const std::vector<int64_t>& table_ids, const std::vector<Ts>& start_ts) {
  MutexLock lock(&control_mu_);
  RETURN_IF_ERROR(EnsureControlConnection());
  if (!config_.enable_ddl_ts) {
    std::vector<TableRecovery> out;
    for (size_t i = 0; i < table_ids.size() && i < start_ts.size(); ++i) {
      out.push_back(TableRecovery{table_ids[i], start_ts[i]});
    }
    return out;
  }
  Result<std::vector<TableRecovery>> r = ddl_ts_.Recovery(control_.get(), table_ids, start_ts);
  if (!r.ok() && IsConnectionError(control_->last_errno())) control_.reset();
  return r;
}

Status MysqlSink::RemoveDdlTsRows() {
  MutexLock lock(&control_mu_);
  RETURN_IF_ERROR(EnsureControlConnection());
  Status st = ddl_ts_.RemoveAll(control_.get());
  if (!st.ok() && IsConnectionError(control_->last_errno())) control_.reset();
  return st;
}

}  // namespace sluice::sink
