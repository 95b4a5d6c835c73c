// Workload: setup, DML steps, long transactions, the runner thread and
// pre-generated transactions. DDL scheduling is in workload_ddl.cc.
#include "simkv/workload.h"

#include <algorithm>
#include <chrono>
#include <utility>

namespace sluice::simkv {

namespace {

DdlRunnerOptions RunnerOptions(const WorkloadOptions& o) {
  DdlRunnerOptions r;
  r.intermediate_states = o.ddl_intermediate_states;
  r.lock_ttl_ms = o.lock_ttl_ms;
  return r;
}

DmlOptions GeneratorOptions(const WorkloadOptions& o) {
  DmlOptions d = o.dml;
  d.values.pad_width = o.row_width;
  d.key_space = std::max<int64_t>(d.key_space, 1);
  return d;
}

// Derives independent seeds for the value generator and the decisions.
uint64_t SubSeed(uint64_t seed, uint64_t salt) {
  WorkloadRng rng(seed ^ (salt * 0x9E3779B97F4A7C15ULL));
  return rng.Next();
}

}  // namespace

Workload::Workload(MvccStore* store, TsoAllocator* tso, WorkloadOptions options)
    : options_(std::move(options)),
      clock_(options_.clock != nullptr ? options_.clock : Clock::Real()),
      catalog_(options_.first_global_id),
      executor_(store, tso, options_.max_attempts),
      ddl_(&catalog_, &executor_, RunnerOptions(options_)),
      dml_(GeneratorOptions(options_), SubSeed(options_.seed, 1)),
      rng_(SubSeed(options_.seed, 2)) {
  MutexLock lock(&mu_);
  if (options_.before_prewrite) executor_.set_before_prewrite_hook(options_.before_prewrite);
}

Workload::~Workload() { Stop().IgnoreError(); }

Status Workload::Setup() {
  MutexLock lock(&mu_);
  return SetupLocked();
}

Status Workload::SetupLocked() {
  if (setup_done_) return Status::Ok();
  RETURN_IF_ERROR(ddl_.Bootstrap());
  ASSIGN_OR_RETURN(model::Job job, ddl_.CreateDatabase(options_.database));
  jobs_.push_back(job);
  ++stats_.ddls;
  primary_db_ = job.schema_id;
  RETURN_IF_ERROR(CreateInitialTables());
  setup_done_ = true;
  return Status::Ok();
}

Status Workload::CreateInitialTables() {
  std::vector<std::pair<TableShape, std::string>> tables;
  if (options_.kitchen_sink_table) tables.push_back({TableShape::kKitchenSink, "kitchen_sink"});
  for (int i = 0; i < options_.narrow_tables; ++i) {
    tables.push_back({TableShape::kNarrow, NewName("t")});
  }
  if (options_.clustered_table) tables.push_back({TableShape::kClustered, NewName("t")});
  if (options_.partitioned_tables) {
    tables.push_back({TableShape::kRangePartitioned, NewName("t")});
    tables.push_back({TableShape::kHashPartitioned, NewName("t")});
  }
  for (auto& [shape, name] : tables) {
    DdlRequest request;
    request.kind = DdlKind::kCreateTable;
    request.shape = shape;
    request.name = name;
    RETURN_IF_ERROR(RunDdlLocked(request).status());
  }
  return Status::Ok();
}

Status Workload::Step() {
  MutexLock lock(&mu_);
  RETURN_IF_ERROR(SetupLocked());
  ++stats_.steps;
  RETURN_IF_ERROR(CommitDueLongTxns());
  if (DdlDue()) return ScheduledDdl();
  return DmlStep();
}

Status Workload::DmlStep() {
  ASSIGN_OR_RETURN(PreparedTxn txn, dml_.Next());
  if (txn.mutations.empty()) return Status::Ok();
  ++dml_since_ddl_;
  if (rng_.Chance(options_.abort_fraction)) {
    ASSIGN_OR_RETURN(OpenTxn open, executor_.PrewriteOnly(txn.mutations, options_.lock_ttl_ms));
    RETURN_IF_ERROR(executor_.RollbackOpen(open));
    ++stats_.aborted;
    return Status::Ok();
  }
  if (rng_.Chance(options_.long_txn_fraction)) {
    LongTxn lt;
    ASSIGN_OR_RETURN(lt.open, executor_.PrewriteOnly(txn.mutations, options_.long_txn_ttl_ms));
    lt.due_step = stats_.steps + options_.long_txn_hold;
    lt.due_time = clock_->Now() + options_.long_txn_hold_time;
    dml_.Reserve(txn);
    lt.txn = std::move(txn);
    long_txns_.push_back(std::move(lt));
    ++stats_.long_opened;
    return Status::Ok();
  }
  return CommitTxn(std::move(txn), rng_.Chance(options_.one_pc_fraction));
}

Result<Ts> Workload::AbandonTxn(bool commit_primary, uint64_t lock_ttl_ms) {
  MutexLock lock(&mu_);
  RETURN_IF_ERROR(SetupLocked());
  ASSIGN_OR_RETURN(PreparedTxn txn, dml_.Next());
  if (txn.mutations.empty()) return NotFound("workload: no transaction to abandon");
  ASSIGN_OR_RETURN(OpenTxn open, executor_.PrewriteOnly(txn.mutations, lock_ttl_ms));
  // Reserved for good: the generator never learns how the rows ended.
  dml_.Reserve(txn);
  if (commit_primary) RETURN_IF_ERROR(executor_.CommitPrimaryOnly(open).status());
  ++stats_.abandoned;
  return open.start_ts;
}

Status Workload::CommitTxn(PreparedTxn txn, bool one_pc) {
  TxnOptions opts;
  opts.one_pc = one_pc;
  opts.lock_ttl_ms = options_.lock_ttl_ms;
  uint64_t retries = executor_.stats().conflict_retries;
  ASSIGN_OR_RETURN(TxnOutcome outcome, executor_.Commit(txn.mutations, opts));
  stats_.conflict_retries += executor_.stats().conflict_retries - retries;
  if (one_pc) ++stats_.one_pc;
  dml_.OnCommitted(txn);
  RecordCommitted(std::move(txn.rows), outcome);
  return Status::Ok();
}

void Workload::RecordCommitted(std::vector<RowIntent> rows, const TxnOutcome& outcome) {
  CountCommitted(rows);
  if (options_.record_intents) {
    intents_.push_back(TxnIntent{outcome.start_ts, outcome.commit_ts, std::move(rows)});
  }
}

void Workload::CountCommitted(const std::vector<RowIntent>& rows) {
  ++stats_.txns;
  for (const RowIntent& row : rows) {
    switch (row.op) {
      case RowOp::kInsert:
        ++stats_.rows_inserted;
        break;
      case RowOp::kUpdate:
        ++stats_.rows_updated;
        break;
      case RowOp::kDelete:
        ++stats_.rows_deleted;
        break;
    }
  }
}

Status Workload::CommitLong(LongTxn* lt) {
  ASSIGN_OR_RETURN(TxnOutcome outcome, executor_.CommitOpen(lt->open));
  dml_.Release(lt->txn);
  dml_.OnCommitted(lt->txn);
  ++stats_.long_committed;
  RecordCommitted(std::move(lt->txn.rows), outcome);
  return Status::Ok();
}

Status Workload::CommitLongIf(const std::function<bool(const LongTxn&)>& pred) {
  std::vector<LongTxn> keep;
  Status st;
  for (LongTxn& lt : long_txns_) {
    if (st.ok() && pred(lt)) {
      st = CommitLong(&lt);
      continue;
    }
    keep.push_back(std::move(lt));
  }
  long_txns_ = std::move(keep);
  return st;
}

Status Workload::CommitDueLongTxns() {
  Clock::TimePoint now = clock_->Now();
  uint64_t steps = stats_.steps;
  return CommitLongIf(
      [&](const LongTxn& lt) { return steps >= lt.due_step && now >= lt.due_time; });
}

Status Workload::CommitLongTxnsOn(const std::vector<int64_t>& table_ids) {
  return CommitLongIf([&](const LongTxn& lt) {
    return std::any_of(lt.txn.rows.begin(), lt.txn.rows.end(), [&](const RowIntent& row) {
      return std::find(table_ids.begin(), table_ids.end(), row.table_id) != table_ids.end();
    });
  });
}

Status Workload::CommitLongTxns() {
  MutexLock lock(&mu_);
  return CommitLongIf([](const LongTxn&) { return true; });
}

Status Workload::Run(const RunLimit& limit, const CancelToken& token) {
  Clock::TimePoint start = clock_->Now();
  for (uint64_t i = 0; limit.steps == 0 || i < limit.steps; ++i) {
    if (token.cancelled()) break;
    if (limit.duration.count() > 0 && clock_->Now() - start >= limit.duration) break;
    if (options_.rate > 0) {
      auto offset = std::chrono::duration<double>(static_cast<double>(i) / options_.rate);
      Clock::TimePoint next = start + std::chrono::duration_cast<Clock::Duration>(offset);
      if (!clock_->SleepUntil(next, token)) break;
    }
    RETURN_IF_ERROR(Step());
  }
  return Status::Ok();
}

void Workload::Start(RunLimit limit) {
  {
    MutexLock lock(&mu_);
    running_ = true;
  }
  thread_ = std::make_unique<OwnedThread>();
  thread_->Start("simkv-workload", [this, limit](StopToken token) {
    Status st = Run(limit, token);
    MutexLock lock(&mu_);
    run_status_ = st;
    running_ = false;
  });
}

bool Workload::Running() const {
  MutexLock lock(&mu_);
  return running_;
}

Status Workload::Wait() {
  if (thread_ != nullptr) thread_->Join();
  MutexLock lock(&mu_);
  return run_status_;
}

Status Workload::Stop() {
  if (thread_ != nullptr) thread_->Stop();
  MutexLock lock(&mu_);
  return run_status_;
}

Result<std::vector<PreparedTxn>> Workload::Pregenerate(size_t n) {
  MutexLock lock(&mu_);
  RETURN_IF_ERROR(SetupLocked());
  std::vector<PreparedTxn> out;
  out.reserve(n);
  while (out.size() < n) {
    ASSIGN_OR_RETURN(PreparedTxn txn, dml_.Next());
    if (txn.mutations.empty()) return Unavailable("workload: no table to write");
    dml_.OnCommitted(txn);
    if (!options_.record_intents) {
      for (RowIntent& row : txn.rows) {
        row.column_ids.clear();
        row.values.clear();
      }
    }
    out.push_back(std::move(txn));
  }
  return out;
}

Status Workload::Apply(const PreparedTxn& txn) {
  MutexLock lock(&mu_);
  TxnOptions opts;
  opts.one_pc = options_.one_pc_fraction >= 1;
  opts.lock_ttl_ms = options_.lock_ttl_ms;
  ASSIGN_OR_RETURN(TxnOutcome outcome, executor_.Commit(txn.mutations, opts));
  if (opts.one_pc) ++stats_.one_pc;
  if (options_.record_intents) {
    RecordCommitted(txn.rows, outcome);
  } else {
    CountCommitted(txn.rows);
  }
  return Status::Ok();
}

WorkloadStats Workload::stats() const {
  MutexLock lock(&mu_);
  return stats_;
}

std::vector<TxnIntent> Workload::intents() const {
  MutexLock lock(&mu_);
  return intents_;
}

std::vector<model::Job> Workload::jobs() const {
  MutexLock lock(&mu_);
  return jobs_;
}

WorkloadTable Workload::TableView(int64_t table_id) const {
  const TidbCatalog::TableEntry* entry = catalog_.FindTable(table_id);
  const model::DBInfo* db = catalog_.FindDatabase(entry->db_id);
  return WorkloadTable{db->name.original, entry->db_id, entry->info};
}

std::vector<WorkloadTable> Workload::Tables() const {
  MutexLock lock(&mu_);
  std::vector<WorkloadTable> out;
  for (int64_t id : catalog_.UserTables()) out.push_back(TableView(id));
  return out;
}

std::optional<WorkloadTable> Workload::FindTable(std::string_view database,
                                                 std::string_view table) const {
  MutexLock lock(&mu_);
  const model::DBInfo* db = catalog_.FindDatabaseByName(database);
  if (db == nullptr) return std::nullopt;
  const TidbCatalog::TableEntry* entry = catalog_.FindTableByName(db->id, table);
  if (entry == nullptr) return std::nullopt;
  return TableView(entry->info.id);
}

}  // namespace sluice::simkv
