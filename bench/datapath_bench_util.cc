#include <fmt/format.h>
#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>

#include "codec/tablecodec.h"
#include "common/memcomparable.h"
#include "common/tso.h"
#include "datapath_bench.h"
#include "node/sink_opener.h"

namespace sluice::bench {

double SecondsSince(SteadyClock::time_point since) {
  return std::chrono::duration<double>(SteadyClock::now() - since).count();
}

double ThreadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

namespace {

double TvSeconds(const timeval& tv) {
  return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) * 1e-6;
}

// "cdc-scan-1" -> "cdc-scan", "es-write-0-1" -> "es-write".
std::string ThreadKind(std::string name) {
  while (!name.empty() && (std::isdigit(static_cast<unsigned char>(name.back())) ||
                           name.back() == '-' || name.back() == '_')) {
    name.pop_back();
  }
  return name.empty() ? "?" : name;
}

bool IsSimkvKind(const std::string& kind) {
  // grpcpp_sync_ser: the synchronous gRPC server threads, which only simkv
  // (its stores and PD) runs; the puller is an asynchronous client.
  // bench-writer: the workload's writer (the upstream's clients).
  return kind == "cdc-scan" || kind == "cdc-writer" || kind == "cdc-rts" ||
         kind == "grpcpp_sync_ser" || kind == "bench-writer";
}

cpu_set_t OneCpu(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (cpu >= 0) {
    CPU_SET(cpu, &set);
  } else {
    for (int i = 0; i < CPU_SETSIZE && i < static_cast<int>(sysconf(_SC_NPROCESSORS_CONF)); ++i) {
      CPU_SET(i, &set);
    }
  }
  return set;
}

// (tid, name) of every thread of `pid` (0: this process).
std::vector<std::pair<pid_t, std::string>> Tasks(pid_t pid) {
  std::vector<std::pair<pid_t, std::string>> out;
  std::string dir = pid == 0 ? "/proc/self/task" : fmt::format("/proc/{}/task", pid);
  std::error_code ec;
  for (const auto& task : std::filesystem::directory_iterator(dir, ec)) {
    std::ifstream comm(task.path() / "comm");
    std::string name;
    std::getline(comm, name);
    out.emplace_back(static_cast<pid_t>(std::stol(task.path().filename().string())), name);
  }
  return out;
}

}  // namespace

bool IsSimkvThreadName(const std::string& name) { return IsSimkvKind(ThreadKind(name)); }

Status PinThreads(int path_cpu, int simkv_cpu) {
  for (const auto& [tid, name] : Tasks(0)) {
    cpu_set_t set = OneCpu(IsSimkvThreadName(name) ? simkv_cpu : path_cpu);
    if (sched_setaffinity(tid, sizeof(set), &set) != 0 && errno != ESRCH) {
      return Internal(fmt::format("pin thread {} ({}): {}", tid, name, std::strerror(errno)));
    }
  }
  return Status::Ok();
}

std::string PinReport(int path_cpu, int simkv_cpu) {
  int pinned = 0;
  std::string misplaced;
  int misplaced_count = 0;
  for (const auto& [tid, name] : Tasks(0)) {
    cpu_set_t want = OneCpu(IsSimkvThreadName(name) ? simkv_cpu : path_cpu);
    cpu_set_t have;
    CPU_ZERO(&have);
    if (sched_getaffinity(tid, sizeof(have), &have) != 0) continue;  // Ended.
    if (CPU_EQUAL(&want, &have)) {
      ++pinned;
    } else {
      ++misplaced_count;
      misplaced += " " + name;
    }
  }
  return fmt::format("pinned={} misplaced={}{}", pinned, misplaced_count, misplaced);
}

Status PinProcess(pid_t pid, int cpu) {
  cpu_set_t set = OneCpu(cpu);
  for (const auto& [tid, name] : Tasks(pid)) {
    if (sched_setaffinity(tid, sizeof(set), &set) != 0 && errno != ESRCH) {
      return Internal(fmt::format("pin {} thread {}: {}", pid, tid, std::strerror(errno)));
    }
  }
  return Status::Ok();
}

CpuSnapshot CpuSnapshot::Now() {
  CpuSnapshot out;
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  out.process_s = TvSeconds(ru.ru_utime) + TvSeconds(ru.ru_stime);
  for (auto& [tid, name] : Tasks(0)) {
    // schedstat: nanoseconds on the CPU, first field (exact, unlike the
    // clock-tick counts of stat).
    std::ifstream sched(fmt::format("/proc/self/task/{}/schedstat", tid));
    uint64_t ns = 0;
    if (!(sched >> ns)) continue;
    out.threads[tid] = {std::move(name), static_cast<double>(ns) * 1e-9};
  }
  return out;
}

CpuUse CpuSince(const CpuSnapshot& start, double extra_simkv_s) {
  return CpuBetween(start, CpuSnapshot::Now(), extra_simkv_s);
}

CpuUse CpuBetween(const CpuSnapshot& start, const CpuSnapshot& now, double extra_simkv_s) {
  CpuUse use;
  use.total_s = now.process_s - start.process_s;
  std::map<std::string, double> by_kind;
  double attributed = 0;
  for (const auto& [tid, thread] : now.threads) {
    auto it = start.threads.find(tid);
    double used = thread.second - (it != start.threads.end() ? it->second.second : 0);
    if (used <= 0) continue;
    std::string kind = ThreadKind(thread.first);
    by_kind[kind] += used;
    attributed += used;
    if (IsSimkvKind(kind)) use.simkv_s += used;
  }
  if (extra_simkv_s > 0) {
    use.simkv_s += extra_simkv_s;
    by_kind["bench-writer"] += extra_simkv_s;
    attributed += extra_simkv_s;
  }
  // Threads that ended within the interval (and tick rounding).
  if (use.total_s - attributed > 0.005) by_kind["(ended/other)"] += use.total_s - attributed;
  std::vector<std::pair<std::string, double>> sorted(by_kind.begin(), by_kind.end());
  std::sort(sorted.begin(), sorted.end(),
            [](const auto& a, const auto& b) { return a.second > b.second; });
  for (const auto& [kind, seconds] : sorted) {
    if (seconds < 0.005) continue;
    use.by_thread += fmt::format("{}{}={:.2f}", use.by_thread.empty() ? "" : " ", kind, seconds);
  }
  return use;
}

event::DmlEventPtr CopyEvent(const event::DmlEvent& e) {
  auto copy = std::make_shared<event::DmlEvent>();
  copy->dispatcher_id = e.dispatcher_id;
  copy->physical_table_id = e.physical_table_id;
  copy->schema = e.schema;
  copy->start_ts = e.start_ts;
  copy->commit_ts = e.commit_ts;
  copy->rows = e.rows;
  copy->piece = e.piece;
  copy->last_piece = e.last_piece;
  return copy;
}

void MeteredSink::AddDmlEvent(event::DmlEventPtr event) {
  if (event == nullptr) return;
  if (capture_) {
    event::DmlEventPtr copy = CopyEvent(*event);
    MutexLock lock(&mu_);
    captured_.push_back(std::move(copy));
  }
  size_t rows = event->rows.size();
  Ts commit_ts = event->commit_ts;
  event->AddPostFlush([this, rows, commit_ts] { Flushed(rows, commit_ts); });
  inner()->AddDmlEvent(std::move(event));
}

void MeteredSink::Flushed(size_t rows, Ts commit_ts) {
  int64_t lag_ms = 0;
  const bool lag = record_lag_.load(std::memory_order_relaxed);
  if (lag) {
    auto wall = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::system_clock::now().time_since_epoch());
    lag_ms = wall.count() - tso::Physical(commit_ts);
  }
  const bool first = events_.fetch_add(1) == 0;
  const uint64_t total = rows_.fetch_add(rows) + rows;
  if (!first && !lag && total < wait_for_.load()) return;
  // The time first: the CPU snapshot walks /proc and takes a while.
  const SteadyClock::time_point now = SteadyClock::now();
  CpuSnapshot cpu;
  if (first) cpu = CpuSnapshot::Now();
  MutexLock lock(&mu_);
  if (first) {
    first_flush_ = now;
    first_flush_cpu_ = std::move(cpu);
  }
  if (lag) lags_.push_back(lag_ms);
  if (total >= wait_for_.load()) cv_.SignalAll();
}

Status MeteredSink::WaitRows(uint64_t rows, std::chrono::seconds timeout,
                             const std::function<Status()>& failed) {
  wait_for_.store(rows);
  const auto deadline = SteadyClock::now() + timeout;
  while (true) {
    if (rows_.load() >= rows) return Status::Ok();
    if (sink::Sink* inner = this->inner(); inner != nullptr) RETURN_IF_ERROR(inner->status());
    if (failed) RETURN_IF_ERROR(failed());
    if (SteadyClock::now() >= deadline) {
      return Timeout(fmt::format("{} of {} rows flushed", rows_.load(), rows));
    }
    MutexLock lock(&mu_);
    if (rows_.load() >= rows) return Status::Ok();
    cv_.WaitUntil(&mu_, std::min(deadline, SteadyClock::now() + std::chrono::milliseconds(100)));
  }
}

std::vector<int64_t> MeteredSink::SortedLags() const {
  MutexLock lock(&mu_);
  std::vector<int64_t> out = lags_;
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<event::DmlEventPtr> MeteredSink::TakeCaptured() {
  MutexLock lock(&mu_);
  return std::move(captured_);
}

CpuSnapshot MeteredSink::first_flush_cpu() const {
  MutexLock lock(&mu_);
  return first_flush_cpu_;
}

SteadyClock::time_point MeteredSink::first_flush() const {
  MutexLock lock(&mu_);
  return first_flush_;
}

Result<std::unique_ptr<BenchCluster>> BenchCluster::Start(const Args& args, uint64_t seed,
                                                          const std::string& dir) {
  std::unique_ptr<BenchCluster> c(new BenchCluster());
  c->dir_ = dir;
  c->memory_budget_ = static_cast<size_t>(args.budget_mib) << 20;
  c->timeout_ = std::chrono::seconds(args.timeout_s);
  std::filesystem::create_directories(dir);
  logpuller::testing::PullerEnvOptions env_options;
  env_options.num_stores = static_cast<size_t>(args.stores);
  env_options.resolved_ts_interval = std::chrono::milliseconds(args.tick_ms);
  if (args.scan_window > 0) {
    env_options.client.scheduler.scan_window_per_store = static_cast<size_t>(args.scan_window);
  }
  if (args.scan_yield_ms >= 0) {
    env_options.client.scan_yield_max = std::chrono::milliseconds(args.scan_yield_ms);
  }
  ASSIGN_OR_RETURN(c->env_, logpuller::testing::PullerEnv::Start(env_options));
  simkv::WorkloadOptions w;
  w.seed = seed;
  w.narrow_tables = args.tables;
  w.kitchen_sink_table = false;
  w.clustered_table = false;
  w.row_width = args.row_width;
  w.dml.rows_per_txn = args.rows_per_txn;
  // Inserts of fresh handles only: the same rows can be written downstream
  // with plain INSERTs, and every row change is one sink row.
  w.dml.key_space = int64_t{1} << 40;
  w.dml.insert_weight = 100;
  w.dml.update_weight = 0;
  w.dml.delete_weight = 0;
  c->workload_ =
      std::make_unique<simkv::Workload>(&c->env_->cluster->mvcc(), &c->env_->cluster->tso(), w);
  RETURN_IF_ERROR(c->workload_->Setup());
  if (!args.one_region) RETURN_IF_ERROR(c->SplitTables());
  std::printf("# simkv: %zu regions\n", c->env_->cluster->regions().size());
  ASSIGN_OR_RETURN(c->start_, c->env_->pd->GetTs());
  return c;
}

BenchCluster::~BenchCluster() {
  workload_.reset();
  if (env_ != nullptr) env_->Stop();
}

Status BenchCluster::SplitTables() {
  simkv::SimCluster& cluster = *env_->cluster;
  for (const simkv::WorkloadTable& table : workload_->Tables()) {
    const std::string prefix = codec::EncodeTablePrefix(TableId(table.info.id));
    const std::string encoded = memcomparable::EncodeBytes(prefix);
    ASSIGN_OR_RETURN(simkv::RegionInfo region, cluster.regions().RegionForKey(encoded));
    if (region.start_key == encoded) continue;  // Starts a region already.
    RETURN_IF_ERROR(cluster.Split(region.id, prefix).status());
  }
  return Status::Ok();
}

namespace {

// The path's handle on a bench-owned MeteredSink: the path closes it when
// it stops; the bench reads the meter after.
class MeterRef final : public sink::Sink {
 public:
  explicit MeterRef(MeteredSink* meter) : meter_(meter) {}
  std::string_view scheme() const override { return meter_->scheme(); }
  void AddDmlEvent(event::DmlEventPtr event) override { meter_->AddDmlEvent(std::move(event)); }
  Status WriteBlockEvent(const event::DdlEvent& ddl) override {
    return meter_->WriteBlockEvent(ddl);
  }
  Status AdoptEpoch(uint64_t epoch) override { return meter_->AdoptEpoch(epoch); }
  Result<std::vector<sink::TableRecovery>> GetTableRecoveryInfo(
      const std::vector<int64_t>& table_ids, const std::vector<Ts>& start_ts) override {
    return meter_->GetTableRecoveryInfo(table_ids, start_ts);
  }
  void AddCheckpointTs(Ts ts) override { meter_->AddCheckpointTs(ts); }
  Status status() const override { return meter_->status(); }
  void Close() override { meter_->Close(); }

 private:
  MeteredSink* const meter_;
};

}  // namespace

Result<std::unique_ptr<testing::ChangefeedRunner>> BenchCluster::StartPath(
    const std::string& sink_uri, MeteredSink* metered, Ts start) {
  testing::RunnerOptions o;
  o.data_dir = fmt::format("{}/path-{}", dir_, ++paths_);
  o.changefeed = fmt::format("default/datapath-bench-{}", paths_);
  o.sink_uri = sink_uri;
  o.start_ts = start;
  o.pd = env_->pd.get();
  o.cache = env_->cache.get();
  o.puller = env_->client.get();
  o.memory_budget = memory_budget_;
  o.open_sink =
      [metered](const node::SinkOpenOptions& options) -> Result<std::unique_ptr<sink::Sink>> {
    ASSIGN_OR_RETURN(std::unique_ptr<sink::Sink> opened, node::OpenSink(options));
    metered->Attach(std::move(opened));
    return std::unique_ptr<sink::Sink>(new MeterRef(metered));
  };
  return testing::ChangefeedRunner::Start(std::move(o));
}

Status BenchCluster::WaitUp(testing::ChangefeedRunner& path) {
  ASSIGN_OR_RETURN(Ts now, env_->pd->GetTs());
  return path.WaitCheckpoint(now, timeout_);
}

Result<std::vector<simkv::PreparedTxn>> BenchCluster::Pregenerate(size_t n, uint64_t* rows) {
  ASSIGN_OR_RETURN(std::vector<simkv::PreparedTxn> txns, workload_->Pregenerate(n));
  *rows = 0;
  for (simkv::PreparedTxn& t : txns) {
    // A handle drawn twice turns an insert into an update (rare: one in
    // 100k rows with seed 4); drop such rows so that every row is new.
    for (size_t i = t.rows.size(); i-- > 0;) {
      if (t.rows[i].op == simkv::RowOp::kInsert || t.rows.size() == 1) continue;
      t.rows.erase(t.rows.begin() + static_cast<ptrdiff_t>(i));
      t.mutations.erase(t.mutations.begin() + static_cast<ptrdiff_t>(i));
    }
    *rows += t.rows.size();
  }
  return txns;
}

Status BenchCluster::ApplyAll(const std::vector<simkv::PreparedTxn>& txns) {
  for (const simkv::PreparedTxn& t : txns) RETURN_IF_ERROR(workload_->Apply(t));
  return Status::Ok();
}

}  // namespace sluice::bench
