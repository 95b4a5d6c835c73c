// The MariaDB part of datapath_bench. N transactions are committed to simkv
// and replicated once through the data path into a capturing blackhole
// sink, which gives the rows (as the sink receives them). Then, into the
// same tables of the MariaDB named by SLUICE_TEST_MYSQL (emptied before each
// run; row counts checked after):
//  - mysql_baseline: W threads, each with its own connection, write the rows
//    table by table, each table's in commit order, in batches of B rows; a
//    batch is one transaction sent in one round trip: BEGIN; one multi-row
//    INSERT per table (so one, but where a batch crosses into the next
//    table); COMMIT (values formatted with the sink's literal functions,
//    inside the timing). The connections are opened before the clock starts.
//  - mysql_sink: the captured events fed from one thread to the sink the
//    path opens for the server's URI with worker-count=W and max-txn-row=B,
//    timed until every event is flushed. The rows are older than the sink's
//    start, so it writes them in safe mode (REPLACE), as TiCDC does and as
//    the path's sink does.
//  - mysql_datapath: the whole path from simkv into MariaDB on the shipping
//    node (real maintainer, orchestrator and changefeed path, which opens
//    the sink from the URI), timed from ChangefeedRunner::Start until every
//    row is flushed.
// The three runs repeat --mysql-rounds times in turn; the summary gives the
// medians of the rates and of each round's ratios to its baseline. Each line
// also gives the server's CPU over the run (`server_cpu_s`, from /proc when
// the server is local). Before each run the server writes back every dirty
// page and goes idle (`Quiesce`), so no run pays for the one before it.
//
// With --pin, the process's own threads (the path, the sinks, the baseline's
// connections) run on CPU 0 and simkv's threads and every thread of the
// server on CPU 1: the replicator gets one core to itself, as the baseline's
// client does, and the upstream and the database share the other (simkv
// works while the path scans, the server while it writes). With
// --server-alone as well, simkv runs on CPU 0 with the path instead: the
// server has a core to itself in every run, as in the baseline, and the
// path must feed it while also carrying the upstream. Unpinned, the
// server needs most of both cores for the baseline rate, so the path's
// ratio then measures how much CPU the whole pipeline takes from it.
// Pinned, each datapath line also gives simkv's CPU, each core's work
// (`cpu0_busy_s`, `cpu1_busy_s`) and `bound_ratio`: the baseline's time
// over the busier core's work, the ratio the path would reach if that core
// never idled. The upstream's scan has no counterpart in the baseline.
#include <fmt/format.h>
#include <mysql.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <thread>

#include "bench_stats.h"
#include "common/clock.h"
#include "common/lifecycle.h"
#include "datapath_bench.h"
#include "mysql_bench_util.h"
#include "node/sink_opener.h"
#include "simkv/sql_render.h"
#include "sink/blackhole/blackhole_sink.h"
#include "sink/mysql/mysql_conn.h"
#include "sink/mysql/mysql_sink.h"
#include "sink/mysql/sql_value.h"

namespace sluice::bench {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;
constexpr int kPathCpu = 0;    // --pin: the process's own threads.
constexpr int kServerCpu = 1;  // --pin: the server.

// The workload's tables as "`db`.`table`".
std::vector<std::string> QualifiedNames(const std::vector<simkv::WorkloadTable>& tables) {
  std::vector<std::string> out;
  for (const simkv::WorkloadTable& t : tables) {
    out.push_back(simkv::QuoteName(t.database) + "." + simkv::QuoteName(t.info.name.original));
  }
  return out;
}

Status CreateTables(MYSQL* m, const std::vector<simkv::WorkloadTable>& tables) {
  for (const simkv::WorkloadTable& t : tables) {
    std::string db = simkv::QuoteName(t.database);
    RETURN_IF_ERROR(Exec(m, "DROP DATABASE IF EXISTS " + db));
  }
  for (const simkv::WorkloadTable& t : tables) {
    std::string db = simkv::QuoteName(t.database);
    RETURN_IF_ERROR(Exec(m, "CREATE DATABASE IF NOT EXISTS " + db));
    RETURN_IF_ERROR(Exec(m, "USE " + db));
    RETURN_IF_ERROR(Exec(m, simkv::CreateTableSql(t.info)));
  }
  return Status::Ok();
}

struct RowRef {
  const event::DmlEvent* event;
  size_t row;
};

// BEGIN; INSERT INTO <table> (..) VALUES (..),(..); ... COMMIT for `rows`,
// one statement per table in order of first appearance.
Status BuildBatch(const RowRef* rows, size_t n, std::string* sql) {
  std::vector<std::pair<const event::TableSchema*, std::string>> stmts;
  for (size_t i = 0; i < n; ++i) {
    const event::DmlEvent& e = *rows[i].event;
    const event::TableSchema* schema = e.schema.get();
    auto it = std::find_if(stmts.begin(), stmts.end(),
                           [schema](const auto& s) { return s.first == schema; });
    std::string* out = nullptr;
    if (it == stmts.end()) {
      out = &stmts.emplace_back(schema, "INSERT INTO " + schema->QuotedName() + " (").second;
      bool first = true;
      for (size_t c = 0; c < schema->columns().size(); ++c) {
        if (schema->IsGenerated(static_cast<int>(c))) continue;
        if (!first) out->push_back(',');
        first = false;
        sink::AppendQuotedName(schema->columns()[c].name.original, out);
      }
      out->append(") VALUES ");
    } else {
      out = &it->second;
      out->push_back(',');
    }
    const std::vector<codec::Datum>& row = e.rows[rows[i].row].row;
    out->push_back('(');
    bool first = true;
    for (size_t c = 0; c < schema->columns().size(); ++c) {
      if (schema->IsGenerated(static_cast<int>(c))) continue;
      if (!first) out->push_back(',');
      first = false;
      RETURN_IF_ERROR(sink::AppendLiteral(row[c], schema->columns()[c], out));
    }
    out->push_back(')');
  }
  sql->assign("BEGIN;");
  for (const auto& s : stmts) {
    sql->append(s.second);
    sql->push_back(';');
  }
  sql->append("COMMIT");
  return Status::Ok();
}

struct RunResult {
  double seconds = 0;
  double cpu_s = 0;
  uint64_t batches = 0;      // Downstream transactions.
  double first_row_s = 0;    // Until the first row was written (sink runs).
  uint64_t inserts = 0;      // INSERT and REPLACE statements the server ran.
  double server_cpu_s = -1;  // The server's CPU over the run (-1: unknown).
  double simkv_cpu_s = 0;    // simkv's threads' CPU over the run (path runs).
};

// With --pin: the process's threads (the path, the sinks, the baseline's
// connections) on CPU 0, the server's on CPU 1, and simkv's on CPU 1 (as if
// the upstream and the database shared a machine) or, server-alone, on
// CPU 0. The server gets every CPU back on destruction, even after a failed
// Apply.
class Pinning {
 public:
  Pinning() = default;
  Pinning(const Pinning&) = delete;
  Pinning& operator=(const Pinning&) = delete;
  ~Pinning() {
    if (server_pid_ != 0) (void)PinProcess(server_pid_, -1);
  }

  Status Apply(pid_t server_pid, bool server_alone) {
    if (server_pid == 0) return InvalidArgument("--pin needs a local server (its pid file)");
    server_pid_ = server_pid;
    simkv_cpu_ = server_alone ? kPathCpu : kServerCpu;
    RETURN_IF_ERROR(PinThreads(kPathCpu, simkv_cpu_));
    RETURN_IF_ERROR(PinProcess(server_pid, kServerCpu));
    std::printf(
        "# pinned: the path and the clients on cpu %d, simkv on cpu %d, the server (pid %d) "
        "on cpu %d\n",
        kPathCpu, simkv_cpu_, static_cast<int>(server_pid), kServerCpu);
    return Status::Ok();
  }

  int simkv_cpu() const { return simkv_cpu_; }

 private:
  pid_t server_pid_ = 0;
  int simkv_cpu_ = kServerCpu;
};

Result<RunResult> RunBaseline(const sink::SinkUri& uri, const Args& args,
                              const std::vector<event::DmlEventPtr>& events) {
  std::vector<RowRef> rows;
  for (const event::DmlEventPtr& e : events) {
    for (size_t i = 0; i < e->rows.size(); ++i) {
      if (e->rows[i].kind != event::RowKind::kInsert) {
        return Internal(fmt::format("baseline: a {} row in table {} at commit ts {} key {}",
                                    event::RowKindName(e->rows[i].kind), e->physical_table_id,
                                    e->commit_ts.value(), e->rows[i].raw_key.size()));
      }
      rows.push_back(RowRef{e.get(), i});
    }
  }
  // Table by table, each in commit order: a batch then holds one table (one
  // INSERT), whatever order the capture interleaved the tables in.
  std::stable_sort(rows.begin(), rows.end(), [](const RowRef& a, const RowRef& b) {
    if (a.event->physical_table_id != b.event->physical_table_id) {
      return a.event->physical_table_id < b.event->physical_table_id;
    }
    return a.event->commit_ts < b.event->commit_ts;
  });
  std::vector<Conn> conns;
  for (int i = 0; i < args.mysql_workers; ++i) {
    ASSIGN_OR_RETURN(Conn c, Connect(uri));
    conns.push_back(std::move(c));
  }
  const size_t batch = static_cast<size_t>(args.mysql_batch);
  const size_t num_batches = (rows.size() + batch - 1) / batch;
  std::atomic<size_t> next{0};
  std::vector<Status> status(conns.size());
  CpuSnapshot cpu0 = CpuSnapshot::Now();
  auto start = SteadyClock::now();
  {
    ThreadGroup threads;
    for (size_t w = 0; w < conns.size(); ++w) {
      threads.Start(fmt::format("baseline-{}", w), [&, w](StopToken) {
        std::string sql;
        for (size_t b = next.fetch_add(1); b < num_batches; b = next.fetch_add(1)) {
          size_t first = b * batch;
          Status s = BuildBatch(&rows[first], std::min(batch, rows.size() - first), &sql);
          if (s.ok()) s = Exec(conns[w].get(), sql);
          if (!s.ok()) {
            status[w] = s;
            return;
          }
        }
      });
    }
    threads.Join();
  }
  RunResult r{SecondsSince(start), CpuSince(cpu0).total_s, num_batches, 0};
  for (const Status& s : status) RETURN_IF_ERROR(s);
  return r;
}

// The sink URI of the sink and path runs: the server's, with
// worker-count=W and max-txn-row=B.
std::string SinkUriFor(const std::string& server, const Args& args) {
  return fmt::format("{}{}worker-count={}&max-txn-row={}", server,
                     server.find('?') == std::string::npos ? "?" : "&", args.mysql_workers,
                     args.mysql_batch);
}

// The MySQL sink's downstream transactions so far; 0 if `sink` is not one.
uint64_t BatchesWritten(const sink::Sink* sink) {
  const auto* mysql = dynamic_cast<const sink::MysqlSink*>(sink);
  return mysql == nullptr ? 0 : mysql->stats().batches_written;
}

// The captured events fed to the sink the changefeed path would open for
// the same URI (node::OpenSink), from one thread. Its rows are older than
// the sink's start, so it writes them in safe mode as the path's does.
Result<RunResult> RunSink(const std::string& sink_uri, const Args& args,
                          const std::vector<event::DmlEventPtr>& captured, uint64_t rows,
                          Ts start) {
  std::vector<event::DmlEventPtr> events;
  for (const event::DmlEventPtr& e : captured) events.push_back(CopyEvent(*e));
  node::SinkOpenOptions o;
  o.sink_uri = sink_uri;
  o.changefeed_id = "default/datapath-bench-sink";
  o.start_ts = start;
  ASSIGN_OR_RETURN(std::unique_ptr<sink::Sink> mysql, node::OpenSink(o));
  MeteredSink metered(mysql.get(), false);
  CpuSnapshot cpu0 = CpuSnapshot::Now();
  auto begin = SteadyClock::now();
  for (event::DmlEventPtr& e : events) metered.AddDmlEvent(std::move(e));
  Status s = metered.WaitRows(rows, std::chrono::seconds(args.timeout_s));
  RunResult r{SecondsSince(begin), CpuSince(cpu0).total_s, BatchesWritten(mysql.get()),
              std::chrono::duration<double>(metered.first_flush() - begin).count()};
  metered.Close();
  RETURN_IF_ERROR(s);
  return r;
}

Result<RunResult> RunDatapath(BenchCluster& cluster, const std::string& sink_uri, uint64_t rows) {
  MeteredSink metered(false);
  CpuSnapshot cpu0 = CpuSnapshot::Now();
  auto begin = SteadyClock::now();
  Result<std::unique_ptr<testing::ChangefeedRunner>> path =
      cluster.StartPath(sink_uri, &metered, cluster.start_ts());
  Status s = path.status();
  if (s.ok()) s = metered.WaitRows(rows, cluster.timeout(), [&] { return (*path)->status(); });
  CpuUse cpu = CpuSince(cpu0);
  RunResult r{SecondsSince(begin), cpu.total_s, BatchesWritten(metered.inner()),
              std::chrono::duration<double>(metered.first_flush() - begin).count()};
  r.simkv_cpu_s = cpu.simkv_s;
  std::printf("# mysql_datapath cpu seconds by thread: %s\n", cpu.by_thread.c_str());
  if (metered.events() > 0) {
    std::printf("# mysql_datapath cpu seconds by thread before the first row: %s\n",
                CpuBetween(cpu0, metered.first_flush_cpu()).by_thread.c_str());
  }
  if (path.ok()) (*path)->Stop();
  metered.Close();
  RETURN_IF_ERROR(s);
  return r;
}

// The rows as the sink receives them: the path replicated once into a
// capturing blackhole sink.
struct Captured {
  std::vector<event::DmlEventPtr> events;
  uint64_t bytes = 0;
};

Result<Captured> Capture(BenchCluster& cluster, uint64_t rows) {
  MeteredSink capture(true);
  ASSIGN_OR_RETURN(auto path, cluster.StartPath("blackhole://", &capture, cluster.start_ts()));
  Status s = capture.WaitRows(rows, cluster.timeout(), [&] { return path->status(); });
  path->Stop();
  RETURN_IF_ERROR(s);
  const auto* blackhole = dynamic_cast<const sink::BlackholeSink*>(capture.inner());
  return Captured{capture.TakeCaptured(), blackhole == nullptr ? 0 : blackhole->bytes()};
}

void Print(const char* name, int round, uint64_t rows, uint64_t bytes, const RunResult& r,
           double baseline_rows_per_s, const Args& args, const std::string& extra = "") {
  const double rate = static_cast<double>(rows) / r.seconds;
  std::string ratio =
      baseline_rows_per_s > 0 ? fmt::format(" ratio={:.2f}", rate / baseline_rows_per_s) : "";
  std::printf(
      "BENCH %s round=%d rows=%llu seconds=%.3f rows_per_s=%.0f mib_per_s=%.2f cpu_s=%.2f "
      "server_cpu_s=%.2f workers=%d batch=%d txns_downstream=%llu inserts=%llu "
      "first_row_s=%.2f%s%s\n",
      name, round, static_cast<unsigned long long>(rows), r.seconds, rate,
      static_cast<double>(bytes) / kMiB / r.seconds, r.cpu_s, r.server_cpu_s, args.mysql_workers,
      args.mysql_batch, static_cast<unsigned long long>(r.batches),
      static_cast<unsigned long long>(r.inserts), r.first_row_s, ratio.c_str(), extra.c_str());
  std::fflush(stdout);
}

}  // namespace

Status RunMysql(const Args& args, const std::string& dir) {
  const char* env = std::getenv("SLUICE_TEST_MYSQL");
  if (env == nullptr || *env == '\0') {
    std::printf("# mysql: SLUICE_TEST_MYSQL is not set; skipping the MariaDB runs\n");
    return Status::Ok();
  }
  ASSIGN_OR_RETURN(sink::SinkUri uri, sink::SinkUri::Parse(env));
  const std::string sink_uri = SinkUriFor(env, args);
  ASSIGN_OR_RETURN(auto cluster, BenchCluster::Start(args, 4, dir + "/mysql"));
  uint64_t rows = 0;
  ASSIGN_OR_RETURN(std::vector<simkv::PreparedTxn> txns,
                   cluster->Pregenerate(args.mysql_txns, &rows));
  RETURN_IF_ERROR(cluster->ApplyAll(txns));
  txns.clear();

  ASSIGN_OR_RETURN(Captured captured, Capture(*cluster, rows));
  const std::vector<event::DmlEventPtr>& events = captured.events;
  const uint64_t bytes = captured.bytes;

  const std::vector<simkv::WorkloadTable> tables = cluster->workload().Tables();
  ASSIGN_OR_RETURN(Conn admin, Connect(uri));
  RETURN_IF_ERROR(CreateTables(admin.get(), tables));
  const pid_t server_pid = ServerPid(admin.get());
  Pinning pinning;
  if (args.pin) RETURN_IF_ERROR(pinning.Apply(server_pid, args.server_alone));
  // Runs one of the three, counts the server's INSERT statements, checks
  // the rows and empties the tables.
  auto measure = [&](const char* what,
                     const std::function<Result<RunResult>()>& run) -> Result<RunResult> {
    ASSIGN_OR_RETURN(double quiesce_s, Quiesce(admin.get(), server_pid, std::chrono::seconds(60)));
    std::printf("# %s: the server was quiet after %.2f s\n", what, quiesce_s);
    ASSIGN_OR_RETURN(uint64_t before, WriteStatements(admin.get()));
    const double server_before = ProcessCpuSeconds(server_pid);
    ASSIGN_OR_RETURN(RunResult r, run());
    const double server_after = ProcessCpuSeconds(server_pid);
    if (args.pin)
      std::printf("# %s threads: %s\n", what, PinReport(kPathCpu, pinning.simkv_cpu()).c_str());
    ASSIGN_OR_RETURN(uint64_t after, WriteStatements(admin.get()));
    r.inserts = after - before;
    if (server_before >= 0 && server_after >= 0) r.server_cpu_s = server_after - server_before;
    ASSIGN_OR_RETURN(uint64_t n, CountRows(admin.get(), QualifiedNames(tables)));
    if (n != rows) return Internal(fmt::format("{}: {} rows downstream, want {}", what, n, rows));
    RETURN_IF_ERROR(Truncate(admin.get(), QualifiedNames(tables)));
    return r;
  };
  // Per round: baseline, sink, whole path; rates and ratios to the same
  // round's baseline.
  std::vector<double> base_rates, sink_rates, path_rates, sink_ratios, path_ratios, bound_ratios;
  const double n = static_cast<double>(rows);
  for (int round = 1; round <= args.mysql_rounds; ++round) {
    ASSIGN_OR_RETURN(RunResult base,
                     measure("baseline", [&] { return RunBaseline(uri, args, events); }));
    const double base_rate = n / base.seconds;
    Print("mysql_baseline", round, rows, bytes, base, 0, args);
    ASSIGN_OR_RETURN(RunResult direct, measure("sink", [&] {
                       return RunSink(sink_uri, args, events, rows, cluster->start_ts());
                     }));
    Print("mysql_sink", round, rows, bytes, direct, base_rate, args);
    ASSIGN_OR_RETURN(RunResult path,
                     measure("datapath", [&] { return RunDatapath(*cluster, sink_uri, rows); }));
    // Pinned, the path cannot beat the baseline's time over the work of
    // its busier core (the ratio if that core never idled). Threads that
    // ended within the run count on the path's core, whatever their kind.
    std::string bound;
    if (args.pin && path.server_cpu_s > 0) {
      const double simkv_on_1 = pinning.simkv_cpu() == kServerCpu ? path.simkv_cpu_s : 0;
      const double cpu0 = path.cpu_s - simkv_on_1;
      const double cpu1 = path.server_cpu_s + simkv_on_1;
      bound_ratios.push_back(base.seconds / std::max(cpu0, cpu1));
      bound = fmt::format(
          " simkv_cpu_s={:.2f} cpu0_busy_s={:.2f} cpu1_busy_s={:.2f} bound_ratio={:.2f}",
          path.simkv_cpu_s, cpu0, cpu1, bound_ratios.back());
    }
    Print("mysql_datapath", round, rows, bytes, path, base_rate, args, bound);
    base_rates.push_back(base_rate);
    sink_rates.push_back(n / direct.seconds);
    path_rates.push_back(n / path.seconds);
    sink_ratios.push_back(n / direct.seconds / base_rate);
    path_ratios.push_back(n / path.seconds / base_rate);
  }
  std::printf(
      "BENCH mysql_summary baseline_rows_per_s=%.0f sink_rows_per_s=%.0f "
      "datapath_rows_per_s=%.0f sink_ratio=%.2f datapath_ratio=%.2f%s rounds=%d "
      "(medians; ratios per round)\n",
      Median(base_rates), Median(sink_rates), Median(path_rates), Median(sink_ratios),
      Median(path_ratios),
      bound_ratios.empty() ? "" : fmt::format(" bound_ratio={:.2f}", Median(bound_ratios)).c_str(),
      args.mysql_rounds);
  std::fflush(stdout);
  return Status::Ok();
}

}  // namespace sluice::bench
