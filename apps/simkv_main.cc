// simkv: a simulated TiKV/PD cluster on loopback with a seeded workload, a
// random fault schedule and an HTTP control API (src/simkv/README.md,
// "Control"). Prints one line per endpoint, runs until --duration passes or
// SIGINT/SIGTERM, then stops the workload, exports the ground truth and
// shuts everything down.
#include <signal.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "codec/tablecodec.h"
#include "common/memcomparable.h"
#include "simkv/control_server.h"
#include "simkv/fault_schedule.h"
#include "simkv/ground_truth.h"
#include "simkv/sim_cluster.h"
#include "simkv/workload.h"

namespace sluice::simkv {
namespace {

struct Flags {
  size_t stores = 3;
  size_t regions = 1;
  uint64_t seed = 1;
  int64_t tick_ms = 200;
  std::string pd_addr;
  int store_port_base = 0;
  std::string control_addr = "127.0.0.1:0";
  double txns_per_s = 100;
  int rows_per_txn = 4;
  int64_t row_width = 64;
  int tables = 2;
  std::string database = "workload";
  bool paused = false;
  double hot_key_fraction = 0;
  std::string mix = "50:40:10";
  int64_t key_space = 10000;
  bool sequential_keys = false;
  bool no_kitchen_sink = false;
  uint64_t ddl_every = 0;
  std::string faults;
  double duration_s = 0;
  std::string ground_truth;
};

void AddFlags(CLI::App& app, Flags& f) {
  app.add_option("--stores", f.stores, "number of stores")->check(CLI::Range(1, 64));
  app.add_option("--regions", f.regions, "initial regions")->check(CLI::Range(1, 4096));
  app.add_option("--seed", f.seed, "seed of the workload and the fault schedule");
  app.add_option("--tick", f.tick_ms, "resolved ts interval, e.g. 200ms (0 = none)")
      ->transform(CLI::AsNumberWithUnit(std::map<std::string, int64_t>{{"ms", 1}, {"s", 1000}}))
      ->check(CLI::Range(0, 3600000));
  app.add_option("--pd-addr", f.pd_addr, "PD address (only an ephemeral port is supported)");
  app.add_option("--store-port-base", f.store_port_base,
                 "first store port (only 0, ephemeral, is supported)")
      ->check(CLI::Range(0, 0));
  app.add_option("--control-addr", f.control_addr, "control API host:port");
  app.add_option("--txns-per-s", f.txns_per_s, "DML transactions per second (0 = off)")
      ->check(CLI::Range(0.0, 1e7));
  app.add_option("--rows-per-txn", f.rows_per_txn)->check(CLI::Range(1, 100000));
  app.add_option("--row-width", f.row_width, "padding bytes per row")
      ->check(CLI::Range(0, 1 << 20));
  app.add_option("--tables", f.tables, "narrow tables")->check(CLI::Range(1, 1000));
  app.add_option("--database", f.database, "the workload's database");
  app.add_flag("--paused", f.paused, "set up the tables, start DML only on POST /workload/start");
  app.add_option("--hot-key-fraction", f.hot_key_fraction, "share of rows on hot keys")
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--mix", f.mix, "insert:update:delete weights");
  app.add_option("--key-space", f.key_space, "handles per table (1..N)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 50));
  app.add_flag("--no-kitchen-sink", f.no_kitchen_sink,
               "only the narrow tables (no table of every column type)");
  app.add_flag("--sequential-keys", f.sequential_keys,
               "handles 1, 2, 3, ... as an AUTO_INCREMENT key gives (with --mix 100:0:0 every "
               "row is new)");
  app.add_option("--ddl-every", f.ddl_every, "a DDL after every N transactions (0 = none)");
  app.add_option("--faults", f.faults, "fault schedule spec, e.g. split=3,merge=2;interval=500ms");
  app.add_option("--duration", f.duration_s, "time to run, e.g. 2s (0 = until SIGINT/SIGTERM)")
      ->transform(
          CLI::AsNumberWithUnit(std::map<std::string, double>{{"ms", 0.001}, {"s", 1}, {"m", 60}}))
      ->check(CLI::Range(0.0, 1e9));
  app.add_option("--ground-truth", f.ground_truth, "file to export the ground truth to at exit");
}

Status ParseMix(const std::string& mix, DmlOptions* dml) {
  int i = 0, u = 0, d = 0;
  char tail = 0;
  if (std::sscanf(mix.c_str(), "%d:%d:%d%c", &i, &u, &d, &tail) != 3 || i < 0 || u < 0 || d < 0 ||
      i + u + d == 0) {
    return InvalidArgument("--mix: expected insert:update:delete weights, got '" + mix + "'");
  }
  dml->insert_weight = i;
  dml->update_weight = u;
  dml->delete_weight = d;
  return Status::Ok();
}

Result<WorkloadOptions> MakeWorkloadOptions(const Flags& f) {
  WorkloadOptions o;
  o.seed = f.seed;
  o.narrow_tables = f.tables;
  o.database = f.database;
  o.rate = f.txns_per_s;
  o.dml.rows_per_txn = f.rows_per_txn;
  o.dml.key_space = f.key_space;
  o.row_width = f.row_width;
  if (f.sequential_keys && f.hot_key_fraction > 0) {
    return InvalidArgument("--sequential-keys and --hot-key-fraction exclude each other");
  }
  if (f.sequential_keys) o.dml.distribution = KeyDistribution::kSequential;
  o.kitchen_sink_table = !f.no_kitchen_sink;
  if (f.hot_key_fraction > 0) {
    o.dml.distribution = KeyDistribution::kHot;
    o.dml.hot_fraction = f.hot_key_fraction;
  }
  o.ddl_every = f.ddl_every;
  RETURN_IF_ERROR(ParseMix(f.mix, &o.dml));
  return o;
}

Result<ControlServerOptions> ParseControlAddr(const std::string& addr) {
  size_t colon = addr.rfind(':');
  int port = -1;
  if (colon != std::string::npos) {
    try {
      port = std::stoi(addr.substr(colon + 1));
    } catch (const std::exception&) {
      port = -1;
    }
  }
  if (colon == std::string::npos || colon == 0 || port < 0 || port > 65535) {
    return InvalidArgument("--control-addr: expected host:port, got '" + addr + "'");
  }
  return ControlServerOptions{.host = addr.substr(0, colon), .port = port};
}

// Splits the cluster into `n` regions at the workload's table boundaries,
// then inside the tables by handle.
void SplitInitialRegions(SimCluster& cluster, const Workload& workload, size_t n,
                         int64_t key_space) {
  std::vector<std::string> keys;
  std::vector<WorkloadTable> tables = workload.Tables();
  for (const WorkloadTable& t : tables)
    keys.push_back(codec::EncodeRecordPrefix(TableId(t.info.id)));
  for (int64_t parts = 2; keys.size() + 1 < n && !tables.empty(); ++parts) {
    for (const WorkloadTable& t : tables) {
      keys.push_back(codec::EncodeRowKey(TableId(t.info.id), key_space * (parts - 1) / parts));
    }
  }
  for (size_t i = 0; i < keys.size() && cluster.regions().size() < n; ++i) {
    Result<RegionInfo> r = cluster.regions().RegionForKey(memcomparable::EncodeBytes(keys[i]));
    if (r.ok()) cluster.Split(r->id, keys[i]).status().IgnoreError();
  }
}

// Waits for SIGINT/SIGTERM (blocked in every thread) or the duration.
void WaitForEnd(const sigset_t& signals, double duration_s) {
  if (duration_s <= 0) {
    int sig = 0;
    sigwait(&signals, &sig);
    return;
  }
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(duration_s);
  while (true) {
    auto left = deadline - std::chrono::steady_clock::now();
    if (left <= std::chrono::steady_clock::duration::zero()) return;
    auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(left).count();
    timespec ts{.tv_sec = static_cast<time_t>(ns / 1000000000), .tv_nsec = ns % 1000000000};
    if (sigtimedwait(&signals, nullptr, &ts) > 0) return;
  }
}

int Run(const Flags& f, const sigset_t& signals) {
  Result<WorkloadOptions> wopts = MakeWorkloadOptions(f);
  Result<ControlServerOptions> copts = ParseControlAddr(f.control_addr);
  FaultScheduleOptions base;
  base.seed = f.seed;
  Result<FaultScheduleOptions> fopts = ParseFaultSpec(f.faults, base);
  for (const Status& st : {wopts.status(), copts.status(), fopts.status()}) {
    if (!st.ok()) {
      std::fprintf(stderr, "simkv: %s\n", std::string(st.message()).c_str());
      return 2;
    }
  }
  if (!f.pd_addr.empty() && f.pd_addr != "127.0.0.1:0") {
    std::fprintf(stderr, "simkv: --pd-addr: only 127.0.0.1:0 (ephemeral) is supported\n");
    return 2;
  }
  SimClusterOptions options;
  options.num_stores = f.stores;
  options.replicas = std::min<size_t>(3, f.stores);
  options.resolved_ts_interval = std::chrono::milliseconds(f.tick_ms);
  auto cluster = SimCluster::Start(options);
  if (!cluster.ok()) {
    std::fprintf(stderr, "simkv: %s\n", cluster.status().ToString().c_str());
    return 1;
  }
  GroundTruth truth;
  (*cluster)->mvcc().AddObserver(&truth);
  Workload workload(&(*cluster)->mvcc(), &(*cluster)->tso(), *wopts);
  Status setup = workload.Setup();
  if (!setup.ok()) {
    std::fprintf(stderr, "simkv: workload setup: %s\n", setup.ToString().c_str());
    return 1;
  }
  SplitInitialRegions(**cluster, workload, f.regions, wopts->dml.key_space);
  FaultSchedule faults(cluster->get(), *fopts);
  ControlServer control(cluster->get(), &workload, &truth, &faults);
  Status st = control.Start(*copts);
  if (!st.ok()) {
    std::fprintf(stderr, "simkv: %s\n", st.ToString().c_str());
    return 1;
  }
  std::printf("pd %s\n", (*cluster)->pd_address().c_str());
  for (StoreId id : (*cluster)->store_ids()) {
    std::printf("store %lu %s\n", static_cast<unsigned long>(id.value()),
                (*cluster)->store_address(id).c_str());
  }
  std::printf("control http://%s\n", control.address().c_str());
  std::fflush(stdout);
  faults.Start();
  if (f.txns_per_s > 0 && !f.paused) control.StartWorkload(RunLimit{}).IgnoreError();

  WaitForEnd(signals, f.duration_s);

  Status wst = control.StopWorkload();
  faults.Stop();
  control.Stop();
  int rc = 0;
  if (!wst.ok() && wst.code() != Code::kCancelled) {
    std::fprintf(stderr, "simkv: workload: %s\n", wst.ToString().c_str());
  }
  if (!f.ground_truth.empty()) {
    Status ex = truth.ExportToFile(f.ground_truth);
    if (!ex.ok()) {
      std::fprintf(stderr, "simkv: ground truth: %s\n", ex.ToString().c_str());
      rc = 1;
    }
  }
  (*cluster)->Stop();
  (*cluster)->mvcc().RemoveObserver(&truth);
  std::printf("simkv: stopped (%zu changes, %zu faults)\n", truth.size(), faults.records().size());
  return rc;
}

}  // namespace
}  // namespace sluice::simkv

int main(int argc, char** argv) {
  CLI::App app{"simkv: a simulated TiKV/PD cluster"};
  sluice::simkv::Flags flags;
  sluice::simkv::AddFlags(app, flags);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);  // Prints help or the error.
    return rc == 0 ? 0 : 2;
  }
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  return sluice::simkv::Run(flags, signals);
}
