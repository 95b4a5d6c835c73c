// `sluice playground`: the whole system on one machine. A simulated TiKV/PD
// cluster (simkv, three stores, in-process) runs a TiDB-like workload
// (tables of every column type, DDLs and DML) with a region split and a
// leader move halfway; a sluice node serves the API; a changefeed created
// through `sluice cli` replicates everything into canal-json files (or into
// the MySQL URI given); progress is printed live; at the end the node shuts
// down gracefully and the checker compares the output with simkv's ground
// truth at the changefeed's checkpoint.
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>
#include <sstream>

#include "checker/expected.h"
#include "checker/mysql_reader.h"
#include "checker/storage_state.h"
#include "checker/table_state.h"
#include "cli/cli.h"
#include "codec/tablecodec.h"
#include "common/logging.h"
#include "common/tso.h"
#include "kvclient/meta_reader.h"
#include "kvclient/snapshot_reader.h"
#include "progress.h"
#include "server/server.h"
#include "simkv/ground_truth.h"
#include "simkv/sim_cluster.h"
#include "simkv/sql_render.h"
#include "simkv/workload.h"
#include "sink/sink_uri.h"
#include "sink/storage/storage_options.h"
#include "sink/storage/storage_reader.h"
#include "sluice/commands.h"

namespace sluice::app {

namespace {

constexpr const char* kChangefeed = "playground";

struct Options {
  std::string output;
  std::string sink_uri;  // Empty: canal-json files under <output>/output.
  int txns = 600;
  uint64_t seed = 1;
};

simkv::WorkloadOptions PlaygroundWorkload(uint64_t seed) {
  simkv::WorkloadOptions w;
  w.seed = seed;
  w.database = "shop";
  w.narrow_tables = 2;
  w.kitchen_sink_table = true;
  w.clustered_table = true;
  w.dml.rows_per_txn = 4;
  w.ddl_every = 40;
  using simkv::DdlKind;
  for (DdlKind kind : {DdlKind::kCreateTable, DdlKind::kAddColumn, DdlKind::kDropColumn,
                       DdlKind::kTruncateTable, DdlKind::kAddColumn, DdlKind::kDropTable}) {
    simkv::DdlRequest r;
    r.kind = kind;
    w.ddl_list.push_back(r);
  }
  w.ddl_weights.fill(0);  // Only the list above.
  return w;
}

// Splits the region holding the middle of `table` and moves the leader of
// its upper half: the puller sees EpochNotMatch and NotLeader and recovers.
Status Disturb(simkv::SimCluster& cluster, int64_t table_id) {
  std::string key = codec::EncodeRowKey(TableId(table_id), 500);
  ASSIGN_OR_RETURN(simkv::RegionInfo region,
                   cluster.regions().RegionForKey(ToComparable(Span{key, ""}).start));
  ASSIGN_OR_RETURN(auto halves, cluster.Split(region.id, key));
  StoreId next(halves.second.leader.value() % cluster.store_ids().size() + 1);
  return cluster.TransferLeader(halves.second.id, next).status();
}

// Runs `sluice cli` in-process; its output is echoed with a prefix.
Status Cli(const std::vector<std::string>& args) {
  std::ostringstream out;
  std::ostringstream err;
  const int rc = cli::RunCli(args, out, err);
  std::cout << "  $ sluice cli";
  for (const std::string& a : args) std::cout << " " << a;
  std::cout << "\n";
  if (rc != 0) return Internal("sluice cli failed: " + err.str());
  std::istringstream lines(out.str());
  for (std::string line; std::getline(lines, line);) {
    if (line.size() > 100) line = line.substr(0, 97) + "...";
    std::cout << "    " << line << "\n";
  }
  return Status::Ok();
}

double LagSeconds(Ts now, Ts checkpoint) {
  const int64_t ms = tso::Physical(now) - tso::Physical(checkpoint);
  return std::max<int64_t>(ms, 0) / 1000.0;
}

void PrintProgress(const char* phase, double fraction, std::optional<double> rows_per_s,
                   double lag_s) {
  std::printf("\r%s", playground::ProgressLine(phase, fraction, rows_per_s, lag_s).c_str());
  std::fflush(stdout);
}

Result<Ts> Checkpoint(server::Server& node) {
  meta::ChangefeedId id;
  id.name = kChangefeed;
  ASSIGN_OR_RETURN(coordinator::ChangefeedView view, node.coordinator()->GetChangefeed(id));
  if (view.info.state == meta::FeedState::kFailed) {
    return Internal("changefeed failed: " + (view.info.error ? view.info.error->message : ""));
  }
  return view.status.checkpoint_ts;
}

struct Run;
Ts NowTs(Run& run);

struct Run {
  Options opt;
  std::unique_ptr<simkv::SimCluster> cluster;
  simkv::GroundTruth truth;
  std::unique_ptr<simkv::Workload> workload;
  std::unique_ptr<server::Server> node;
  std::string sink_uri;
  Ts start_ts;
  Ts checkpoint;
};

Ts NowTs(Run& run) {
  Result<Ts> ts = run.cluster->tso().Allocate();
  return ts.ok() ? *ts : run.cluster->tso().Max();
}

Status PrepareDownstream(Run& run) {
  ASSIGN_OR_RETURN(sink::SinkUri uri, sink::SinkUri::Parse(run.sink_uri));
  if (uri.scheme != "mysql" && uri.scheme != "tidb") return Status::Ok();
  const std::string db = simkv::QuoteName(PlaygroundWorkload(run.opt.seed).database);
  std::vector<std::string> sql = {"DROP DATABASE IF EXISTS " + db, "CREATE DATABASE " + db,
                                  "DROP DATABASE IF EXISTS tidb_cdc"};
  for (const simkv::WorkloadTable& t : run.workload->Tables()) {
    sql.push_back("USE " + simkv::QuoteName(t.database));
    sql.push_back(simkv::CreateTableSql(t.info));
  }
  return checker::ExecSql(run.sink_uri, sql);
}

Status RunWorkload(Run& run) {
  const auto begin = std::chrono::steady_clock::now();
  for (int i = 0; i < run.opt.txns; ++i) {
    RETURN_IF_ERROR(run.workload->Step());
    if (i == run.opt.txns / 2) {
      RETURN_IF_ERROR(Disturb(*run.cluster, run.workload->Tables().front().info.id));
    }
    if (i % 20 == 0 || i + 1 == run.opt.txns) {
      const simkv::WorkloadStats w = run.workload->stats();
      const double secs =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
      const double rows = static_cast<double>(w.rows_inserted + w.rows_updated + w.rows_deleted);
      ASSIGN_OR_RETURN(Ts checkpoint, Checkpoint(*run.node));
      PrintProgress("workload", (i + 1.0) / run.opt.txns, rows / std::max(secs, 1e-3),
                    LagSeconds(NowTs(run), checkpoint));
    }
  }
  std::printf("\n");
  return run.workload->CommitLongTxns();
}

// Waits until the changefeed checkpoint passes every commit so far.
Status WaitCaughtUp(Run& run) {
  const Ts target = NowTs(run);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(3);
  ASSIGN_OR_RETURN(const Ts first, Checkpoint(*run.node));
  while (true) {
    ASSIGN_OR_RETURN(Ts checkpoint, Checkpoint(*run.node));
    PrintProgress("catch-up", playground::CatchUpFraction(first, target, checkpoint), std::nullopt,
                  LagSeconds(target, checkpoint));
    if (checkpoint >= target) {
      std::printf("\n");
      run.checkpoint = checkpoint;
      return Status::Ok();
    }
    if (std::chrono::steady_clock::now() > deadline) {
      std::printf("\n");
      return Timeout("the changefeed did not catch up within 3 minutes");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
}

Result<checker::DiffReport> Check(Run& run) {
  pd::PdClientOptions pd_options;
  pd_options.endpoints = {run.cluster->pd_address()};
  ASSIGN_OR_RETURN(std::unique_ptr<pd::PdClient> pd, pd::PdClient::Connect(pd_options));
  pd::RegionCache cache(pd.get());
  kvclient::SnapshotReader reader(pd.get(), &cache, kvclient::SnapshotReaderOptions{});
  kvclient::KvMetaReader meta(pd.get(), &reader);
  Result<kvclient::MetaSnapshot> schema = meta.Read(run.checkpoint);
  Result<checker::DatabaseState> actual = Internal("unread");
  Result<checker::DatabaseState> expected = Internal("unread");
  if (schema.ok()) expected = checker::ExpectedState(run.truth, *schema, run.checkpoint);
  if (expected.ok()) {
    ASSIGN_OR_RETURN(sink::SinkUri uri, sink::SinkUri::Parse(run.sink_uri));
    if (uri.scheme == "file") {
      ASSIGN_OR_RETURN(auto sink_options, sink::storage::StorageSinkOptions::FromUri(uri));
      actual = checker::ReadStorageState(
          uri.path, sink::storage::ReaderOptions::FromSinkOptions(sink_options), *expected);
    } else {
      actual = checker::ReadMysqlState(run.sink_uri, *expected,
                                       {PlaygroundWorkload(run.opt.seed).database});
    }
  }
  reader.Stop();
  pd->Stop();
  RETURN_IF_ERROR(schema.status());
  RETURN_IF_ERROR(expected.status());
  RETURN_IF_ERROR(actual.status());
  return checker::Compare(*expected, *actual);
}

Status Play(const Options& opt) {
  Run run;
  run.opt = opt;
  std::filesystem::path root(opt.output);
  // Each run has a new upstream: what an earlier run left means nothing.
  std::error_code ec;
  std::filesystem::remove_all(root / "sluice-data", ec);
  std::filesystem::remove_all(root / "output", ec);
  run.sink_uri = opt.sink_uri.empty() ? "file://" + (root / "output").string() +
                                            "?protocol=canal-json&flush-interval=200ms"
                                      : opt.sink_uri;
  std::cout << "sluice playground: simkv (3 stores) -> sluice server -> " << run.sink_uri << "\n";
  simkv::SimClusterOptions cluster_options;
  cluster_options.resolved_ts_interval = std::chrono::milliseconds(100);
  ASSIGN_OR_RETURN(run.cluster, simkv::SimCluster::Start(cluster_options));
  run.cluster->mvcc().AddObserver(&run.truth);
  run.workload = std::make_unique<simkv::Workload>(&run.cluster->mvcc(), &run.cluster->tso(),
                                                   PlaygroundWorkload(opt.seed));
  RETURN_IF_ERROR(run.workload->Setup());
  // The changefeed starts once the workload's first tables exist; a MySQL
  // downstream gets them first, as a user loads a snapshot before
  // replicating. Later DDLs are replicated.
  run.start_ts = NowTs(run);
  RETURN_IF_ERROR(PrepareDownstream(run));

  server::ServerOptions server_options;
  server_options.pd_endpoints = {run.cluster->pd_address()};
  server_options.addr = "127.0.0.1:0";
  server_options.data_dir = (root / "sluice-data").string();
  ASSIGN_OR_RETURN(run.node, server::Server::Start(server_options));
  const std::string api = "http://" + run.node->api_address();
  std::cout << "upstream:   PD at " << run.cluster->pd_address() << "\n"
            << "sluice:     node " << run.node->id().value() << ", API at " << api << "\n";
  RETURN_IF_ERROR(
      Cli({"changefeed", "create", "--server", api, "--sink-uri", run.sink_uri, "--changefeed-id",
           kChangefeed, "--start-ts", std::to_string(run.start_ts.value()), "--no-confirm"}));

  Status st = RunWorkload(run);
  if (st.ok()) st = WaitCaughtUp(run);
  if (st.ok()) st = Cli({"changefeed", "query", "--server", api, "-c", kChangefeed, "--simple"});
  run.node->Stop();  // Graceful: the last checkpoint is persisted.
  run.cluster->mvcc().RemoveObserver(&run.truth);
  RETURN_IF_ERROR(st);
  RETURN_IF_ERROR(run.truth.ExportToFile((root / "ground-truth.jsonl").string()));

  ASSIGN_OR_RETURN(checker::DiffReport report, Check(run));
  const simkv::WorkloadStats w = run.workload->stats();
  std::cout << "upstream:   " << w.txns << " transactions (" << w.rows_inserted << " inserts, "
            << w.rows_updated << " updates, " << w.rows_deleted << " deletes), " << w.ddls
            << " DDLs; one region split and one leader move halfway\n"
            << "output:     " << run.sink_uri << "\n"
            << "checkpoint: " << run.checkpoint.value() << "\n";
  report.Print(std::cout, 10);
  std::cout << "checker:    " << report.rows_compared << " rows, " << report.differences.size()
            << " differences\n";
  run.workload.reset();
  run.cluster->Stop();
  if (!report.ok()) return Internal("the output differs from the ground truth");
  return Status::Ok();
}

}  // namespace

int RunPlayground(const std::vector<std::string>& args) {
  Options opt;
  CLI::App app("sluice playground: simulated upstream -> sluice -> local output, checked",
               "sluice playground");
  app.add_option("--output", opt.output, "working directory (default: a new temp dir)");
  app.add_option("--sink-uri", opt.sink_uri,
                 "replicate into this sink instead of files (e.g. mysql://root@127.0.0.1:3306/)");
  app.add_option("--txns", opt.txns, "workload steps")->check(CLI::Range(1, 10000000));
  app.add_option("--seed", opt.seed, "workload seed");
  std::vector<std::string> reversed(args.rbegin(), args.rend());
  try {
    app.parse(reversed);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  if (opt.output.empty()) {
    char tmpl[] = "/tmp/sluice-playground.XXXXXX";
    if (mkdtemp(tmpl) == nullptr) {
      std::cerr << "sluice playground: cannot create a temp dir\n";
      return 1;
    }
    opt.output = tmpl;
  }
  if (Status st = logging::Init(logging::Level::kWarn, opt.output + "/sluice.log"); !st.ok()) {
    std::cerr << "sluice playground: " << st.ToString() << "\n";
    return 1;
  }
  std::cout << "logs:       " << opt.output << "/sluice.log\n";
  Status st = Play(opt);
  if (!st.ok()) {
    std::cerr << "sluice playground: " << st.ToString() << "\n";
    return 1;
  }
  std::cout << "verdict:    the output matches the upstream at the checkpoint\n";
  return 0;
}

}  // namespace sluice::app
