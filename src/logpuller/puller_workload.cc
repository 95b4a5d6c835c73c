#include "logpuller/puller_workload.h"

#include <fmt/format.h>

#include <cstdlib>
#include <optional>
#include <random>
#include <sstream>
#include <string>

#include "codec/tablecodec.h"

namespace sluice::logpuller::testing {

void Progress::Add() {
  MutexLock lock(&mu);
  ++commits;
  cv.SignalAll();
}

void Progress::Done() {
  MutexLock lock(&mu);
  writers_done = true;
  cv.SignalAll();
}

bool Progress::WaitFor(int64_t target) {
  MutexLock lock(&mu);
  while (commits < target && !writers_done) cv.Wait(&mu);
  return commits >= target;
}

void RunWriter(simkv::SimCluster& cluster, const ScenarioShape& shape, uint64_t seed, int txns,
               Progress& progress) {
  std::mt19937_64 rng(seed);
  std::optional<simkv::Txn> held;  // A transaction holding its locks for a while.
  int held_for = 0;
  for (int i = 0; i < txns; ++i) {
    auto txn = cluster.txn().Begin();
    if (!txn.ok()) continue;
    int rows = 1 + static_cast<int>(rng() % 5);
    for (int r = 0; r < rows; ++r) {
      TableId table = shape.TableAt(static_cast<int>(rng() % static_cast<uint64_t>(shape.tables)));
      int64_t handle = static_cast<int64_t>(rng() % static_cast<uint64_t>(shape.handles));
      std::string key = codec::EncodeRowKey(table, handle);
      if (rng() % 5 == 0) {
        txn.value().Delete(std::move(key));
      } else {
        txn.value().Put(std::move(key), fmt::format("v{}-{}", seed, i));
      }
    }
    if (!held.has_value() && rng() % 10 == 0) {
      if (cluster.txn().Prewrite(txn.value()).ok()) {
        held = std::move(txn).value();
        held_for = 5 + static_cast<int>(rng() % 20);
      }
      continue;
    }
    if (cluster.txn().Commit(txn.value()).ok()) progress.Add();
    if (held.has_value() && --held_for <= 0) {
      if (rng() % 4 == 0) {
        cluster.txn().Rollback(*held).IgnoreError();
      } else if (cluster.txn().Commit(*held).ok()) {
        progress.Add();
      }
      held.reset();
    }
  }
  if (held.has_value()) cluster.txn().Commit(*held).status().IgnoreError();
}

namespace {

void OneFault(simkv::SimCluster& cluster, const ScenarioShape& shape, std::mt19937_64& rng,
              Progress& progress, int64_t target) {
  TableId table = shape.TableAt(static_cast<int>(rng() % static_cast<uint64_t>(shape.tables)));
  int64_t handle = 1 + static_cast<int64_t>(rng() % static_cast<uint64_t>(shape.handles - 1));
  std::string raw = codec::EncodeRowKey(table, handle);
  auto region = cluster.regions().RegionForKey(ToComparable(Span{raw, ""}).start);
  if (!region.ok()) return;
  StoreId store(1 + rng() % cluster.store_ids().size());
  switch (rng() % 8) {
    case 0:
    case 1:
      cluster.Split(region.value().id, raw).status().IgnoreError();
      break;
    case 2:
      if (!region.value().end_key.empty()) {
        auto right = cluster.regions().RegionForKey(region.value().end_key);
        if (right.ok()) cluster.Merge(region.value().id, right.value().id).status().IgnoreError();
      }
      break;
    case 3:
      cluster.TransferLeader(region.value().id, store).status().IgnoreError();
      break;
    case 4:
      cluster.StoreDown(store).IgnoreError();
      progress.WaitFor(target + 2);
      cluster.StoreRestart(store).IgnoreError();
      break;
    case 5:
      cluster.SetStoreBusy(store, "scenario", 10 + rng() % 40).IgnoreError();
      cluster.DropStreams(store).IgnoreError();
      progress.WaitFor(target + 2);
      cluster.ClearStoreBusy(store).IgnoreError();
      break;
    case 6:
      cluster.DropStreams(store).IgnoreError();
      break;
    case 7:
      if (rng() % 2 == 0) {
        cluster.BumpEpoch(region.value().id).status().IgnoreError();
      } else {
        cluster.Congest(store).IgnoreError();
      }
      break;
  }
}

}  // namespace

void RunFaults(simkv::SimCluster& cluster, const ScenarioShape& shape, uint64_t seed,
               Progress& progress) {
  std::mt19937_64 rng(seed * 7919);
  int64_t target = 0;
  while (true) {
    target += 3 + static_cast<int64_t>(rng() % 6);
    if (!progress.WaitFor(target)) break;
    OneFault(cluster, shape, rng, progress, target);
  }
}

std::vector<uint64_t> ScenarioSeeds() {
  const char* env = std::getenv("SLUICE_SCENARIO_SEEDS");
  std::string text = env != nullptr ? env : "1,2,3";
  std::vector<uint64_t> seeds;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    size_t dash = item.find('-');
    if (dash == std::string::npos) {
      seeds.push_back(std::stoull(item));
    } else {
      for (uint64_t s = std::stoull(item.substr(0, dash)); s <= std::stoull(item.substr(dash + 1));
           ++s) {
        seeds.push_back(s);
      }
    }
  }
  return seeds;
}

std::string ScenarioTagSuffix() {
  const char* tag = std::getenv("SLUICE_SCENARIO_TAG");
  return tag != nullptr && *tag != '\0' ? std::string("_") + tag : std::string();
}

Status HealCluster(simkv::SimCluster& cluster) {
  for (StoreId store : cluster.store_ids()) {
    if (!cluster.StoreIsUp(store)) RETURN_IF_ERROR(cluster.StoreRestart(store));
    cluster.ClearStoreBusy(store).IgnoreError();
  }
  return Status::Ok();
}

}  // namespace sluice::logpuller::testing
