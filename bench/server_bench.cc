// server_bench: the whole path through the `sluice server` process, against
// raw batched inserts of the same rows, in one run. simkv runs as its own
// process (3 stores, narrow tables, insert-only DML) and commits N
// transactions as fast as it can before any changefeed starts; `sluice
// server` runs as its own process on a fresh data dir. Each round:
//  - server_mysql: a changefeed is created through the HTTP API (POST
//    /api/v2/changefeeds) from a ts before the rows into the MariaDB named
//    by SLUICE_TEST_MYSQL (worker-count=W, max-txn-row=B), timed from the
//    POST until its checkpoint (GET .../status, polled every 10 ms) passes
//    the last commit; the rows downstream are counted; the changefeed is
//    removed. The time includes what a user waits for and the raw run does
//    not: placing the changefeed, opening its stores and sink, and the
//    checkpoint's own delay after the last row (the resolved-ts tick, the
//    event service's resolved interval, the status report), about a
//    second in all; the sink writes the rows in safe mode (REPLACE), as
//    TiCDC does for rows older than the changefeed's start.
//  - mysql_raw: the same rows, read back from MariaDB after the first
//    server run (outside any timing), written again into the emptied tables
//    by W connections (opened before the clock starts), each a transaction
//    of B rows (BEGIN; one multi-row INSERT per table; COMMIT), each
//    table's rows in key order.
//  - server_blackhole: the same changefeed into blackhole://; the sluice
//    process's CPU over the run gives rows and MiB (the rows' values as
//    text, as read back) per CDC CPU-second.
// Before each timed MariaDB run the database writes back its dirty pages
// and goes idle. The summary gives the medians of the rates and of each
// round's ratio server_mysql / mysql_raw.
//
//   build/bench/server_bench [--txns N] [--rows-per-txn R] [--row-width B]
//       [--tables T] [--workers W] [--batch B] [--rounds K]
//
// Needs the `sluice` and `simkv` binaries of the same build.
#include <fmt/format.h>
#include <httplib.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "bench_stats.h"
#include "common/lifecycle.h"
#include "common/logging.h"
#include "kvclient/meta_reader.h"
#include "kvclient/snapshot_reader.h"
#include "mysql_bench_util.h"
#include "pd/pd_client.h"
#include "pd/region_cache.h"
#include "process/child_process.h"
#include "simkv/sql_render.h"

namespace sluice::bench {
namespace {

using json = nlohmann::json;
using SteadyClock = std::chrono::steady_clock;
using testing::ChildProcess;
constexpr double kMiB = 1024.0 * 1024.0;
constexpr const char* kDatabase = "server_bench";

struct Args {
  size_t txns = 50000;
  int rows_per_txn = 10;
  int row_width = 150;
  int tables = 4;
  int workers = 8;
  int batch = 256;
  int rounds = 3;
  int timeout_s = 600;
  bool kitchen_sink = false;  // Also the table of every column type.
  std::string dir;
};

double SecondsSince(SteadyClock::time_point t) {
  return std::chrono::duration<double>(SteadyClock::now() - t).count();
}

// One table's rows as MariaDB returned them (NULL as nullopt).
struct TableRows {
  std::string name;  // `db`.`table`
  std::vector<std::vector<std::optional<std::string>>> rows;
};

// The processes of the run.
class Cluster {
 public:
  Status Start(const Args& args) {
    // Inserts of sequential handles only (an AUTO_INCREMENT key): every row
    // change is one new row downstream, and each table's rows commit in key
    // order, the order the raw run writes them in.
    std::vector<std::string> simkv_args = {SLUICE_SIMKV_BIN,
                                           "--stores",
                                           "3",
                                           "--regions",
                                           std::to_string(args.tables + 1),
                                           "--tables",
                                           std::to_string(args.tables),
                                           "--rows-per-txn",
                                           std::to_string(args.rows_per_txn),
                                           "--row-width",
                                           std::to_string(args.row_width),
                                           "--mix",
                                           "100:0:0",
                                           "--sequential-keys",
                                           "--txns-per-s",
                                           "0",
                                           "--paused",
                                           "--database",
                                           kDatabase,
                                           "--tick",
                                           "200ms",
                                           "--seed",
                                           "5"};
    if (!args.kitchen_sink) simkv_args.push_back("--no-kitchen-sink");
    ASSIGN_OR_RETURN(simkv_, ChildProcess::Start(simkv_args, args.dir + "/simkv.log"));
    ASSIGN_OR_RETURN(pd_, simkv_->WaitForLine(std::regex("^pd (\\S+)"), std::chrono::seconds(30)));
    ASSIGN_OR_RETURN(control_, simkv_->WaitForLine(std::regex("^control http://(\\S+)"),
                                                   std::chrono::seconds(30)));
    ASSIGN_OR_RETURN(server_, ChildProcess::Start({SLUICE_BIN, "server", "--pd", pd_, "--addr",
                                                   "127.0.0.1:0", "--data-dir", args.dir + "/data"},
                                                  args.dir + "/server.log"));
    ASSIGN_OR_RETURN(api_, server_->WaitForLine(std::regex("serving the API on (\\S+)"),
                                                std::chrono::seconds(30)));
    return Status::Ok();
  }

  // simkv's status document.
  Result<json> SimkvStatus() {
    httplib::Client c("http://" + control_);
    auto res = c.Get("/status");
    if (!res || res->status != 200) return Unavailable("simkv: GET /status failed");
    return json::parse(res->body);
  }

  // Commits `txns` transactions of new rows; returns the ts after the last
  // commit and the rows inserted.
  Result<std::pair<Ts, uint64_t>> Load(size_t txns) {
    httplib::Client c("http://" + control_);
    const std::string body = json{{"steps", txns}}.dump();
    auto res = c.Post("/workload/start", body, "application/json");
    if (!res || res->status != 200) return Unavailable("simkv: POST /workload/start failed");
    while (true) {
      ASSIGN_OR_RETURN(json s, SimkvStatus());
      if (!s.value("workload_running", true)) {
        const json& w = s["workload"];
        if (w.value("txns", uint64_t{0}) != txns) {
          return Internal("simkv: the workload stopped early: " + w.dump());
        }
        if (w.value("rows_updated", 0) != 0 || w.value("rows_deleted", 0) != 0) {
          return Internal("simkv: the workload changed existing rows: " + w.dump());
        }
        // The status reads the TSO before the running flag: take one from
        // a status read after the run had ended.
        ASSIGN_OR_RETURN(json after, SimkvStatus());
        return std::make_pair(Ts(after.value("tso", uint64_t{0})),
                              w.value("rows_inserted", uint64_t{0}));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }

  // Drops and creates the workload database downstream with the tables as
  // they are at `ts`.
  Status CreateTables(MYSQL* m, Ts ts) {
    pd::PdClientOptions options;
    options.endpoints = {pd_};
    ASSIGN_OR_RETURN(std::unique_ptr<pd::PdClient> pd, pd::PdClient::Connect(options));
    pd::RegionCache cache(pd.get());
    kvclient::SnapshotReader reader(pd.get(), &cache, kvclient::SnapshotReaderOptions{});
    kvclient::KvMetaReader meta(pd.get(), &reader);
    Result<kvclient::MetaSnapshot> snapshot = meta.Read(ts);
    reader.Stop();
    pd->Stop();
    RETURN_IF_ERROR(snapshot.status());
    const std::string db = simkv::QuoteName(kDatabase);
    RETURN_IF_ERROR(Exec(m, "DROP DATABASE IF EXISTS " + db));
    RETURN_IF_ERROR(Exec(m, "CREATE DATABASE " + db));
    RETURN_IF_ERROR(Exec(m, "USE " + db));
    tables_.clear();
    for (const auto& [id, entry] : snapshot->tables) {
      const auto& [db_id, info] = entry;
      if (snapshot->dbs.at(db_id).name.original != kDatabase) continue;
      RETURN_IF_ERROR(Exec(m, simkv::CreateTableSql(info)));
      tables_.push_back(db + "." + simkv::QuoteName(info.name.original));
    }
    return Status::Ok();
  }

  // Runs a changefeed from `start` into `sink_uri` until its checkpoint
  // passes `end`, then removes it; returns the seconds from the create.
  Result<double> RunChangefeed(const std::string& id, const std::string& sink_uri, Ts start, Ts end,
                               std::chrono::seconds timeout) {
    httplib::Client c("http://" + api_);
    const std::string body =
        json{{"changefeed_id", id}, {"sink_uri", sink_uri}, {"start_ts", start.value()}}.dump();
    const auto begin = SteadyClock::now();
    auto created = c.Post("/api/v2/changefeeds", body, "application/json");
    if (!created || created->status != 200) {
      return Unavailable("create " + id + ": " + (created ? created->body : "no answer"));
    }
    double seconds = 0;
    while (true) {
      auto res = c.Get("/api/v2/changefeeds/" + id + "/status");
      if (res && res->status == 200) {
        json s = json::parse(res->body, nullptr, false);
        if (s.is_object() && s.value("checkpoint_ts", uint64_t{0}) >= end.value()) {
          seconds = SecondsSince(begin);
          break;
        }
        if (s.is_object() && s.value("state", "") == "failed") {
          return Internal(id + " failed: " + res->body);
        }
      }
      if (SecondsSince(begin) > static_cast<double>(timeout.count())) {
        return Timeout(
            fmt::format("{}: checkpoint below {} after {} s", id, end.value(), timeout.count()));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    auto removed = c.Delete("/api/v2/changefeeds/" + id);
    if (!removed || removed->status != 200) return Unavailable("remove " + id);
    return seconds;
  }

  const std::vector<std::string>& tables() const { return tables_; }
  pid_t server_pid() const { return server_->pid(); }

 private:
  std::unique_ptr<ChildProcess> simkv_;
  std::unique_ptr<ChildProcess> server_;
  std::string pd_, control_, api_;
  std::vector<std::string> tables_;
};

// The handles 1..n (sequential across the tables) that no table holds, as
// ranges, for a run that lost rows: a contiguous range points at one span's
// scan or store, scattered transactions at the sink.
std::string MissingHandles(MYSQL* m, const std::vector<std::string>& tables, uint64_t n) {
  std::vector<bool> seen(n + 1, false);
  for (const std::string& t : tables) {
    const std::string sql = "SELECT id FROM " + t;
    if (mysql_real_query(m, sql.data(), sql.size()) != 0) return MysqlError(m, sql).ToString();
    MYSQL_RES* res = mysql_store_result(m);
    if (res == nullptr) return MysqlError(m, sql).ToString();
    while (MYSQL_ROW row = mysql_fetch_row(res)) {
      const uint64_t id = row[0] == nullptr ? 0 : std::strtoull(row[0], nullptr, 10);
      if (id >= 1 && id <= n) seen[id] = true;
    }
    mysql_free_result(res);
  }
  std::string out;
  int ranges = 0;
  for (uint64_t id = 1; id <= n && ranges < 20; ++id) {
    if (seen[id]) continue;
    uint64_t last = id;
    while (last + 1 <= n && !seen[last + 1]) ++last;
    out += fmt::format("{}{}-{}", out.empty() ? "" : ",", id, last);
    ++ranges;
    id = last;
  }
  return out.empty() ? "none in 1.." + std::to_string(n) : out;
}

// Every table's rows in key order; `bytes` gets the size of their values.
Result<std::vector<TableRows>> ReadBack(MYSQL* m, const std::vector<std::string>& tables,
                                        uint64_t* bytes) {
  std::vector<TableRows> out;
  *bytes = 0;
  for (const std::string& t : tables) {
    const std::string sql = "SELECT * FROM " + t + " ORDER BY 1";
    if (mysql_real_query(m, sql.data(), sql.size()) != 0) return MysqlError(m, sql);
    MYSQL_RES* res = mysql_store_result(m);
    if (res == nullptr) return MysqlError(m, sql);
    TableRows table{t, {}};
    const unsigned columns = mysql_num_fields(res);
    while (MYSQL_ROW row = mysql_fetch_row(res)) {
      unsigned long* lengths = mysql_fetch_lengths(res);
      std::vector<std::optional<std::string>>& r = table.rows.emplace_back();
      for (unsigned i = 0; i < columns; ++i) {
        if (row[i] == nullptr) {
          r.emplace_back();
        } else {
          r.emplace_back(std::string(row[i], lengths[i]));
          *bytes += lengths[i];
        }
      }
    }
    mysql_free_result(res);
    out.push_back(std::move(table));
  }
  return out;
}

// One batch: rows [first, first + n) of the concatenation of `tables`.
struct Batch {
  size_t table;
  size_t first;
  size_t n;
};

std::vector<Batch> Batches(const std::vector<TableRows>& tables, size_t batch) {
  std::vector<Batch> out;
  for (size_t t = 0; t < tables.size(); ++t) {
    for (size_t i = 0; i < tables[t].rows.size(); i += batch) {
      out.push_back(Batch{t, i, std::min(batch, tables[t].rows.size() - i)});
    }
  }
  return out;
}

void AppendBatchSql(MYSQL* m, const TableRows& table, const Batch& b, std::string* sql) {
  sql->assign("BEGIN; INSERT INTO " + table.name + " VALUES ");
  std::string escaped;
  for (size_t i = b.first; i < b.first + b.n; ++i) {
    if (i > b.first) sql->push_back(',');
    sql->push_back('(');
    const auto& row = table.rows[i];
    for (size_t c = 0; c < row.size(); ++c) {
      if (c > 0) sql->push_back(',');
      if (!row[c].has_value()) {
        sql->append("NULL");
        continue;
      }
      escaped.resize(row[c]->size() * 2 + 1);
      escaped.resize(mysql_real_escape_string(m, escaped.data(), row[c]->data(), row[c]->size()));
      sql->push_back('\'');
      sql->append(escaped);
      sql->push_back('\'');
    }
    sql->push_back(')');
  }
  sql->append("; COMMIT");
}

// The raw baseline; returns its seconds.
Result<double> RunRaw(const sink::SinkUri& uri, const Args& args,
                      const std::vector<TableRows>& tables) {
  const std::vector<Batch> batches = Batches(tables, static_cast<size_t>(args.batch));
  std::vector<Conn> conns;
  for (int i = 0; i < args.workers; ++i) {
    ASSIGN_OR_RETURN(Conn c, Connect(uri));
    conns.push_back(std::move(c));
  }
  std::atomic<size_t> next{0};
  std::vector<Status> status(conns.size());
  const auto begin = SteadyClock::now();
  {
    ThreadGroup threads;
    for (size_t w = 0; w < conns.size(); ++w) {
      threads.Start(fmt::format("raw-{}", w), [&, w](StopToken) {
        std::string sql;
        for (size_t i = next.fetch_add(1); i < batches.size(); i = next.fetch_add(1)) {
          AppendBatchSql(conns[w].get(), tables[batches[i].table], batches[i], &sql);
          if (Status s = Exec(conns[w].get(), sql); !s.ok()) {
            status[w] = s;
            return;
          }
        }
      });
    }
    threads.Join();
  }
  const double seconds = SecondsSince(begin);
  for (const Status& s : status) RETURN_IF_ERROR(s);
  return seconds;
}

Status Run(const Args& args) {
  const char* env = std::getenv("SLUICE_TEST_MYSQL");
  if (env == nullptr || *env == '\0') {
    return InvalidArgument("SLUICE_TEST_MYSQL must name the MariaDB to write to");
  }
  ASSIGN_OR_RETURN(sink::SinkUri uri, sink::SinkUri::Parse(env));
  const std::string sink_uri =
      fmt::format("{}{}worker-count={}&max-txn-row={}", env,
                  std::string_view(env).find('?') == std::string_view::npos ? "?" : "&",
                  args.workers, args.batch);
  Cluster cluster;
  RETURN_IF_ERROR(cluster.Start(args));
  ASSIGN_OR_RETURN(json before, cluster.SimkvStatus());
  const Ts start(before.value("tso", uint64_t{0}));
  const auto load_begin = SteadyClock::now();
  ASSIGN_OR_RETURN(auto loaded, cluster.Load(args.txns));
  const auto [end, n] = loaded;
  std::printf("# simkv: %zu transactions committed in %.1f s\n", args.txns,
              SecondsSince(load_begin));
  ASSIGN_OR_RETURN(Conn admin, Connect(uri));
  RETURN_IF_ERROR(cluster.CreateTables(admin.get(), start));
  const pid_t db_pid = ServerPid(admin.get());
  const pid_t sluice_pid = cluster.server_pid();
  const std::chrono::seconds timeout(args.timeout_s);

  std::vector<TableRows> rows;
  uint64_t bytes = 0;
  std::vector<double> raw_rates, server_rates, ratios, blackhole_mib;
  for (int round = 1; round <= args.rounds; ++round) {
    // The server into MariaDB.
    RETURN_IF_ERROR(Truncate(admin.get(), cluster.tables()));
    RETURN_IF_ERROR(Quiesce(admin.get(), db_pid, std::chrono::seconds(60)).status());
    double sluice_cpu0 = ProcessCpuSeconds(sluice_pid), db_cpu0 = ProcessCpuSeconds(db_pid);
    ASSIGN_OR_RETURN(double server_s, cluster.RunChangefeed(fmt::format("bench-mysql-{}", round),
                                                            sink_uri, start, end, timeout));
    const double sluice_cpu = ProcessCpuSeconds(sluice_pid) - sluice_cpu0;
    double db_cpu = ProcessCpuSeconds(db_pid) - db_cpu0;
    ASSIGN_OR_RETURN(uint64_t count, CountRows(admin.get(), cluster.tables()));
    if (round == 1) {
      ASSIGN_OR_RETURN(rows, ReadBack(admin.get(), cluster.tables(), &bytes));
    }
    if (count != n || n == 0) {
      return Internal(fmt::format("server run {}: {} rows downstream, want {}; missing handles: {}",
                                  round, count, n,
                                  MissingHandles(admin.get(), cluster.tables(), n)));
    }
    // The same rows, raw.
    RETURN_IF_ERROR(Truncate(admin.get(), cluster.tables()));
    RETURN_IF_ERROR(Quiesce(admin.get(), db_pid, std::chrono::seconds(60)).status());
    const double raw_db_cpu0 = ProcessCpuSeconds(db_pid);
    ASSIGN_OR_RETURN(double raw_s, RunRaw(uri, args, rows));
    const double raw_db_cpu = ProcessCpuSeconds(db_pid) - raw_db_cpu0;
    ASSIGN_OR_RETURN(uint64_t raw_count, CountRows(admin.get(), cluster.tables()));
    if (raw_count != n) return Internal(fmt::format("raw: {} rows, want {}", raw_count, n));
    const double rows_d = static_cast<double>(n);
    raw_rates.push_back(rows_d / raw_s);
    server_rates.push_back(rows_d / server_s);
    ratios.push_back(raw_s / server_s);
    std::printf(
        "BENCH mysql_raw round=%d rows=%llu seconds=%.3f rows_per_s=%.0f db_cpu_s=%.2f "
        "workers=%d batch=%d\n",
        round, static_cast<unsigned long long>(n), raw_s, rows_d / raw_s, raw_db_cpu, args.workers,
        args.batch);
    std::printf(
        "BENCH server_mysql round=%d rows=%llu seconds=%.3f rows_per_s=%.0f sluice_cpu_s=%.2f "
        "db_cpu_s=%.2f ratio=%.2f\n",
        round, static_cast<unsigned long long>(n), server_s, rows_d / server_s, sluice_cpu, db_cpu,
        raw_s / server_s);
    // The server into the blackhole.
    sluice_cpu0 = ProcessCpuSeconds(sluice_pid);
    ASSIGN_OR_RETURN(double hole_s, cluster.RunChangefeed(fmt::format("bench-blackhole-{}", round),
                                                          "blackhole://", start, end, timeout));
    const double hole_cpu = ProcessCpuSeconds(sluice_pid) - sluice_cpu0;
    const double mib = static_cast<double>(bytes) / kMiB;
    blackhole_mib.push_back(mib / hole_cpu);
    std::printf(
        "BENCH server_blackhole round=%d rows=%llu text_mib=%.1f seconds=%.3f rows_per_s=%.0f "
        "sluice_cpu_s=%.2f rows_per_cpu_s=%.0f mib_per_cpu_s=%.2f\n",
        round, static_cast<unsigned long long>(n), mib, hole_s, rows_d / hole_s, hole_cpu,
        rows_d / hole_cpu, mib / hole_cpu);
    std::fflush(stdout);
  }
  std::printf(
      "BENCH server_summary raw_rows_per_s=%.0f server_rows_per_s=%.0f ratio=%.2f "
      "blackhole_mib_per_cpu_s=%.2f rounds=%d (medians; ratios per round)\n",
      Median(raw_rates), Median(server_rates), Median(ratios), Median(blackhole_mib), args.rounds);
  return Status::Ok();
}

}  // namespace
}  // namespace sluice::bench

int main(int argc, char** argv) {
  sluice::bench::Args args;
  CLI::App app{"server_bench: the sluice server process into MariaDB against raw inserts"};
  app.add_option("--txns", args.txns, "transactions committed before the runs");
  app.add_option("--rows-per-txn", args.rows_per_txn);
  app.add_option("--row-width", args.row_width, "padding bytes per row");
  app.add_option("--tables", args.tables);
  app.add_option("--workers", args.workers, "sink worker-count = raw connections");
  app.add_option("--batch", args.batch, "sink max-txn-row = raw rows per transaction");
  app.add_option("--rounds", args.rounds);
  app.add_flag("--kitchen-sink", args.kitchen_sink,
               "also simkv's table of every column type (the raw run writes its values as text)");
  app.add_option("--timeout", args.timeout_s, "seconds to wait for any one run");
  app.add_option("--dir", args.dir, "scratch directory (removed after a run that succeeds)");
  CLI11_PARSE(app, argc, argv);
  sluice::logging::SetLevel(sluice::logging::Level::kWarn);
  if (args.dir.empty()) {
    args.dir = (std::filesystem::temp_directory_path() / fmt::format("server_bench_{}", getpid()))
                   .string();
  }
  std::filesystem::create_directories(args.dir);
  sluice::Status s = sluice::bench::Run(args);
  std::error_code ec;
  if (s.ok()) std::filesystem::remove_all(args.dir, ec);  // A failed run keeps its logs.
  if (!s.ok()) {
    std::fprintf(stderr, "server_bench: %s\n", s.ToString().c_str());
    return 1;
  }
  return 0;
}
