// FaultSchedule: seeded random faults over a SimCluster. At a mean interval
// (on an injected Clock) it draws a fault kind from a weighted mix and applies
// it, choosing regions and keys with a RegionFaultPicker and stores with its
// own seeded generator; a store taken down is restarted, and a busy store
// cleared, after a configurable delay. Everything applied is recorded. The
// same seed, options and clock readings give the same faults.
//
// Drive it step-wise with Tick() (tests, with a ManualClock) or on an owned
// thread with Start()/Stop(). Inject() applies one fault now (the control
// API). Thread-safe: one mutex serialises Tick, Inject and the accessors;
// lock order FaultSchedule → SimCluster.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/lifecycle.h"
#include "common/status.h"
#include "common/strong_id.h"
#include "common/thread_annotations.h"
#include "simkv/region_fault_picker.h"
#include "simkv/sim_cluster.h"
#include "simkv/workload_rng.h"

namespace sluice::simkv {

enum class FaultKind : uint8_t {
  kSplit,
  kMerge,
  kTransferLeader,
  kStoreRestart,  // Store down, restarted after down_for.
  kStoreBusy,     // Store busy, cleared after busy_for.
  kDropStreams,
  kCongest,
  kBumpEpoch,
};
inline constexpr size_t kNumFaultKinds = 8;

// The spec names: split, merge, leader, restart, busy, drop, congest, epoch.
std::string_view FaultKindName(FaultKind kind);
std::optional<FaultKind> ParseFaultKind(std::string_view name);

struct FaultScheduleOptions {
  uint64_t seed = 1;
  // Indexed by FaultKind; all zero = no random faults (restores still run).
  std::array<int, kNumFaultKinds> weights{};
  // Mean time between faults; each gap is drawn in [interval/2, 3*interval/2].
  Clock::Duration interval = std::chrono::milliseconds(500);
  Clock::Duration down_for = std::chrono::seconds(1);
  Clock::Duration busy_for = std::chrono::seconds(1);
  uint64_t busy_backoff_ms = 100;
  size_t max_regions = 64;  // Random splits stop at this many regions.
  Clock* clock = nullptr;   // nullptr = the real clock.
};

// Parses "<kind>=<weight>,...[;interval=<d>,down_for=<d>,busy_for=<d>,
// max_regions=<n>]" where <d> is an integer with ms, s or m. Fields not named
// keep the values in `base`. InvalidArgument names the bad token.
Result<FaultScheduleOptions> ParseFaultSpec(std::string_view spec, FaultScheduleOptions base = {});

// One fault as asked for: unset fields are chosen at random.
struct FaultRequest {
  FaultKind kind = FaultKind::kSplit;
  std::optional<RegionId> region;
  std::optional<std::string> key;  // Raw split key.
  std::optional<StoreId> store;
};

// One fault applied (or refused), or one restore.
struct FaultRecord {
  uint64_t seq = 0;
  FaultKind kind = FaultKind::kSplit;
  bool restore = false;  // A store restart or busy clear after its delay.
  RegionId region;
  RegionId other;  // Merge: the right region; split: the new right region.
  StoreId store;
  std::string key;  // Split: the raw key.
  Status status;
  std::string ToString() const;
};

class FaultSchedule {
 public:
  FaultSchedule(SimCluster* cluster, FaultScheduleOptions options);
  ~FaultSchedule();
  FaultSchedule(const FaultSchedule&) = delete;
  FaultSchedule& operator=(const FaultSchedule&) = delete;

  // Applies the restores and faults due at the clock's now. Returns how many
  // records were added.
  size_t Tick() EXCLUDES(mu_);
  // Applies one fault now; the record says what was done.
  FaultRecord Inject(const FaultRequest& request) EXCLUDES(mu_);

  // Tick() on an owned thread, waking at the next due time.
  void Start() EXCLUDES(mu_);
  // Joins the thread, then restarts down stores and clears busy ones.
  void Stop() EXCLUDES(mu_);

  std::vector<FaultRecord> records() const EXCLUDES(mu_);
  Clock::TimePoint next_fault_at() const EXCLUDES(mu_);

 private:
  struct Pending {
    FaultKind kind;
    StoreId store;
  };

  Clock::Duration DrawGap() REQUIRES(mu_);
  std::optional<FaultKind> DrawKind() REQUIRES(mu_);
  FaultRecord Apply(const FaultRequest& request) REQUIRES(mu_);
  void ApplyRegionFault(const FaultRequest& request, FaultRecord* rec) REQUIRES(mu_);
  void ApplySplit(const FaultRequest& request, FaultRecord* rec) REQUIRES(mu_);
  void ApplyMerge(const FaultRequest& request, FaultRecord* rec) REQUIRES(mu_);
  void ApplyTransfer(const FaultRequest& request, FaultRecord* rec) REQUIRES(mu_);
  void ApplyStoreFault(const FaultRequest& request, FaultRecord* rec) REQUIRES(mu_);
  std::optional<StoreId> PickStore(const std::optional<StoreId>& asked, bool need_up) REQUIRES(mu_);
  void RunRestores(Clock::TimePoint now, bool all) REQUIRES(mu_);
  void Record(FaultRecord rec) REQUIRES(mu_);
  Clock::TimePoint NextWake() const REQUIRES(mu_);

  SimCluster* const cluster_;
  const FaultScheduleOptions options_;
  Clock* const clock_;

  mutable Mutex mu_;
  WorkloadRng rng_ GUARDED_BY(mu_);
  RegionFaultPicker picker_ GUARDED_BY(mu_);
  Clock::TimePoint next_fault_at_ GUARDED_BY(mu_);
  std::multimap<Clock::TimePoint, Pending> pending_ GUARDED_BY(mu_);
  std::vector<FaultRecord> records_ GUARDED_BY(mu_);
  uint64_t next_seq_ GUARDED_BY(mu_) = 1;

  std::unique_ptr<OwnedThread> thread_;  // Owner-only.
};

}  // namespace sluice::simkv
