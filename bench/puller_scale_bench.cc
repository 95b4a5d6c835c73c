// The log puller at scale, against a simulated cluster that runs in a child
// process (this binary re-executed with --serve-cluster), so that only the
// puller's memory and CPU are counted in this process.
//
//  idle: memory per idle subscription. N tables, each table's record span its
//    own region (split keys at every table boundary), one subscription per
//    table, all initialized and idle while resolved ts advances on the tick.
//    Heap in use (jemalloc stats.allocated; glibc mallinfo2 uordblks + hblkhd
//    without jemalloc) and RSS growth over N once every subscription
//    published a resolved ts. Consumers and spans exist before the baseline;
//    the region cache is loaded first and its share is reported apart (it is
//    in the total). The default tick is 5 s: with 100,000 subscriptions a 1 s
//    tick (one resolved-ts message per subscription per tick) is more than a
//    2-core machine delivers (see bench/README.md).
//  breakdown: the heap of each per-subscription piece, built the way the
//    client builds it (heap deltas over 10,000 of each, no cluster).
//  lag: resolved-ts lag. T tables of R regions each, one subscription per
//    table, a light write workload, a 200 ms tick; every 100 ms, for each
//    subscription: physical(TSO now) - physical(last resolved ts published).
//
//   build/bench/puller_scale_bench [--mode idle|breakdown|lag|all] [--subs N]
//       [--idle-tick MS] [--lag-tables T] [--lag-regions-per-table R]
//       [--lag-seconds S] [--lag-txns-per-s W] [--lag-advance-ms MS]
// Prints:
//   BENCH puller_idle_subscription bytes_per_sub=... rss_bytes_per_sub=... subs=N ...
//   BENCH puller_idle_breakdown subscription=... pipeline_state=... total=...
//   BENCH puller_resolved_lag p50_ms=... p99_ms=... regions=T*R ...
#include <fcntl.h>
#include <malloc.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "codec/tablecodec.h"
#include "common/allocator.h"
#include "common/clock.h"
#include "common/lifecycle.h"
#include "common/logging.h"
#include "common/span.h"
#include "common/tso.h"
#include "logpuller/subscription_client.h"
#include "pd/pd_client.h"
#include "pd/region_cache.h"
#include "simkv/sim_cluster.h"

extern char** environ;

namespace sluice::bench {
namespace {

using logpuller::KvConsumer;
using logpuller::PersistedCallback;
using logpuller::SubscriptionClient;
using SteadyClock = std::chrono::steady_clock;

constexpr int64_t kFirstTable = 1000;
constexpr int64_t kKeySpace = 1000000;  // Row handles written: [0, kKeySpace).

// What the child cluster serves.
struct ClusterFlags {
  int64_t tables = 1;
  int64_t regions_per_table = 1;
  int64_t tick_ms = 200;
  double txns_per_s = 0;
};
constexpr int kRowsPerTxn = 4;
constexpr size_t kStores = 3;

double Seconds(SteadyClock::time_point since) {
  return std::chrono::duration<double>(SteadyClock::now() - since).count();
}

TableId Table(int64_t i) { return TableId(kFirstTable + i); }

// Raw split keys: every table's record prefix (and the one after the last
// table), plus R-1 evenly spaced row keys inside each table, so each table's
// record span is R regions.
std::vector<std::string> SplitKeys(const ClusterFlags& f) {
  std::vector<std::string> keys;
  for (int64_t t = 0; t <= f.tables; ++t) {
    keys.push_back(codec::EncodeRecordPrefix(Table(t)));
    if (t == f.tables) break;
    for (int64_t r = 1; r < f.regions_per_table; ++r) {
      keys.push_back(codec::EncodeRowKey(Table(t), kKeySpace * r / f.regions_per_table));
    }
  }
  return keys;
}

// ---- Child side: the simulated cluster. ----

// Commits kRowsPerTxn-row transactions on random tables at a fixed rate.
void WriteLoop(simkv::SimCluster& cluster, const ClusterFlags& f, const StopToken& token) {
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<int64_t> table(0, f.tables - 1);
  std::uniform_int_distribution<int64_t> handle(0, kKeySpace - 1);
  auto interval = std::chrono::duration_cast<Clock::Duration>(
      std::chrono::duration<double>(1.0 / f.txns_per_s));
  Clock::TimePoint next = Clock::Real()->Now();
  while (Clock::Real()->SleepUntil(next, token)) {
    next += interval;
    Result<simkv::Txn> txn = cluster.txn().Begin();
    if (!txn.ok()) continue;
    TableId id = Table(table(rng));
    for (int i = 0; i < kRowsPerTxn; ++i) {
      txn->Put(codec::EncodeRowKey(id, handle(rng)), std::string(32, 'v'));
    }
    Result<Ts> committed = cluster.txn().Commit(*txn);
    if (!committed.ok()) cluster.txn().Rollback(*txn).IgnoreError();
  }
}

// Serves a cluster, prints "pd <address>", runs until stdin closes.
int ServeCluster(const ClusterFlags& f) {
  logging::SetLevel(logging::Level::kWarn);
  simkv::SimClusterOptions options;
  options.num_stores = kStores;
  options.replicas = kStores;
  options.raw_split_keys = SplitKeys(f);
  options.resolved_ts_interval = std::chrono::milliseconds(f.tick_ms);
  Result<std::unique_ptr<simkv::SimCluster>> cluster = simkv::SimCluster::Start(options);
  if (!cluster.ok()) {
    std::fprintf(stderr, "cluster: %s\n", cluster.status().ToString().c_str());
    return 1;
  }
  OwnedThread writer;
  if (f.txns_per_s > 0) {
    writer.Start("bench-writer", [&](StopToken token) { WriteLoop(**cluster, f, token); });
  }
  std::printf("pd %s\n", (*cluster)->pd_address().c_str());
  std::fflush(stdout);
  char buf[256];
  while (true) {
    ssize_t n = read(STDIN_FILENO, buf, sizeof(buf));
    if (n == 0 || (n < 0 && errno != EINTR)) break;
  }
  writer.Stop();
  (*cluster)->Stop();
  return 0;
}

// ---- Parent side. ----

// The child process serving the cluster. Closing its stdin stops it.
class ChildCluster {
 public:
  static Result<std::unique_ptr<ChildCluster>> Spawn(const ClusterFlags& f,
                                                     std::chrono::seconds timeout) {
    std::unique_ptr<ChildCluster> child(new ChildCluster());
    int in[2], out[2];
    if (pipe2(in, O_CLOEXEC) != 0) return IoError("pipe failed");
    child->stdin_fd_ = in[1];
    if (pipe2(out, O_CLOEXEC) != 0) {
      close(in[0]);
      return IoError("pipe failed");
    }
    child->stdout_fd_ = out[0];
    std::vector<std::string> args = {"/proc/self/exe",
                                     "--serve-cluster",
                                     "--tables=" + std::to_string(f.tables),
                                     "--regions-per-table=" + std::to_string(f.regions_per_table),
                                     "--tick=" + std::to_string(f.tick_ms),
                                     "--txns-per-s=" + std::to_string(f.txns_per_s)};
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, in[0], STDIN_FILENO);
    posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
    int rc = posix_spawn(&child->pid_, "/proc/self/exe", &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    close(in[0]);
    close(out[1]);
    if (rc != 0) {
      child->pid_ = -1;
      return IoError("posix_spawn failed: " + std::to_string(rc));
    }
    RETURN_IF_ERROR(child->ReadAddress(timeout));
    return child;
  }

  ~ChildCluster() {
    if (stdin_fd_ >= 0) close(stdin_fd_);
    if (stdout_fd_ >= 0) close(stdout_fd_);
    if (pid_ <= 0) return;
    auto deadline = SteadyClock::now() + std::chrono::seconds(30);
    int status = 0;
    while (waitpid(pid_, &status, WNOHANG) == 0) {
      if (SteadyClock::now() > deadline) {
        std::fprintf(stderr, "cluster child did not stop; killing it\n");
        kill(pid_, SIGKILL);
        waitpid(pid_, &status, 0);
        return;
      }
      poll(nullptr, 0, 50);
    }
  }

  const std::string& pd_address() const { return pd_address_; }

 private:
  ChildCluster() = default;

  // The child's first stdout line is "pd <address>".
  Status ReadAddress(std::chrono::seconds timeout) {
    auto deadline = SteadyClock::now() + timeout;
    std::string text;
    while (text.find('\n') == std::string::npos) {
      if (SteadyClock::now() > deadline) return Timeout("cluster child printed no PD address");
      pollfd p{stdout_fd_, POLLIN, 0};
      if (poll(&p, 1, 100) <= 0) continue;
      char buf[256];
      ssize_t n = read(stdout_fd_, buf, sizeof(buf));
      if (n == 0) return Unavailable("cluster child exited before serving");
      if (n > 0) text.append(buf, n);
    }
    if (text.rfind("pd ", 0) != 0) return Internal("cluster child printed: " + text);
    pd_address_ = text.substr(3, text.find('\n') - 3);
    return Status::Ok();
  }

  pid_t pid_ = -1;
  int stdin_fd_ = -1;
  int stdout_fd_ = -1;
  std::string pd_address_;
};

// Persists every batch at once and remembers the last published resolved ts.
class BenchConsumer final : public KvConsumer {
 public:
  void ConsumeKvEvents(KvBatch batch, PersistedCallback persisted) override {
    rows_.fetch_add(batch.size(), std::memory_order_relaxed);
    persisted();
  }
  void AdvanceResolvedTs(Ts ts) override { resolved_.store(ts.value(), std::memory_order_relaxed); }
  void OnSubscriptionError(const Status& status) override {
    failed_.store(true, std::memory_order_relaxed);
  }
  Ts resolved() const { return Ts(resolved_.load(std::memory_order_relaxed)); }
  bool published() const { return resolved_.load(std::memory_order_relaxed) != 0; }
  bool failed() const { return failed_.load(std::memory_order_relaxed); }
  uint64_t rows() const { return rows_.load(std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> resolved_{0};
  std::atomic<uint64_t> rows_{0};
  std::atomic<bool> failed_{false};
};

using Consumers = std::vector<std::shared_ptr<BenchConsumer>>;

// CPU seconds (user + system) this process used so far.
double CpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}

struct MemSample {
  int64_t heap = 0;  // Bytes allocated and not freed.
  int64_t rss = 0;
};

// Bytes the application holds: jemalloc's stats.allocated when the binary
// is linked with it, else glibc's mallinfo2 uordblks + hblkhd.
int64_t HeapInUse() {
  if (std::optional<int64_t> allocated = JemallocAllocatedBytes()) return *allocated;
  struct mallinfo2 mi = mallinfo2();
  return static_cast<int64_t>(mi.uordblks + mi.hblkhd);
}

const char* Allocator() { return UsingJemalloc() ? "jemalloc" : "glibc"; }

MemSample SampleMemory() {
  int64_t size = 0, resident = 0;
  std::ifstream("/proc/self/statm") >> size >> resident;
  return MemSample{HeapInUse(), resident * sysconf(_SC_PAGESIZE)};
}

// The puller as a server runs it: PD client, region cache, subscription client.
struct Puller {
  static Result<std::unique_ptr<Puller>> Connect(const std::string& pd_address) {
    auto p = std::make_unique<Puller>();
    pd::PdClientOptions options;
    options.endpoints = {pd_address};
    ASSIGN_OR_RETURN(p->pd, pd::PdClient::Connect(options));
    p->cache = std::make_unique<pd::RegionCache>(p->pd.get());
    logpuller::SubscriptionClientOptions client_options;
    p->client = std::make_unique<SubscriptionClient>(client_options, p->pd.get(), p->cache.get());
    p->client->Start();
    return p;
  }
  ~Puller() {
    if (client) client->Stop();
    if (pd) pd->Stop();
  }

  std::unique_ptr<pd::PdClient> pd;
  std::unique_ptr<pd::RegionCache> cache;
  std::unique_ptr<SubscriptionClient> client;
};

Consumers MakeConsumers(size_t n) {
  Consumers consumers;
  consumers.reserve(n);
  for (size_t i = 0; i < n; ++i) consumers.push_back(std::make_shared<BenchConsumer>());
  return consumers;
}

std::vector<Span> TableSpans(size_t n) {
  std::vector<Span> spans;
  spans.reserve(n);
  for (size_t i = 0; i < n; ++i) spans.push_back(ToComparable(TableRecordSpan(Table(i))));
  return spans;
}

Status SubscribeAll(SubscriptionClient& client, const std::vector<Span>& spans, Ts start,
                    const Consumers& consumers, const logpuller::SubscribeOptions& options = {}) {
  for (size_t i = 0; i < spans.size(); ++i) {
    RETURN_IF_ERROR(client.Subscribe(spans[i], start, consumers[i], options).status());
  }
  return Status::Ok();
}

// Waits (bounded) until every consumer got a resolved ts.
Status WaitAllPublished(const Consumers& consumers, std::chrono::seconds timeout,
                        const SubscriptionClient& client) {
  auto begin = SteadyClock::now();
  for (auto report = begin + std::chrono::seconds(10);;) {
    size_t published = 0, failed = 0;
    for (const auto& c : consumers) {
      published += c->published() ? 1 : 0;
      failed += c->failed() ? 1 : 0;
    }
    if (published == consumers.size()) return Status::Ok();
    if (failed > 0 || SteadyClock::now() >= begin + timeout) {
      return Timeout(std::to_string(published) + " of " + std::to_string(consumers.size()) +
                     " subscriptions published a resolved ts, " + std::to_string(failed) +
                     " failed");
    }
    if (SteadyClock::now() >= report) {
      SubscriptionClient::Stats st = client.stats();
      std::fprintf(stderr, "  %.0fs: %zu/%zu published, %zu region states, %lu stream errors\n",
                   Seconds(begin), published, consumers.size(), st.region_states,
                   static_cast<unsigned long>(st.stream_errors));
      report += std::chrono::seconds(10);
    }
    Clock::Real()->SleepFor(std::chrono::milliseconds(100), CancelToken());
  }
}

struct Args {
  std::string mode = "all";
  int64_t subs = 100000;
  int64_t idle_tick_ms = 5000;
  int64_t idle_wait_s = 180;
  int64_t lag_tables = 100;
  int64_t lag_regions_per_table = 100;
  int64_t lag_seconds = 20;
  double lag_txns_per_s = 50;
  int64_t lag_advance_ms = 100;  // SubscribeOptions::advance_interval (the default).
};

Status RunIdle(const Args& args) {
  const size_t n = static_cast<size_t>(args.subs);
  ClusterFlags flags{.tables = args.subs, .regions_per_table = 1, .tick_ms = args.idle_tick_ms};
  auto setup = SteadyClock::now();
  ASSIGN_OR_RETURN(auto child, ChildCluster::Spawn(flags, std::chrono::seconds(120)));
  std::fprintf(stderr, "idle: cluster with %zu regions up in %.1fs\n", n + 2, Seconds(setup));
  ASSIGN_OR_RETURN(auto puller, Puller::Connect(child->pd_address()));
  Consumers consumers = MakeConsumers(n);
  std::vector<Span> spans = TableSpans(n);
  ASSIGN_OR_RETURN(Ts start, puller->pd->GetTs());

  MemSample base = SampleMemory();
  {
    auto regions = puller->cache->LocateSpan(Span{spans.front().start, spans.back().end});
    if (!regions.ok()) return regions.status();
    if (regions->size() != n) return Internal("expected one region per table");
  }
  MemSample cached = SampleMemory();
  auto t0 = SteadyClock::now();
  RETURN_IF_ERROR(SubscribeAll(*puller->client, spans, start, consumers));
  RETURN_IF_ERROR(
      WaitAllPublished(consumers, std::chrono::seconds(args.idle_wait_s), *puller->client));
  double ready_s = Seconds(t0);
  // Idle for a few ticks; the median of the samples is reported.
  std::vector<Ts> before_settle;
  for (const auto& c : consumers) before_settle.push_back(c->resolved());
  std::vector<MemSample> samples;
  double cpu0 = CpuSeconds();
  auto idle0 = SteadyClock::now();
  for (int i = 0; i < 5; ++i) {
    Clock::Real()->SleepFor(std::chrono::seconds(1) + std::chrono::milliseconds(args.idle_tick_ms),
                            CancelToken());
    samples.push_back(SampleMemory());
  }
  double idle_cores = (CpuSeconds() - cpu0) / Seconds(idle0);
  size_t advanced = 0;
  for (size_t i = 0; i < n; ++i) advanced += consumers[i]->resolved() > before_settle[i] ? 1 : 0;
  std::sort(samples.begin(), samples.end(),
            [](const MemSample& a, const MemSample& b) { return a.heap < b.heap; });
  MemSample after = samples[samples.size() / 2];  // The median.
  std::printf(
      "BENCH puller_idle_subscription bytes_per_sub=%.0f rss_bytes_per_sub=%.0f subs=%zu "
      "client_bytes_per_sub=%.0f region_cache_bytes_per_region=%.0f ready_s=%.1f "
      "advanced_while_idle=%zu tick_ms=%ld idle_cpu_cores=%.2f allocator=%s\n",
      double(after.heap - base.heap) / n, double(after.rss - base.rss) / n, n,
      double(after.heap - cached.heap) / n, double(cached.heap - base.heap) / n, ready_s, advanced,
      static_cast<long>(args.idle_tick_ms), idle_cores, Allocator());
  std::fflush(stdout);
  return Status::Ok();
}

// Heap per subscription of each piece the client allocates for an idle
// one-region subscription, built the way the client builds them (heap
// deltas over `n` of each). No cluster is involved.
Status RunBreakdown(size_t n) {
  using logpuller::RegionState;
  using logpuller::Subscription;
  using logpuller::SubscriptionRun;
  Consumers consumers = MakeConsumers(n);
  std::vector<Span> spans = TableSpans(n);
  std::vector<pd::Region> regions(n);
  for (size_t i = 0; i < n; ++i) {
    regions[i].id = RegionId(10 + i);
    regions[i].start_key = ToComparable(Span{codec::EncodeRecordPrefix(Table(i)), ""}).start;
    regions[i].end_key = ToComparable(Span{codec::EncodeRecordPrefix(Table(i + 1)), ""}).start;
    regions[i].version = regions[i].conf_ver = 1;
    regions[i].leader_store = StoreId(1 + i % 3);
    for (uint64_t s = 1; s <= 3; ++s) regions[i].peers.push_back({100 + s, StoreId(s)});
  }
  std::vector<std::shared_ptr<Subscription>> subs;
  std::vector<std::shared_ptr<SubscriptionRun>> runs;
  subs.reserve(n);
  runs.reserve(n);
  std::vector<std::pair<const char*, int64_t>> parts;
  int64_t mark = SampleMemory().heap;
  auto take = [&](const char* name) {
    int64_t now = SampleMemory().heap;
    parts.emplace_back(name, now - mark);
    mark = now;
  };
  for (size_t i = 0; i < n; ++i) {
    auto sub = std::make_shared<Subscription>();
    sub->span = spans[i];
    sub->consumer = std::make_shared<logpuller::TrackingConsumer>(consumers[i]);
    subs.push_back(std::move(sub));
  }
  take("subscription");  // Subscription + TrackingConsumer + span copy.
  std::map<SubscriptionId, std::shared_ptr<Subscription>> by_id;
  for (size_t i = 0; i < n; ++i) by_id[SubscriptionId(i + 1)] = subs[i];
  take("client_map_node");
  for (size_t i = 0; i < n; ++i) {
    runs.push_back(std::make_shared<SubscriptionRun>(subs[i], i + 1, spans[i], Ts(1)));
    MutexLock lock(&subs[i]->mu);
    subs[i]->run = runs[i];
  }
  take("run");  // SubscriptionRun + its RangeLock with one unlocked range.
  for (size_t i = 0; i < n; ++i) {
    logpuller::LockResult r = runs[i]->lock.TryLock(spans[i], regions[i].id, 1);
    if (r.outcome != logpuller::LockOutcome::kSuccess) return Internal("lock failed");
  }
  take("range_lock_locked");  // One locked range instead of the unlocked one.
  // As a region worker shard keeps them: (request id, region id) -> state.
  std::map<std::pair<uint64_t, uint64_t>, std::unique_ptr<RegionState>> states;
  for (size_t i = 0; i < n; ++i) {
    states[{i + 1, regions[i].id.value()}] =
        std::make_unique<RegionState>(runs[i], logpuller::RegionRoute::Of(regions[i]), Ts(1), 0);
  }
  take("region_state");  // RegionState (route, matcher) + map node.
  logpuller::SpanPipeline pipeline(logpuller::SpanPipelineOptions{}, nullptr);
  pipeline.Start();
  take("pipeline_fixed");
  for (size_t i = 0; i < n; ++i) {
    RETURN_IF_ERROR(pipeline.Register(SubscriptionId(i + 1), consumers[i], Ts(1)));
  }
  for (int i = 0; i < 3000 && pipeline.NumSubscriptions() < n; ++i) {
    Clock::Real()->SleepFor(std::chrono::milliseconds(10), CancelToken());
  }
  if (pipeline.NumSubscriptions() != n) return Timeout("pipeline registrations");
  take("pipeline_state");  // Worker State (set, deque) + generation entry.
  std::string line = "BENCH puller_idle_breakdown";
  int64_t total = 0;
  for (const auto& [name, bytes] : parts) {
    if (std::string_view(name).ends_with("_fixed")) continue;
    line += " " + std::string(name) + "=" + std::to_string(bytes / static_cast<int64_t>(n));
    total += bytes;
  }
  std::printf("%s total=%ld n=%zu allocator=%s\n", line.c_str(), static_cast<long>(total / n), n,
              Allocator());
  std::fflush(stdout);
  pipeline.Stop();
  return Status::Ok();
}

double Percentile(const std::vector<int64_t>& sorted, double p) {
  if (sorted.empty()) return 0;
  size_t i = std::min(sorted.size() - 1, static_cast<size_t>(p * (sorted.size() - 1) + 0.5));
  return static_cast<double>(sorted[i]);
}

Status RunLag(const Args& args) {
  const size_t n = static_cast<size_t>(args.lag_tables);
  ClusterFlags flags{.tables = args.lag_tables,
                     .regions_per_table = args.lag_regions_per_table,
                     .tick_ms = 200,
                     .txns_per_s = args.lag_txns_per_s};
  ASSIGN_OR_RETURN(auto child, ChildCluster::Spawn(flags, std::chrono::seconds(120)));
  ASSIGN_OR_RETURN(auto puller, Puller::Connect(child->pd_address()));
  Consumers consumers = MakeConsumers(n);
  ASSIGN_OR_RETURN(Ts start, puller->pd->GetTs());
  auto t0 = SteadyClock::now();
  logpuller::SubscribeOptions options;
  options.advance_interval = std::chrono::milliseconds(args.lag_advance_ms);
  RETURN_IF_ERROR(SubscribeAll(*puller->client, TableSpans(n), start, consumers, options));
  RETURN_IF_ERROR(WaitAllPublished(consumers, std::chrono::seconds(120), *puller->client));
  std::fprintf(stderr, "lag: %zu subscriptions over %ld regions published in %.1fs\n", n,
               static_cast<long>(n * args.lag_regions_per_table), Seconds(t0));
  // Warm-up: the first publications may still be the start ts.
  Clock::Real()->SleepFor(std::chrono::seconds(1), CancelToken());
  uint64_t rows_before = 0;
  for (const auto& c : consumers) rows_before += c->rows();
  std::vector<int64_t> lags;
  auto end = Clock::Real()->Now() + std::chrono::seconds(args.lag_seconds);
  for (auto next = Clock::Real()->Now(); next < end; next += std::chrono::milliseconds(100)) {
    Clock::Real()->SleepUntil(next, CancelToken());
    ASSIGN_OR_RETURN(Ts now, puller->pd->GetTs());
    for (const auto& c : consumers) {
      lags.push_back(tso::Physical(now) - tso::Physical(c->resolved()));
    }
  }
  uint64_t rows = 0;
  for (const auto& c : consumers) rows += c->rows();
  std::sort(lags.begin(), lags.end());
  SubscriptionClient::Stats st = puller->client->stats();
  std::printf(
      "BENCH puller_resolved_lag p50_ms=%.0f p99_ms=%.0f max_ms=%.0f regions=%ld tables=%zu "
      "samples=%zu rows=%lu region_errors=%lu advance_ms=%ld\n",
      Percentile(lags, 0.5), Percentile(lags, 0.99), Percentile(lags, 1.0),
      static_cast<long>(n * args.lag_regions_per_table), n, lags.size(),
      static_cast<unsigned long>(rows - rows_before), static_cast<unsigned long>(st.region_errors),
      static_cast<long>(args.lag_advance_ms));
  std::fflush(stdout);
  return Status::Ok();
}

}  // namespace
}  // namespace sluice::bench

int main(int argc, char** argv) {
  using sluice::bench::Args;
  using sluice::bench::ClusterFlags;
  CLI::App app{"puller_scale_bench: log puller memory per subscription and resolved-ts lag"};
  Args args;
  ClusterFlags cluster;
  bool serve = false;
  const auto positive = CLI::PositiveNumber;
  app.add_option("--mode", args.mode, "idle, breakdown, lag or all")
      ->check(CLI::IsMember({"idle", "breakdown", "lag", "all"}));
  app.add_option("--subs", args.subs, "idle subscriptions (one region each)")->check(positive);
  app.add_option("--idle-tick", args.idle_tick_ms, "resolved-ts tick of the idle run, ms")
      ->check(positive);
  app.add_option("--idle-wait", args.idle_wait_s, "bound on the idle set-up, s")->check(positive);
  app.add_option("--lag-tables", args.lag_tables)->check(positive);
  app.add_option("--lag-regions-per-table", args.lag_regions_per_table)->check(positive);
  app.add_option("--lag-seconds", args.lag_seconds)->check(positive);
  app.add_option("--lag-txns-per-s", args.lag_txns_per_s)->check(CLI::NonNegativeNumber);
  app.add_option("--lag-advance-ms", args.lag_advance_ms, "SubscribeOptions::advance_interval")
      ->check(CLI::NonNegativeNumber);
  // The child side (internal).
  app.add_flag("--serve-cluster", serve)->group("");
  app.add_option("--tables", cluster.tables)->group("");
  app.add_option("--regions-per-table", cluster.regions_per_table)->group("");
  app.add_option("--tick", cluster.tick_ms)->group("");
  app.add_option("--txns-per-s", cluster.txns_per_s)->group("");
  CLI11_PARSE(app, argc, argv);
  if (serve) return sluice::bench::ServeCluster(cluster);

  sluice::logging::SetLevel(sluice::logging::Level::kWarn);
  const std::pair<const char*, std::function<sluice::Status()>> runs[] = {
      {"breakdown", [] { return sluice::bench::RunBreakdown(10000); }},
      {"idle", [&] { return sluice::bench::RunIdle(args); }},
      {"lag", [&] { return sluice::bench::RunLag(args); }},
  };
  for (const auto& [name, run] : runs) {
    if (args.mode != name && args.mode != "all") continue;
    sluice::Status st = run();
    if (!st.ok()) {
      std::fprintf(stderr, "puller_scale_bench %s: %s\n", name, st.ToString().c_str());
      return 1;
    }
  }
  return 0;
}
