// StoreRegistry: the simulated cluster's TiKV stores as PD knows them: id,
// client gRPC address and state. PD's GetStore / GetAllStores answer from it;
// SimCluster fills in each store's address once its server is bound.
//
// Thread-safe: one mutex guards all state; accessors return copies.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/strong_id.h"
#include "common/thread_annotations.h"

namespace sluice::simkv {

// metapb.StoreState.
enum class StoreState : uint8_t { kUp = 0, kOffline = 1, kTombstone = 2 };

struct StoreInfo {
  StoreId id;
  std::string address;  // "127.0.0.1:<port>", what clients dial for EventFeed.
  StoreState state = StoreState::kUp;
  std::string version = "8.5.0";
};

class StoreRegistry {
 public:
  StoreRegistry() = default;
  StoreRegistry(const StoreRegistry&) = delete;
  StoreRegistry& operator=(const StoreRegistry&) = delete;

  // Adds or replaces a store.
  void Put(StoreInfo info) EXCLUDES(mu_);
  // NotFound for an unknown store.
  Status SetAddress(StoreId id, std::string address) EXCLUDES(mu_);
  Status SetState(StoreId id, StoreState state) EXCLUDES(mu_);

  std::optional<StoreInfo> Get(StoreId id) const EXCLUDES(mu_);
  // Every store, ordered by id.
  std::vector<StoreInfo> All() const EXCLUDES(mu_);

 private:
  mutable Mutex mu_;
  std::map<StoreId, StoreInfo> stores_ GUARDED_BY(mu_);
};

}  // namespace sluice::simkv
