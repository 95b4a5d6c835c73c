// sluice-demo: the end-to-end demo of what exists today (the playground
// replaces it once the server exists). A simulated TiKV/PD cluster (three
// stores) runs simkv's TiDB-like workload: tables of every column type, DDLs
// (create, add/drop column, truncate, drop) and DML transactions. One
// changefeed's data path replicates it into files: the log puller over the
// real CDC gRPC protocol, the RocksDB event store, the schema store, the
// event service and the dispatchers writing to the storage sink (canal-json
// or csv), with the DDL barrier played by the driver the scenario tests use
// until the maintainer exists. Halfway through, a region is split and its
// leader moved. At the end the checker reads the files back and compares
// them with simkv's ground truth at the changefeed checkpoint.
//   sluice-demo --output DIR [--txns N] [--seed S] [--protocol canal-json|csv]
#include <CLI/CLI.hpp>
#include <filesystem>
#include <iostream>

#include "checker/expected.h"
#include "checker/storage_state.h"
#include "codec/tablecodec.h"
#include "datapath/datapath_driver.h"
#include "kvclient/meta_reader.h"
#include "kvclient/snapshot_reader.h"
#include "logpuller/subscription_client.h"
#include "pd/pd_client.h"
#include "pd/region_cache.h"
#include "simkv/ground_truth.h"
#include "simkv/sim_cluster.h"
#include "simkv/workload.h"
#include "sink/storage/storage_sink.h"

namespace sluice::demo {
namespace {

struct Options {
  std::string output;
  int txns = 600;
  uint64_t seed = 1;
  std::string protocol = "canal-json";
};

simkv::WorkloadOptions DemoWorkload(uint64_t seed) {
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

// What sluice needs from the upstream: PD client, region cache, puller.
struct Upstream {
  std::unique_ptr<pd::PdClient> pd;
  std::unique_ptr<pd::RegionCache> cache;
  std::unique_ptr<logpuller::SubscriptionClient> puller;

  ~Upstream() {
    if (puller) puller->Stop();
    if (pd) pd->Stop();
  }
};

Result<std::unique_ptr<Upstream>> Connect(const simkv::SimCluster& cluster) {
  auto u = std::make_unique<Upstream>();
  pd::PdClientOptions pd_options;
  pd_options.endpoints = {cluster.pd_address()};
  ASSIGN_OR_RETURN(u->pd, pd::PdClient::Connect(pd_options));
  u->cache = std::make_unique<pd::RegionCache>(u->pd.get());
  logpuller::SubscriptionClientOptions puller_options;
  u->puller =
      std::make_unique<logpuller::SubscriptionClient>(puller_options, u->pd.get(), u->cache.get());
  u->puller->Start();
  return u;
}

// Reads the output back and compares it with the ground truth at `ts`.
Result<checker::DiffReport> Check(const simkv::GroundTruth& truth, Upstream& up, Ts ts,
                                  const std::string& out_dir,
                                  const sink::storage::StorageSinkOptions& sink_options) {
  kvclient::SnapshotReader reader(up.pd.get(), up.cache.get(), kvclient::SnapshotReaderOptions{});
  kvclient::KvMetaReader meta(up.pd.get(), &reader);
  ASSIGN_OR_RETURN(kvclient::MetaSnapshot schema, meta.Read(ts));
  ASSIGN_OR_RETURN(checker::DatabaseState expected, checker::ExpectedState(truth, schema, ts));
  ASSIGN_OR_RETURN(
      checker::DatabaseState actual,
      checker::ReadStorageState(
          out_dir, sink::storage::ReaderOptions::FromSinkOptions(sink_options), expected));
  return checker::Compare(expected, actual);
}

Status RunWorkload(const Options& opt, simkv::SimCluster& cluster, simkv::Workload& workload) {
  for (int i = 0; i < opt.txns; ++i) {
    RETURN_IF_ERROR(workload.Step());
    if (i == opt.txns / 2) RETURN_IF_ERROR(Disturb(cluster, workload.Tables().front().info.id));
  }
  return workload.CommitLongTxns();
}

Status Run(const Options& opt) {
  std::cout << "sluice-demo: simkv's TiDB workload through one changefeed's data path into "
            << opt.protocol << " files (the full playground arrives with the server)\n";
  std::filesystem::path root(opt.output);
  const std::string out_dir = (root / "output").string();
  simkv::SimClusterOptions cluster_options;
  cluster_options.resolved_ts_interval = std::chrono::milliseconds(100);
  ASSIGN_OR_RETURN(auto cluster, simkv::SimCluster::Start(cluster_options));
  simkv::GroundTruth truth;
  cluster->mvcc().AddObserver(&truth);
  simkv::Workload workload(&cluster->mvcc(), &cluster->tso(), DemoWorkload(opt.seed));
  RETURN_IF_ERROR(workload.Setup());
  ASSIGN_OR_RETURN(auto up, Connect(*cluster));
  ASSIGN_OR_RETURN(Ts start_ts, up->pd->GetTs());

  ASSIGN_OR_RETURN(sink::SinkUri uri, sink::SinkUri::Parse("file://" + out_dir + "?protocol=" +
                                                           opt.protocol + "&flush-interval=200ms"));
  ASSIGN_OR_RETURN(auto sink_options, sink::storage::StorageSinkOptions::FromUri(uri));
  ASSIGN_OR_RETURN(auto sink, sink::storage::StorageSink::Create(sink_options, Clock::Real()));
  testing::DataPathOptions path_options;
  path_options.data_dir = (root / "sluice-data").string();
  path_options.start_ts = start_ts;
  path_options.pd = up->pd.get();
  path_options.cache = up->cache.get();
  path_options.puller = up->puller.get();
  path_options.sink = sink.get();
  ASSIGN_OR_RETURN(auto path, testing::DataPathDriver::Start(path_options));

  RETURN_IF_ERROR(RunWorkload(opt, *cluster, workload));
  ASSIGN_OR_RETURN(Ts last, up->pd->GetTs());
  RETURN_IF_ERROR(path->WaitCheckpoint(last, std::chrono::seconds(120)));
  const Ts checkpoint = path->checkpoint();
  const testing::DataPathStats path_stats = path->stats();
  const auto puller = up->puller->stats();
  path->Stop();
  sink->Close();
  RETURN_IF_ERROR(truth.ExportToFile((root / "ground-truth.jsonl").string()));
  cluster->mvcc().RemoveObserver(&truth);

  ASSIGN_OR_RETURN(checker::DiffReport report,
                   Check(truth, *up, checkpoint, out_dir, sink_options));
  simkv::WorkloadStats w = workload.stats();
  std::cout << "upstream:   " << w.txns << " transactions (" << w.rows_inserted << " inserts, "
            << w.rows_updated << " updates, " << w.rows_deleted << " deletes), " << w.ddls
            << " DDLs, on " << cluster->store_ids().size()
            << " stores; one split and one leader move halfway\n"
            << "puller:     " << puller.subscriptions << " spans subscribed over "
            << puller.region_states << " regions, " << puller.region_errors
            << " region errors handled\n"
            << "data path:  checkpoint " << checkpoint.value() << ", " << path_stats.barriers
            << " DDL barriers, " << path_stats.tables_added << " table dispatchers added, "
            << path_stats.tables_removed << " removed\n"
            << "output:     " << out_dir << "\n";
  report.Print(std::cout, 10);
  std::cout << "checker:    " << report.rows_compared << " rows, " << report.differences.size()
            << " differences\n";
  up.reset();
  cluster->Stop();
  if (!report.ok()) return Internal("the output differs from the ground truth");
  return Status::Ok();
}

}  // namespace
}  // namespace sluice::demo

int main(int argc, char** argv) {
  sluice::demo::Options opt;
  CLI::App app("sluice-demo: simkv's TiDB workload through the changefeed data path into files");
  app.add_option("--output", opt.output, "output directory")->required();
  app.add_option("--txns", opt.txns, "workload steps to run")->check(CLI::Range(1, 10000000));
  app.add_option("--seed", opt.seed, "workload seed");
  app.add_option("--protocol", opt.protocol, "output protocol")
      ->check(CLI::IsMember({"canal-json", "csv"}));
  CLI11_PARSE(app, argc, argv);
  sluice::Status st = sluice::demo::Run(opt);
  if (!st.ok()) {
    std::cerr << "sluice-demo: " << st.ToString() << "\n";
    return 1;
  }
  return 0;
}
