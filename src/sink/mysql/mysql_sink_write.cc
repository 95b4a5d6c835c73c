// The write paths of MysqlSink: DML batches on the workers, DDLs on the
// control connection, both with in-place retries.
#include <fmt/format.h>

#include <algorithm>

#include "common/logging.h"
#include "sink/mysql/ddl_rewrite.h"
#include "sink/mysql/mysql_error.h"
#include "sink/mysql/mysql_sink.h"

namespace sluice::sink {

namespace {

bool NeedsUseDatabase(const event::DdlEvent& ddl) {
  return !ddl.schema_name.empty() && ddl.type != model::ActionType::kCreateSchema &&
         ddl.type != model::ActionType::kDropSchema;
}

}  // namespace

DmlBuildOptions MysqlSink::BuildOptions(const MysqlConnection& conn) const {
  DmlBuildOptions o;
  o.flavor = conn.flavor();
  o.batch = config_.batch_dml;
  o.max_rows_per_statement = static_cast<size_t>(config_.max_txn_row);
  // Leave room for escaping and for the other statements of the batch.
  o.max_statement_bytes = std::clamp<size_t>(conn.max_allowed_packet() / 4, 16 << 10, 8 << 20);
  return o;
}

Result<MysqlConnection*> MysqlSink::WorkerConnection(Worker* worker) {
  if (worker->conn == nullptr) {
    ASSIGN_OR_RETURN(worker->conn, MysqlConnection::Connect(config_.connect));
    worker->conn_id.store(worker->conn->connection_id());
    // The id is the downstream's thread id (processlist, general log): it
    // tells which node a write came from.
    LOG_INFO("mysql sink: changefeed {} worker {} connected; connection_id={}",
             options_.changefeed_id, worker->index, worker->conn->connection_id());
    if (worker->connected_once) counters_.reconnects.fetch_add(1, std::memory_order_relaxed);
    worker->connected_once = true;
  }
  return worker->conn.get();
}

Status MysqlSink::ExecuteTxn(MysqlConnection* conn, const std::vector<std::string>& statements,
                             unsigned* errnum) {
  *errnum = 0;
  size_t total = 32;
  for (const std::string& s : statements) total += s.size() + 1;
  // The write permit is asked right before what commits is sent; the fence
  // guard travels with the COMMIT, so a later generation's claim stops the
  // commit even when this process paused after asking.
  const std::shared_ptr<const EpochFence> fence = this->fence();
  const std::string commit =
      fence->enabled() ? fence->guard_sql() + ";COMMIT" : std::string("COMMIT");
  Status st;
  if (config_.multi_stmt && total < conn->max_allowed_packet() / 2) {
    // One round trip (TiCDC multiStmtExecute).
    std::string sql = "BEGIN;";
    sql.reserve(total + commit.size());
    for (const std::string& s : statements) {
      sql += s;
      sql += ';';
    }
    sql += commit;
    RETURN_IF_ERROR(CheckWritePermit(options_.write_permit));
    st = conn->Execute(sql);
  } else {
    RETURN_IF_ERROR(CheckWritePermit(options_.write_permit));
    st = conn->Execute("BEGIN");
    for (size_t i = 0; st.ok() && i < statements.size(); ++i) st = conn->Execute(statements[i]);
    if (st.ok()) {
      // Asked again: the statements so far are rolled back if it is refused.
      st = CheckWritePermit(options_.write_permit);
      if (!st.ok()) {
        conn->Execute("ROLLBACK").IgnoreError();
        return st;
      }
      st = conn->Execute(commit);
    }
  }
  *errnum = st.ok() ? 0 : conn->last_errno();
  if (!st.ok() && !IsConnectionError(*errnum)) conn->Execute("ROLLBACK").IgnoreError();
  return st;
}

Status MysqlSink::WriteBatch(Worker* worker, const std::vector<Detector::Ticket*>& batch,
                             const StopToken& stop) {
  const event::DmlEvent& first = *batch.front()->item.event;
  const event::DmlEvent& last = *batch.back()->item.event;
  auto context = [&] {
    return fmt::format("mysql sink: writing {} transaction(s) at commit ts {}..{} (first table {})",
                       batch.size(), first.commit_ts.value(), last.commit_ts.value(),
                       first.schema ? first.schema->QuotedName() : std::string("?"));
  };
  bool dup_retried = false;
  worker->backoff.Reset();
  for (int attempt = 1;; ++attempt) {
    bool error_safe = clock_->Now() < worker->error_safe_until;
    std::vector<BatchItem> items;
    bool any_safe = false;
    for (Detector::Ticket* t : batch) {
      const event::DmlEvent* e = t->item.event.get();
      bool safe = config_.safe_mode || error_safe || e->commit_ts < replicating_ts_;
      any_safe = any_safe || safe;
      items.push_back(BatchItem{e, safe});
    }
    Result<MysqlConnection*> conn = WorkerConnection(worker);
    Status st = conn.status();
    unsigned errnum = 0;
    const uint64_t attempt_epoch = fence()->epoch();
    if (conn.ok()) {
      std::vector<std::string> statements;
      st = BuildDmlStatements(items, BuildOptions(**conn), &statements);
      if (!st.ok()) return st.WithContext(context());  // Data the downstream cannot take.
      st = ExecuteTxn(*conn, statements, &errnum);
      if (!st.ok() && errnum == 0 && st.code() == Code::kStaleOwner) {
        return st.WithContext(context());  // Refused by the write permit.
      }
    }
    if (st.ok()) {
      if (any_safe) counters_.safe_batches.fetch_add(1, std::memory_order_relaxed);
      return Status::Ok();
    }
    if (conn.ok() && IsConnectionError(errnum)) {
      worker->conn.reset();
      worker->conn_id.store(0);
    }
    if (errnum == mysql_errnum::kDupEntry && fence()->enabled()) {
      // Maybe the fence guard: a later generation owns the changefeed (or
      // this sink adopted a newer epoch while the transaction was sent).
      Status stale = fence()->Check(*conn);
      if (!stale.ok()) {
        if (AwaitAdoption(attempt_epoch, stop)) continue;
        return stale.WithContext(context());
      }
    }
    if (errnum == mysql_errnum::kDupEntry && !error_safe && !dup_retried) {
      // TiCDC: a duplicate key means rows were written before; go to safe
      // mode for a while and retry at once.
      LOG_WARN("mysql sink: worker {} duplicate entry, retrying in safe mode", worker->index);
      worker->error_safe_until = clock_->Now() + options_.error_safe_mode_duration;
      dup_retried = true;
      continue;
    }
    // A failed connect keeps only its Status (e.g. access denied is fatal).
    bool retryable = conn.ok() ? IsRetryableDmlError(errnum) : st.retryable();
    if (!retryable || attempt >= options_.dml_max_retry) return st.WithContext(context());
    counters_.retries.fetch_add(1, std::memory_order_relaxed);
    Clock::Duration delay = worker->backoff.Next();
    LOG_WARN("mysql sink: worker {} attempt {} failed ({} {}), retrying in {} ms", worker->index,
             attempt, CodeName(st.code()), RedactText(st.message()),
             std::chrono::duration_cast<std::chrono::milliseconds>(delay).count());
    if (!clock_->SleepFor(delay, stop)) return Cancelled("mysql sink: stopped while retrying");
  }
}

Status MysqlSink::WriteBlockEvent(const event::DdlEvent& ddl) {
  MutexLock lock(&control_mu_);
  RETURN_IF_ERROR(status());
  if (closing_.load()) return Cancelled("mysql sink: closed");
  Backoff backoff(options_.backoff, 0xdd1);
  for (int attempt = 1;; ++attempt) {
    bool skipped = false;
    const uint64_t attempt_epoch = fence()->epoch();
    Status st = EnsureControlConnection();
    bool connected = st.ok();
    unsigned errnum = 0;
    if (connected) {
      st = WriteDdlOnce(ddl, &skipped);
      if (!st.ok()) errnum = control_->last_errno();
    }
    if (st.ok()) {
      (skipped ? counters_.ddls_skipped : counters_.ddls).fetch_add(1);
      return Status::Ok();
    }
    if (control_ != nullptr && IsConnectionError(errnum)) {
      control_.reset();
      control_id_.store(0);
    }
    if (st.code() == Code::kStaleOwner && fence()->enabled() &&
        AwaitAdoption(attempt_epoch, close_source_.token())) {
      continue;  // Adopted by the generation that claimed the changefeed.
    }
    // errnum 0 with a connection: the failure was not the server's (e.g. a
    // corrupt ddl_ts row): not retried.
    bool retryable = connected ? (errnum != 0 && IsRetryableDdlError(errnum)) : st.retryable();
    if (!retryable || attempt >= options_.ddl_max_retry) {
      Status failed = st.WithContext(fmt::format("mysql sink: DDL (job {}) at commit ts {} failed",
                                                 ddl.job_id, ddl.finished_ts.value()));
      Fail(failed);
      return failed;
    }
    counters_.retries.fetch_add(1, std::memory_order_relaxed);
    LOG_WARN("mysql sink: DDL job {} attempt {} failed ({}), retrying", ddl.job_id, attempt,
             CodeName(st.code()));
    if (!clock_->SleepFor(backoff.Next(), close_source_.token())) {
      return Cancelled("mysql sink: closed while retrying a DDL");
    }
  }
}

Status MysqlSink::WriteDdlOnce(const event::DdlEvent& ddl, bool* skipped) {
  MysqlConnection* conn = control_.get();
  const bool tidb = conn->flavor() == SqlFlavor::kTiDb;
  if (!tidb && IsTiDbOnlyDdl(ddl.type)) {
    LOG_INFO("mysql sink: skip TiDB-only DDL job {} for a non-TiDB downstream", ddl.job_id);
    *skipped = true;
    return Status::Ok();
  }
  std::vector<int64_t> ids = DdlTsTableIds(ddl);
  if (config_.enable_ddl_ts) {
    ASSIGN_OR_RETURN(bool done, ddl_ts_.AlreadyExecuted(conn, ids, ddl.finished_ts));
    if (done) {
      LOG_INFO("mysql sink: DDL job {} at {} already executed downstream, skipped", ddl.job_id,
               ddl.finished_ts.value());
      *skipped = true;
      return Status::Ok();
    }
    RETURN_IF_ERROR(ddl_ts_.WriteStarted(conn, ids, ddl.finished_ts));
  }
  std::string query = tidb ? ddl.query : RewriteDdlForMysql(ddl.query);
  if (NeedsUseDatabase(ddl)) {
    std::string use = "USE ";
    AppendQuotedName(ddl.schema_name, &use);
    RETURN_IF_ERROR(conn->Execute(use));
  }
  if (!query.empty()) {
    RETURN_IF_ERROR(fence()->Check(conn));
    RETURN_IF_ERROR(CheckWritePermit(options_.write_permit));
    Status st = conn->Execute(query);
    if (!st.ok()) {
      if (!IsIgnorableDdlError(conn->last_errno())) return st;
      LOG_INFO("mysql sink: DDL job {} failed with ignorable error {} (already applied)",
               ddl.job_id, conn->last_errno());
    }
  }
  LOG_INFO("mysql sink: executed DDL job {} at {}: {}", ddl.job_id, ddl.finished_ts.value(),
           RedactText(query));
  if (config_.enable_ddl_ts) {
    RETURN_IF_ERROR(ddl_ts_.WriteFinished(conn, ids, ddl.finished_ts, ddl.tables_to_drop));
  }
  return Status::Ok();
}

}  // namespace sluice::sink
