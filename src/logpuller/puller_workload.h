// A seeded workload and fault schedule for puller scenarios: writers commit
// random transactions over several tables (some hold their locks for a
// while, some roll back) and a fault thread, paced by the writers' progress,
// splits, merges, moves leaders, restarts stores, makes them busy, breaks
// streams, bumps epochs and congests stores.
#pragma once

#include <cstdint>
#include <vector>

#include "common/thread_annotations.h"
#include "simkv/sim_cluster.h"

namespace sluice::logpuller::testing {

struct ScenarioShape {
  int tables = 4;
  int64_t table_base = 200;  // Tables are table_base .. table_base + tables - 1.
  int64_t handles = 400;     // Row handles per table: 0 .. handles - 1.
  TableId TableAt(int i) const { return TableId(table_base + i); }
};

// Counts committed transactions so that faults can be paced by the workload.
struct Progress {
  Mutex mu;
  CondVar cv;
  int64_t commits GUARDED_BY(mu) = 0;
  bool writers_done GUARDED_BY(mu) = false;

  void Add() EXCLUDES(mu);
  void Done() EXCLUDES(mu);
  // Waits until `target` commits happened or the writers are done.
  bool WaitFor(int64_t target) EXCLUDES(mu);
};

// Runs `txns` random transactions; returns when done.
void RunWriter(simkv::SimCluster& cluster, const ScenarioShape& shape, uint64_t seed, int txns,
               Progress& progress);
// Injects faults until the writers are done.
void RunFaults(simkv::SimCluster& cluster, const ScenarioShape& shape, uint64_t seed,
               Progress& progress);
// Seeds from SLUICE_SCENARIO_SEEDS: a comma-separated list of seeds and
// ranges ("1,2,3", "1-40"); "1,2,3" when unset.
std::vector<uint64_t> ScenarioSeeds();
// "_<tag>" from SLUICE_SCENARIO_TAG, or "" when unset: a second registration
// of a scenario binary (its long seed list) puts it in its scratch
// directories and databases, so that both registrations can run at once.
std::string ScenarioTagSuffix();

// Brings every store back up and clears busy flags.
Status HealCluster(simkv::SimCluster& cluster);

}  // namespace sluice::logpuller::testing
