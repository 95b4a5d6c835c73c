// sluice-demo: the end-to-end demo of what exists today (the playground
// replaces it once the server exists). A simulated TiKV/PD cluster (three
// stores, several regions) runs Percolator transactions on a TiDB table; the
// log puller subscribes the table's span over the real CDC gRPC protocol and
// feeds the RocksDB event store through the span pipeline; the demo then
// scans the store up to the resolved ts, decodes rows with the table schema,
// writes canal-json and checks the result against simkv's ground truth.
// Halfway through, a region is split and a leader moved.
//   sluice-demo --output DIR [--txns N] [--seed S]
#include <CLI/CLI.hpp>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <random>

#include "apps/demo/row_formatter.h"
#include "apps/demo/workload.h"
#include "codec/model/job.h"
#include "codec/tablecodec.h"
#include "common/thread_annotations.h"
#include "eventstore/event_store.h"
#include "logpuller/subscription_client.h"
#include "pd/pd_client.h"
#include "pd/region_cache.h"
#include "simkv/ground_truth.h"
#include "simkv/mvcc_store.h"
#include "simkv/sim_cluster.h"
#include "simkv/tso_allocator.h"

namespace sluice::demo {
namespace {

struct Options {
  std::string output;
  int txns = 2000;
  uint64_t seed = 1;
};

struct Replica {
  std::map<std::string, nlohmann::json> rows;  // raw key -> row image
  size_t inserts = 0, updates = 0, deletes = 0;
};

Status Deliver(const RowFormatter& formatter, const RawKvEntry& c, std::ofstream& out,
               Replica* replica) {
  ASSIGN_OR_RETURN(nlohmann::json msg, formatter.Format(c));
  out << msg.dump() << "\n";
  const std::string& type = msg["type"].get_ref<const std::string&>();
  if (type == "DELETE") {
    replica->rows.erase(c.key);
    ++replica->deletes;
  } else {
    replica->rows[c.key] = msg["data"][0];
    ++(type == "INSERT" ? replica->inserts : replica->updates);
  }
  return Status::Ok();
}

// The resolved ts the event store notifies for the demo's reader.
class Watermark {
 public:
  void Notify(Ts ts) EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    if (ts > resolved_) resolved_ = ts;
    cv_.SignalAll();
  }
  // Waits (bounded, real time) until the resolved ts reaches `ts`.
  Result<Ts> WaitFor(Ts ts, std::chrono::seconds timeout) EXCLUDES(mu_) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    MutexLock lock(&mu_);
    while (resolved_ < ts) {
      if (cv_.WaitUntil(&mu_, deadline) && resolved_ < ts) {
        return Timeout("resolved ts did not reach the last commit in time");
      }
    }
    return resolved_;
  }

 private:
  Mutex mu_;
  CondVar cv_;
  Ts resolved_ GUARDED_BY(mu_);
};

// Rows of the ground truth at `ts` that the replica lacks or has differently,
// plus rows the replica has and the truth does not.
Result<size_t> CountDifferences(const simkv::GroundTruth& truth, const RowFormatter& formatter,
                                const model::TableInfo& table, Ts ts, const Replica& replica) {
  size_t diffs = 0;
  auto state = truth.StateAt(TableId(table.id), ts);
  for (const auto& [key, value] : state) {
    ASSIGN_OR_RETURN(nlohmann::json want, formatter.RowImage(key, value));
    auto it = replica.rows.find(key);
    if (it == replica.rows.end() || it->second != want) ++diffs;
  }
  for (const auto& [key, row] : replica.rows) {
    if (!state.contains(key)) ++diffs;
  }
  return diffs;
}

// The upstream: three stores, the table split into four regions.
Result<std::unique_ptr<simkv::SimCluster>> StartCluster(const model::TableInfo& table) {
  simkv::SimClusterOptions options;
  options.resolved_ts_interval = std::chrono::milliseconds(50);
  for (int64_t handle : {250, 500, 750}) {
    options.raw_split_keys.push_back(codec::EncodeRowKey(TableId(table.id), handle));
  }
  return simkv::SimCluster::Start(options);
}

// Splits the region holding the middle of the table and moves its leader:
// the puller sees EpochNotMatch and NotLeader and recovers.
Status Disturb(simkv::SimCluster& cluster, const model::TableInfo& table) {
  std::string key = codec::EncodeRowKey(TableId(table.id), 600);
  ASSIGN_OR_RETURN(simkv::RegionInfo region,
                   cluster.regions().RegionForKey(ToComparable(Span{key, ""}).start));
  ASSIGN_OR_RETURN(auto halves, cluster.Split(region.id, key));
  StoreId next(halves.second.leader.value() % cluster.store_ids().size() + 1);
  return cluster.TransferLeader(halves.second.id, next).status();
}

struct Pipeline {
  std::unique_ptr<pd::PdClient> pd;
  std::unique_ptr<pd::RegionCache> cache;
  std::unique_ptr<logpuller::SubscriptionClient> puller;
  std::unique_ptr<eventstore::EventStore> store;

  ~Pipeline() {
    if (store) store->Stop();
    if (puller) puller->Stop();
    if (pd) pd->Stop();
  }
};

Result<std::unique_ptr<Pipeline>> StartPipeline(const simkv::SimCluster& cluster,
                                                const std::string& data_dir) {
  auto p = std::make_unique<Pipeline>();
  pd::PdClientOptions pd_options;
  pd_options.endpoints = {cluster.pd_address()};
  ASSIGN_OR_RETURN(p->pd, pd::PdClient::Connect(pd_options));
  p->cache = std::make_unique<pd::RegionCache>(p->pd.get());
  logpuller::SubscriptionClientOptions puller_options;
  p->puller =
      std::make_unique<logpuller::SubscriptionClient>(puller_options, p->pd.get(), p->cache.get());
  p->puller->Start();
  eventstore::EventStoreOptions store_options;
  store_options.data_dir = data_dir;
  ASSIGN_OR_RETURN(p->store, eventstore::EventStore::Open(store_options, p->puller.get()));
  return p;
}

Status Run(const Options& opt) {
  ASSIGN_OR_RETURN(model::Job job, model::ParseJob(kCreateOrdersJob));
  const model::TableInfo* table = job.FinishedTableInfo();
  if (table == nullptr) return Corruption("demo DDL job carries no table info");
  std::cout << "sluice-demo: the most complete end-to-end demo available today (the full\n"
            << "playground arrives with the server). Table from DDL job " << job.id << ": "
            << job.query << "\n";
  std::filesystem::path root(opt.output);
  ASSIGN_OR_RETURN(auto cluster, StartCluster(*table));
  simkv::GroundTruth truth;
  cluster->mvcc().AddObserver(&truth);
  ASSIGN_OR_RETURN(auto pipeline, StartPipeline(*cluster, (root / "sluice-data").string()));
  ASSIGN_OR_RETURN(Ts start_ts, pipeline->pd->GetTs());
  Watermark watermark;
  const DispatcherId reader{0, 1};
  RETURN_IF_ERROR(pipeline->store->RegisterDispatcher(
      reader, TableId(table->id), codec::ComparableTableRecordSpan(TableId(table->id)), start_ts,
      [&watermark](Ts ts, Ts) { watermark.Notify(ts); }));

  OrdersWorkload workload(*table, opt.seed);
  RETURN_IF_ERROR(workload.Run(opt.txns / 2, &cluster->mvcc(), &cluster->tso()));
  RETURN_IF_ERROR(Disturb(*cluster, *table));
  RETURN_IF_ERROR(workload.Run(opt.txns - opt.txns / 2, &cluster->mvcc(), &cluster->tso()));
  ASSIGN_OR_RETURN(Ts last, pipeline->pd->GetTs());
  ASSIGN_OR_RETURN(Ts resolved, watermark.WaitFor(last, std::chrono::seconds(60)));

  std::filesystem::path dir = root / "shop" / table->name.original;
  std::filesystem::create_directories(dir);
  std::ofstream out(dir / "data.canal-json.jsonl");
  std::ofstream(dir / "schema.json") << model::ToJson(*table) << "\n";
  RowFormatter formatter("shop", *table);
  Replica replica;
  ASSIGN_OR_RETURN(auto it, pipeline->store->GetIterator(reader, start_ts, resolved));
  RawKvEntry entry;
  bool new_txn = false;
  size_t rows = 0;
  while (it->Next(&entry, &new_txn)) {
    RETURN_IF_ERROR(Deliver(formatter, entry, out, &replica));
    ++rows;
  }
  RETURN_IF_ERROR(it->status());
  out.close();
  RETURN_IF_ERROR(truth.ExportToFile((root / "ground-truth.jsonl").string()));
  cluster->mvcc().RemoveObserver(&truth);

  ASSIGN_OR_RETURN(size_t diffs, CountDifferences(truth, formatter, *table, resolved, replica));
  auto stats = pipeline->puller->stats();
  std::cout << "upstream:   " << workload.committed() << " transactions committed, "
            << workload.rolled_back() << " rolled back, on " << cluster->store_ids().size()
            << " stores; one split and one leader move halfway\n"
            << "puller:     " << stats.region_states << " regions subscribed, "
            << stats.region_errors << " region errors handled, "
            << pipeline->store->stats().entries_written << " changes persisted\n"
            << "downstream: " << replica.inserts << " inserts, " << replica.updates << " updates, "
            << replica.deletes << " deletes (" << rows << " rows) up to resolved ts "
            << resolved.value() << "\n"
            << "output:     " << (dir / "data.canal-json.jsonl").string() << "\n"
            << "checker:    " << replica.rows.size() << " rows, " << diffs << " differences\n";
  pipeline.reset();
  cluster->Stop();
  if (diffs != 0) return Internal("replica differs from the ground truth");
  return Status::Ok();
}

}  // namespace
}  // namespace sluice::demo

int main(int argc, char** argv) {
  sluice::demo::Options opt;
  CLI::App app(
      "sluice-demo: TiDB rows from simkv through the log puller and event store to canal-json");
  app.add_option("--output", opt.output, "output directory")->required();
  app.add_option("--txns", opt.txns, "transactions to run")->check(CLI::Range(1, 10000000));
  app.add_option("--seed", opt.seed, "workload seed");
  CLI11_PARSE(app, argc, argv);
  sluice::Status st = sluice::demo::Run(opt);
  if (!st.ok()) {
    std::cerr << "sluice-demo: " << st.ToString() << "\n";
    return 1;
  }
  return 0;
}
