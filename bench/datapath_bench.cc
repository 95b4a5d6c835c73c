// The whole changefeed data path, end to end: simkv (an in-process
// SimCluster with the TiDB-like workload, inserts only, narrow tables, no
// DDL) -> incremental scan / live stream -> puller -> event store -> event
// service -> dispatchers -> sink, on the shipping node (src/node: the real
// maintainer host, maintainer, dispatcher orchestrator and changefeed path;
// tests/datapath/changefeed_runner.h plays the coordinator). The sink is the
// one the path opens from `blackhole://` or the MariaDB URI.
//
//  catchup: N transactions are committed first; the path starts from a ts
//    before them. The clock runs from ChangefeedRunner::Start until the sink
//    has flushed every row. No row reaches the sink before the incremental
//    scan is stored and resolved (`first_row_s`); `deliver_mib_per_s` is the
//    rate after that (event store -> event service -> dispatchers -> sink).
//  live: the path runs first; a writer thread commits the same kind of
//    transactions as fast as it can; the clock runs from the first commit
//    until the sink has flushed every row.
//  lag: a writer commits at lag_fraction of the best rate measured above;
//    after a warm-up, every event's lag (wall time at PostFlush minus the
//    physical part of its commit ts) is recorded.
//  mysql: see datapath_bench_mysql.cc.
// The blackhole runs count row data as BlackholeSink::bytes() does
// (DmlEvent::ApproximateBytes). CPU is the process's (getrusage) over the
// measured interval, so it includes the simulated cluster; `cdc_cpu_s`
// leaves out simkv's own threads (scan, stream writers, resolved-ts ticker,
// gRPC server) and the live writer. In the live run `tail_s` is the time
// from the last commit to the last row flushed: near zero means the writer,
// not the path, set the pace.
//
//   build/bench/datapath_bench [--runs catchup,live,lag,mysql] [--txns N]
//       [--rows-per-txn R] [--row-width B] [--tables T] [--stores S]
//       [--tick-ms MS] [--lag-seconds S] [--lag-rate ROWS_PER_S]
//       [--mysql-txns N] [--mysql-workers W] [--mysql-batch B] [--mysql-rounds K]
//       [--pin [--server-alone]] [--scan-window N] [--scan-yield-ms MS]
#include "datapath_bench.h"

#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <thread>

#include "common/allocator.h"
#include "common/clock.h"
#include "common/lifecycle.h"
#include "common/logging.h"
#include "sink/blackhole/blackhole_sink.h"

namespace sluice::bench {
namespace {

// The blackhole sink a run's changefeed opened (an empty one if it has not
// opened one).
const sink::BlackholeSink& Blackhole(const MeteredSink& metered) {
  static const sink::BlackholeSink kNone;
  const auto* b = dynamic_cast<const sink::BlackholeSink*>(metered.inner());
  return b != nullptr ? *b : kNone;
}

constexpr double kMiB = 1024.0 * 1024.0;

struct Rates {
  double catchup_rows_per_s = 0;
  double live_rows_per_s = 0;
};

void PrintThroughput(const char* name, uint64_t rows, uint64_t events, uint64_t bytes,
                     double seconds, const CpuUse& cpu, const std::string& extra) {
  const double mib = static_cast<double>(bytes) / kMiB;
  const double cdc_cpu = cpu.total_s - cpu.simkv_s;
  std::printf(
      "BENCH %s rows=%llu events=%llu mib=%.1f seconds=%.3f rows_per_s=%.0f mib_per_s=%.2f "
      "cpu_s=%.2f mib_per_cpu_s=%.2f cdc_cpu_s=%.2f mib_per_cdc_cpu_s=%.2f %s\n",
      name, static_cast<unsigned long long>(rows), static_cast<unsigned long long>(events), mib,
      seconds, static_cast<double>(rows) / seconds, mib / seconds, cpu.total_s, mib / cpu.total_s,
      cdc_cpu, cdc_cpu > 0 ? mib / cdc_cpu : 0.0, extra.c_str());
  std::printf("# %s cpu seconds by thread: %s\n", name, cpu.by_thread.c_str());
  std::fflush(stdout);
}

Status RunCatchup(const Args& args, const std::string& dir, Rates* rates) {
  ASSIGN_OR_RETURN(auto cluster, BenchCluster::Start(args, 1, dir + "/catchup"));
  uint64_t rows = 0;
  ASSIGN_OR_RETURN(std::vector<simkv::PreparedTxn> txns, cluster->Pregenerate(args.txns, &rows));
  auto apply_start = SteadyClock::now();
  RETURN_IF_ERROR(cluster->ApplyAll(txns));
  const double apply_s = SecondsSince(apply_start);
  txns.clear();
  ASSIGN_OR_RETURN(Ts end, cluster->pd().GetTs());

  MeteredSink metered(false);
  CpuSnapshot cpu0 = CpuSnapshot::Now();
  auto start = SteadyClock::now();
  ASSIGN_OR_RETURN(auto path, cluster->StartPath("blackhole://", &metered, cluster->start_ts()));
  RETURN_IF_ERROR(metered.WaitRows(rows, cluster->timeout(), [&] { return path->status(); }));
  const double seconds = SecondsSince(start);
  CpuUse cpu = CpuSince(cpu0);
  const double first_row_s = std::chrono::duration<double>(metered.first_flush() - start).count();
  if (metered.events() > 0) {
    std::printf("# datapath_catchup cpu seconds by thread before the first row: %s\n",
                CpuBetween(cpu0, metered.first_flush_cpu()).by_thread.c_str());
  }
  RETURN_IF_ERROR(path->WaitCheckpoint(end, cluster->timeout()));
  const double checkpoint_s = SecondsSince(start);
  path->Stop();
  metered.Close();
  rates->catchup_rows_per_s = static_cast<double>(rows) / seconds;
  PrintThroughput(
      "datapath_catchup", rows, Blackhole(metered).events(), Blackhole(metered).bytes(), seconds,
      cpu,
      fmt::format("first_row_s={:.2f} deliver_mib_per_s={:.1f} checkpoint_s={:.2f} "
                  "simkv_apply_rows_per_s={:.0f}",
                  first_row_s,
                  static_cast<double>(Blackhole(metered).bytes()) / kMiB / (seconds - first_row_s),
                  checkpoint_s, static_cast<double>(rows) / apply_s));
  return Status::Ok();
}

Status RunLive(const Args& args, const std::string& dir, Rates* rates) {
  ASSIGN_OR_RETURN(auto cluster, BenchCluster::Start(args, 2, dir + "/live"));
  uint64_t rows = 0;
  ASSIGN_OR_RETURN(std::vector<simkv::PreparedTxn> txns, cluster->Pregenerate(args.txns, &rows));
  MeteredSink metered(false);
  ASSIGN_OR_RETURN(auto path, cluster->StartPath("blackhole://", &metered, cluster->start_ts()));
  RETURN_IF_ERROR(cluster->WaitUp(*path));

  CpuSnapshot cpu0 = CpuSnapshot::Now();
  auto start = SteadyClock::now();
  std::atomic<double> apply_s{0}, writer_cpu_s{0};
  Status apply_status;
  OwnedThread writer;
  writer.Start("bench-writer", [&](StopToken) {
    apply_status = cluster->ApplyAll(txns);
    apply_s.store(SecondsSince(start));
    writer_cpu_s.store(ThreadCpuSeconds());
  });
  writer.Join();
  RETURN_IF_ERROR(apply_status);
  RETURN_IF_ERROR(metered.WaitRows(rows, cluster->timeout(), [&] { return path->status(); }));
  const double seconds = SecondsSince(start);
  CpuUse cpu = CpuSince(cpu0, writer_cpu_s.load());
  path->Stop();
  metered.Close();
  rates->live_rows_per_s = static_cast<double>(rows) / seconds;
  PrintThroughput(
      "datapath_live", rows, Blackhole(metered).events(), Blackhole(metered).bytes(), seconds, cpu,
      fmt::format("apply_s={:.2f} writer_cpu_s={:.2f}", apply_s.load(), writer_cpu_s.load()));
  return Status::Ok();
}

// Commits transactions at `rows_per_s` (pre-generated in chunks of ~100 ms)
// until stopped; counts the rows committed.
void PacedWriter(BenchCluster& cluster, const Args& args, double rows_per_s,
                 std::atomic<uint64_t>* committed, Status* status, const StopToken& token) {
  const auto interval = std::chrono::duration_cast<Clock::Duration>(
      std::chrono::duration<double>(args.rows_per_txn / rows_per_s));
  const size_t chunk =
      std::max<size_t>(16, static_cast<size_t>(rows_per_s / args.rows_per_txn / 10));
  std::vector<simkv::PreparedTxn> txns;
  size_t next_txn = 0;
  Clock* clock = Clock::Real();
  Clock::TimePoint next = clock->Now();
  while (clock->SleepUntil(next, token)) {
    if (next_txn == txns.size()) {
      uint64_t ignored = 0;
      Result<std::vector<simkv::PreparedTxn>> more = cluster.Pregenerate(chunk, &ignored);
      if (!more.ok()) {
        *status = more.status();
        return;
      }
      txns = std::move(more).value();
      next_txn = 0;
    }
    const simkv::PreparedTxn& txn = txns[next_txn++];
    if (Status s = cluster.workload().Apply(txn); !s.ok()) {
      *status = s;
      return;
    }
    committed->fetch_add(txn.rows.size());
    next += interval;
  }
}

Status RunLag(const Args& args, const std::string& dir, const Rates& rates) {
  // The live rate is the steady state with a writer; catch-up otherwise.
  double best = rates.live_rows_per_s > 0 ? rates.live_rows_per_s : rates.catchup_rows_per_s;
  double rate = args.lag_rate;
  if (rate <= 0) {
    if (best <= 0) return InvalidArgument("lag: give --lag-rate, or run catchup or live first");
    rate = best * args.lag_fraction;
  }
  ASSIGN_OR_RETURN(auto cluster, BenchCluster::Start(args, 3, dir + "/lag"));
  MeteredSink metered(false);
  ASSIGN_OR_RETURN(auto path, cluster->StartPath("blackhole://", &metered, cluster->start_ts()));
  RETURN_IF_ERROR(cluster->WaitUp(*path));

  std::atomic<uint64_t> committed{0};
  Status writer_status;
  OwnedThread writer;
  writer.Start("bench-writer", [&](StopToken token) {
    PacedWriter(*cluster, args, rate, &committed, &writer_status, token);
  });
  std::this_thread::sleep_for(std::chrono::duration<double>(args.lag_warmup_s));
  CpuSnapshot cpu0 = CpuSnapshot::Now();
  const uint64_t committed0 = committed.load(), flushed0 = metered.rows();
  auto start = SteadyClock::now();
  metered.RecordLag(true);
  std::this_thread::sleep_for(std::chrono::duration<double>(args.lag_seconds));
  metered.RecordLag(false);
  const double seconds = SecondsSince(start);
  CpuUse cpu = CpuSince(cpu0);
  const uint64_t committed_rows = committed.load() - committed0;
  const uint64_t flushed_rows = metered.rows() - flushed0;
  writer.Stop();
  path->Stop();
  metered.Close();
  RETURN_IF_ERROR(writer_status);
  RETURN_IF_ERROR(path->status());
  std::vector<int64_t> lags = metered.SortedLags();
  if (lags.empty()) return Internal("lag: no event was flushed while measuring");
  auto at = [&lags](double q) {
    return lags[std::min(lags.size() - 1,
                         static_cast<size_t>(q * static_cast<double>(lags.size())))];
  };
  std::printf(
      "BENCH datapath_lag p50_ms=%lld p99_ms=%lld max_ms=%lld events=%zu target_rows_per_s=%.0f "
      "committed_rows_per_s=%.0f flushed_rows_per_s=%.0f cpu_s=%.2f cdc_cpu_s=%.2f seconds=%.1f "
      "tick_ms=%d\n",
      static_cast<long long>(at(0.5)), static_cast<long long>(at(0.99)),
      static_cast<long long>(lags.back()), lags.size(), rate,
      static_cast<double>(committed_rows) / seconds, static_cast<double>(flushed_rows) / seconds,
      cpu.total_s, cpu.total_s - cpu.simkv_s, seconds, args.tick_ms);
  std::printf("# datapath_lag cpu seconds by thread: %s\n", cpu.by_thread.c_str());
  std::fflush(stdout);
  return Status::Ok();
}

Status Main(const Args& args, const std::string& dir) {
  if (args.txns == 0 || args.rows_per_txn <= 0 || args.tables <= 0 || args.stores <= 0) {
    return InvalidArgument("counts must be > 0");
  }
  auto wanted = [&args](const char* run) { return args.runs.find(run) != std::string::npos; };
  std::printf(
      "# %zu txns of %d rows over %d narrow tables, pad %lld bytes, %d stores, tick %d ms\n",
      args.txns, args.rows_per_txn, args.tables, static_cast<long long>(args.row_width),
      args.stores, args.tick_ms);
  std::printf("# allocator: %s\n", AllocatorDescription().c_str());
  Rates rates;
  if (wanted("catchup")) RETURN_IF_ERROR(RunCatchup(args, dir, &rates));
  if (wanted("live")) RETURN_IF_ERROR(RunLive(args, dir, &rates));
  if (wanted("lag")) RETURN_IF_ERROR(RunLag(args, dir, rates));
  if (wanted("mysql")) RETURN_IF_ERROR(RunMysql(args, dir));
  return Status::Ok();
}

}  // namespace
}  // namespace sluice::bench

int main(int argc, char** argv) {
  CLI::App app{"datapath_bench: the changefeed data path from simkv to a sink"};
  sluice::bench::Args a;
  const auto positive = CLI::PositiveNumber;
  app.add_option("--runs", a.runs, "comma-separated: catchup, live, lag, mysql");
  app.add_option("--txns", a.txns, "transactions of the catchup and live runs")->check(positive);
  app.add_option("--rows-per-txn", a.rows_per_txn)->check(positive);
  app.add_option("--row-width", a.row_width, "bytes of the pad column")->check(positive);
  app.add_option("--tables", a.tables, "narrow tables")->check(positive);
  app.add_option("--stores", a.stores, "simkv stores")->check(positive);
  app.add_option("--tick-ms", a.tick_ms, "simkv resolved-ts interval")->check(positive);
  app.add_flag("--one-region", a.one_region,
               "one simkv region for all tables (default: a region per table, as TiDB splits)");
  app.add_option("--budget-mib", a.budget_mib, "per-dispatcher memory budget")->check(positive);
  app.add_option("--lag-seconds", a.lag_seconds)->check(positive);
  app.add_option("--lag-warmup", a.lag_warmup_s, "seconds before lag is recorded");
  app.add_option("--lag-rate", a.lag_rate, "rows/s; default: --lag-fraction of the live rate");
  app.add_option("--lag-fraction", a.lag_fraction)->check(positive);
  app.add_option("--mysql-txns", a.mysql_txns)->check(positive);
  app.add_option("--mysql-workers", a.mysql_workers, "sink workers = baseline connections")
      ->check(positive);
  app.add_option("--mysql-batch", a.mysql_batch, "rows per downstream transaction")
      ->check(positive);
  app.add_option("--mysql-rounds", a.mysql_rounds, "rounds of baseline, sink and path runs")
      ->check(positive);
  app.add_option("--timeout", a.timeout_s, "bound on every wait, s")->check(positive);
  CLI::Option* pin =
      app.add_flag("--pin", a.pin,
                   "MySQL runs: the path and the clients on CPU 0, simkv and the (local) server on "
                   "CPU 1");
  app.add_flag("--server-alone", a.server_alone,
               "with --pin: simkv on CPU 0 with the path, the server alone on CPU 1, as in the "
               "baseline")
      ->needs(pin);
  app.add_option("--scan-window", a.scan_window, "the puller's initial scans per store at once")
      ->check(positive);
  app.add_option("--scan-yield-ms", a.scan_yield_ms,
                 "how long the puller holds a still-scanning table's data while another "
                 "table's first resolved ts waits for its backlog (0: never)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--dir", a.dir, "scratch directory (removed afterwards)");
  CLI11_PARSE(app, argc, argv);
  sluice::logging::SetLevel(sluice::logging::Level::kWarn);
  std::filesystem::path dir = a.dir.empty() ? std::filesystem::temp_directory_path() /
                                                  ("datapath_bench_" + std::to_string(::getpid()))
                                            : std::filesystem::path(a.dir);
  sluice::Status st = sluice::bench::Main(a, dir.string());
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  if (!st.ok()) {
    std::fprintf(stderr, "datapath_bench: %s\n", st.ToString().c_str());
    return 1;
  }
  return 0;
}
