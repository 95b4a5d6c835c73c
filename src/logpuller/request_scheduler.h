// RequestScheduler: the one thread that turns subscription ranges into region
// requests. It divides ranges into regions through the region cache, locks
// each region's range in the run's RangeLock, keeps at most
// `scan_window_per_store` unfinished initial scans per store, and sends
// register and deregister requests on a few multiplexed streams per store.
// Retries arrive here with a delay (backoff) and wait in a timer queue on the
// injected clock.
//
// Thread-safety: the Post*() methods and ReleaseScanSlot() may be called from
// any thread and never block; everything else runs on the scheduler thread.
#pragma once

#include <chrono>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "common/clock.h"
#include "common/lifecycle.h"
#include "common/thread_annotations.h"
#include "logpuller/region_worker.h"
#include "logpuller/store_stream.h"
#include "pd/pd_client.h"
#include "pd/region_cache.h"

namespace sluice::logpuller {

struct RequestSchedulerOptions {
  size_t streams_per_store = 4;       // Multiplexed EventFeedV2 streams per store.
  size_t scan_window_per_store = 32;  // Regions sent but not yet INITIALIZED, per store.
  std::chrono::milliseconds backoff_base{50};
  std::chrono::milliseconds backoff_max{2000};
  std::chrono::milliseconds lock_wait_retry{10};  // Retry delay after a kWait lock outcome.
  StoreStreamOptions stream;
  Clock* clock = Clock::Real();
};

// A part of a run's span to divide into regions.
struct RangeTask {
  std::shared_ptr<SubscriptionRun> run;
  Span range;  // Comparable.
  int attempts = 0;
};

// One region of a run to lock and request.
struct RegionTask {
  std::shared_ptr<SubscriptionRun> run;
  RegionRoute region;
  Span range;  // Comparable, inside the region.
  int attempts = 0;
};

class RequestScheduler {
 public:
  RequestScheduler(RequestSchedulerOptions options, pd::RegionCache* cache, RegionWorkerPool* pool,
                   StreamSink* sink);
  ~RequestScheduler();
  RequestScheduler(const RequestScheduler&) = delete;
  RequestScheduler& operator=(const RequestScheduler&) = delete;

  void Start();
  // Joins the thread and closes every stream.
  void Stop();

  void PostRange(RangeTask task, Clock::Duration delay = {}) EXCLUDES(mu_);
  void PostRegion(RegionTask task, Clock::Duration delay = {}) EXCLUDES(mu_);
  void PostDeregister(uint64_t request_id) EXCLUDES(mu_);
  // An initial scan on `store` finished or failed.
  void ReleaseScanSlot(StoreId store) EXCLUDES(mu_);

  // The retry delay after `attempts` failures: base * 2^(attempts-1), capped,
  // with +-50% jitter.
  Clock::Duration BackoffDelay(int attempts);

  size_t NumConnectedStreams() const EXCLUDES(mu_);
  size_t NumWaitingForWindow() const EXCLUDES(mu_);

 private:
  using Task = std::variant<RangeTask, RegionTask>;
  // A region locked and waiting for a scan slot on its store.
  struct Ready {
    RegionTask task;
    Ts checkpoint;
    std::string address;
  };
  struct StoreState {
    std::string address;
    std::vector<std::unique_ptr<StoreStream>> streams;
    size_t next = 0;
    size_t pending_scans = 0;
    std::deque<Ready> waiting;
  };

  void Loop(const StopToken& token) EXCLUDES(mu_);
  void Process(Task& task);
  void ProcessRange(RangeTask& task);
  void ProcessRegion(RegionTask& task);
  void Send(StoreState& store, Ready ready);
  void RetryRegionLater(RegionTask task, const Status& why);
  StoreState& StoreFor(StoreId store, const std::string& address);
  void DrainWindows();

  const RequestSchedulerOptions options_;
  pd::RegionCache* const cache_;
  RegionWorkerPool* const pool_;
  StreamSink* const sink_;
  OwnedThread thread_;

  mutable Mutex mu_;
  CondVar cv_;
  std::multimap<Clock::TimePoint, Task> timers_ GUARDED_BY(mu_);
  std::vector<uint64_t> deregisters_ GUARDED_BY(mu_);
  std::map<StoreId, size_t> released_ GUARDED_BY(mu_);
  uint64_t rng_state_ GUARDED_BY(mu_) = 0x9e3779b97f4a7c15ULL;
  size_t connected_streams_ GUARDED_BY(mu_) = 0;
  size_t waiting_ GUARDED_BY(mu_) = 0;

  // Scheduler thread only.
  std::map<StoreId, StoreState> stores_;
};

}  // namespace sluice::logpuller
