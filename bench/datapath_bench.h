// Shared pieces of datapath_bench: the flags, a simkv cluster with the
// TiDB-like workload and the data path on top of it, a metering sink
// wrapper, and CPU accounting by thread. See datapath_bench.cc.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/thread_annotations.h"
#include "datapath/changefeed_runner.h"
#include "event/events.h"
#include "logpuller/puller_test_util.h"
#include "simkv/workload.h"
#include "sink/sink.h"

namespace sluice::bench {

using SteadyClock = std::chrono::steady_clock;

struct Args {
  std::string runs = "catchup,live,lag,mysql";
  size_t txns = 50000;      // Catch-up and live runs.
  int rows_per_txn = 10;    // Rows per transaction (spread over the tables).
  int64_t row_width = 150;  // `pad` bytes; a row carries ~200 bytes of data.
  int tables = 4;           // Narrow tables.
  int stores = 3;           // simkv stores (3 replicas per region).
  // One region for everything; otherwise each table's records start a
  // region of their own, as TiDB's `split-table` (its default) does.
  bool one_region = false;
  int tick_ms = 200;        // simkv resolved-ts interval.
  int64_t budget_mib = 8;   // Per-dispatcher memory budget of the event service.
  double lag_seconds = 15;  // Measured, after lag_warmup_s.
  double lag_warmup_s = 3;
  double lag_rate = 0;  // Rows/s; 0 = lag_fraction of the best measured rate.
  double lag_fraction = 0.5;
  size_t mysql_txns = 10000;
  int mysql_workers = 8;  // Sink worker-count = baseline connections.
  int mysql_batch = 256;  // Sink max-txn-row = baseline rows per transaction.
  int mysql_rounds = 3;   // Rounds of baseline, sink and path runs.
  int timeout_s = 300;    // Bound on every wait.
  // MySQL runs: the path (and the baseline's client) on CPU 0, simkv's
  // threads and the server on CPU 1 (see datapath_bench_mysql.cc).
  bool pin = false;
  // With pin: simkv's threads on CPU 0 too, the server alone on CPU 1.
  bool server_alone = false;
  int scan_window = 0;     // The puller's unfinished initial scans per store (0: its default).
  int scan_yield_ms = -1;  // The puller's scan_yield_max (-1: its default; 0: off).
  std::string dir;         // Scratch directory (default: a temp dir).
};

double SecondsSince(SteadyClock::time_point since);

// CPU time of the process (getrusage) and of each of its threads
// (/proc/self/task), taken at one instant.
struct CpuSnapshot {
  double process_s = 0;
  std::map<pid_t, std::pair<std::string, double>> threads;  // tid -> (name, seconds)
  static CpuSnapshot Now();
};

// CPU used since a snapshot. `simkv_s` is the part of the simulated
// cluster's own threads (cdc-scan, cdc-writer, cdc-rts and the synchronous
// gRPC server's), of a running workload writer (bench-writer) and
// `extra_simkv_s` (the time of a writer thread that has ended).
struct CpuUse {
  double total_s = 0;
  double simkv_s = 0;
  std::string by_thread;  // "name=seconds ..." by thread name, largest first.
};
CpuUse CpuSince(const CpuSnapshot& start, double extra_simkv_s = 0);
// The same between two snapshots.
CpuUse CpuBetween(const CpuSnapshot& start, const CpuSnapshot& end, double extra_simkv_s = 0);
// CPU time of the calling thread.
double ThreadCpuSeconds();

// True for the threads of the simulated cluster (the upstream) and the
// workload's writer, by thread name.
bool IsSimkvThreadName(const std::string& name);
// Pins every thread of this process: simkv's to `simkv_cpu`, the others to
// `path_cpu`. Threads created later inherit their creator's CPU.
Status PinThreads(int path_cpu, int simkv_cpu);
// Counts the threads on the CPUs PinThreads() gave them, and names those
// that are not ("pinned=N misplaced=M [names]").
std::string PinReport(int path_cpu, int simkv_cpu);
// Pins every thread of process `pid` to `cpu`, or to every CPU if cpu < 0.
Status PinProcess(pid_t pid, int cpu);

// A fresh copy of an event's data (no PostFlush callbacks, not flushed).
event::DmlEventPtr CopyEvent(const event::DmlEvent& e);

// Forwards everything to an inner sink and meters what it flushes: rows and
// events flushed, the time of the first and last flush, optionally the lag
// of every event (wall time at PostFlush minus the physical part of its
// commit ts) and copies of the events added (capture). The inner sink is
// borrowed (the constructor's) or owned (Attach()ed when a changefeed path
// opens it, see BenchCluster::StartPath). Close() is forwarded once.
// Thread-safe once the inner sink is set.
class MeteredSink final : public sink::Sink {
 public:
  MeteredSink(sink::Sink* inner, bool capture) : inner_(inner), capture_(capture) {}
  explicit MeteredSink(bool capture) : capture_(capture) {}

  // Takes `inner` as the sink to forward to; call before any other method.
  void Attach(std::unique_ptr<sink::Sink> inner) {
    owned_ = std::move(inner);
    inner_.store(owned_.get(), std::memory_order_release);
  }
  // The inner sink; null until attached.
  sink::Sink* inner() const { return inner_.load(std::memory_order_acquire); }

  std::string_view scheme() const override { return inner()->scheme(); }
  void AddDmlEvent(event::DmlEventPtr event) override;
  Status WriteBlockEvent(const event::DdlEvent& ddl) override {
    return inner()->WriteBlockEvent(ddl);
  }
  Status AdoptEpoch(uint64_t epoch) override { return inner()->AdoptEpoch(epoch); }
  Result<std::vector<sink::TableRecovery>> GetTableRecoveryInfo(
      const std::vector<int64_t>& table_ids, const std::vector<Ts>& start_ts) override {
    return inner()->GetTableRecoveryInfo(table_ids, start_ts);
  }
  void AddCheckpointTs(Ts ts) override { inner()->AddCheckpointTs(ts); }
  Status status() const override { return inner()->status(); }
  void Close() override {
    if (inner() != nullptr && !closed_.exchange(true)) inner()->Close();
  }

  // Waits until `rows` rows are flushed; Timeout otherwise, the inner
  // sink's error, or the error `failed` returns (e.g. the changefeed's:
  // a sink that could not be opened is never attached).
  Status WaitRows(uint64_t rows, std::chrono::seconds timeout,
                  const std::function<Status()>& failed = nullptr) EXCLUDES(mu_);
  void RecordLag(bool on) { record_lag_.store(on); }
  // Lags recorded, in milliseconds, sorted.
  std::vector<int64_t> SortedLags() const EXCLUDES(mu_);
  // Copies of the events added (with capture), in the order added.
  std::vector<event::DmlEventPtr> TakeCaptured() EXCLUDES(mu_);

  uint64_t rows() const { return rows_.load(); }
  uint64_t events() const { return events_.load(); }
  SteadyClock::time_point first_flush() const EXCLUDES(mu_);
  // The process's CPU when the first event was flushed (taken then, on the
  // flushing thread).
  CpuSnapshot first_flush_cpu() const EXCLUDES(mu_);

 private:
  void Flushed(size_t rows, Ts commit_ts) EXCLUDES(mu_);

  std::unique_ptr<sink::Sink> owned_;
  std::atomic<sink::Sink*> inner_{nullptr};
  const bool capture_;
  std::atomic<bool> closed_{false};
  std::atomic<bool> record_lag_{false};
  std::atomic<uint64_t> rows_{0};
  std::atomic<uint64_t> events_{0};
  std::atomic<uint64_t> wait_for_{UINT64_MAX};
  mutable Mutex mu_;
  CondVar cv_;
  SteadyClock::time_point first_flush_ GUARDED_BY(mu_);
  CpuSnapshot first_flush_cpu_ GUARDED_BY(mu_);
  std::vector<int64_t> lags_ GUARDED_BY(mu_);
  std::vector<event::DmlEventPtr> captured_ GUARDED_BY(mu_);
};

// A simkv cluster (logpuller::testing::PullerEnv) with an insert-only
// workload over `tables` narrow tables, and data paths started over it.
// Owns the cluster and the workload; the paths it starts are the caller's
// and must be stopped before it is destroyed. Pregenerate and the workload
// may be used from any thread; the rest from the owner's.
class BenchCluster {
 public:
  static Result<std::unique_ptr<BenchCluster>> Start(const Args& args, uint64_t seed,
                                                     const std::string& dir);
  ~BenchCluster();

  // A changefeed from `start` into `sink_uri` on the shipping node, with its
  // own data directory; the sink the path opens is attached to `metered`,
  // which must outlive the runner.
  Result<std::unique_ptr<testing::ChangefeedRunner>> StartPath(const std::string& sink_uri,
                                                               MeteredSink* metered, Ts start);
  // Waits until a changefeed's checkpoint passes the current TSO (it runs).
  Status WaitUp(testing::ChangefeedRunner& path);

  simkv::Workload& workload() { return *workload_; }
  pd::PdClient& pd() { return *env_->pd; }
  Ts start_ts() const { return start_; }
  std::chrono::seconds timeout() const { return timeout_; }

  // Pre-generates `n` transactions; `rows` gets their row count.
  Result<std::vector<simkv::PreparedTxn>> Pregenerate(size_t n, uint64_t* rows);
  Status ApplyAll(const std::vector<simkv::PreparedTxn>& txns);

 private:
  BenchCluster() = default;
  // Splits simkv's regions so that each table's records start a region.
  Status SplitTables();

  std::unique_ptr<logpuller::testing::PullerEnv> env_;
  std::unique_ptr<simkv::Workload> workload_;
  Ts start_;
  std::string dir_;
  size_t memory_budget_ = 0;
  std::chrono::seconds timeout_{300};
  int paths_ = 0;
};

// The MariaDB part (datapath_bench_mysql.cc): skipped with a message when
// SLUICE_TEST_MYSQL is not set.
Status RunMysql(const Args& args, const std::string& dir);

}  // namespace sluice::bench
