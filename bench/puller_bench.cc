// Log puller throughput from a recorded TiKV stream. The stream (one
// subscription over one table split into R regions) is generated once and
// kept as serialized cdcpb::ChangeDataEvent messages of ~100 rows: per
// region, incremental-scan COMMITTED rows, INITIALIZED, then live
// transactions (1-7 rows each, their PREWRITE rows first and the COMMIT rows
// a few transactions later); a ResolvedTs for every region every N rows and
// a final one once every transaction is committed. Rows carry 19-byte raw
// record keys (codec::EncodeRowKey) and 100-byte values.
//
// Measurements over the same bytes:
//  - puller_parse: ParseFromString of every message into one reused
//    ChangeDataEvent (the bare protobuf rate; fresh_msg_* parses each into
//    a new message, as a stream reader must). Median of three passes.
//  - puller_inline: the production decode (SplitChangeData, then each
//    region event's rows as views into the bytes) and RegionMatcher on one
//    thread, no queues.
//  - puller_pipeline(_single): bytes -> RegionWorkerPool (decode, matcher,
//    region and span resolved ts) -> SpanPipeline -> a consumer that calls the
//    persisted callback at once. The clock stops when the final resolved ts
//    is published, which the pipeline does only after every batch is
//    persisted.
//  - puller_eventstore: the same, into the RocksDB EventStore.
// The main thread copies each message's bytes and posts them, as a stream
// reader thread does; the region workers decode the rows. Each
// line gives process CPU seconds and their split by thread kind.
// An "event" is one committed change delivered (a PREWRITE + COMMIT pair or
// a COMMITTED row); "rows" counts PREWRITE, COMMIT and COMMITTED rows.
//
//   build/bench/puller_bench [--events N] [--regions R] [--resolved_every N]
//                            [--region_workers W] [--pipeline_workers P]
//                            [--region_queue Q] [--rounds N]
//                            [--runs inline,pipeline,single,store] [--dir PATH]
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <deque>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "bench_stats.h"
#include "cdcpb.pb.h"
#include "codec/tablecodec.h"
#include "common/clock.h"
#include "common/span.h"
#include "common/thread_annotations.h"
#include "eventstore/event_store.h"
#include "logpuller/capturing_subscriber.h"
#include "logpuller/change_data.h"
#include "logpuller/matcher.h"
#include "logpuller/region_worker.h"
#include "logpuller/span_pipeline.h"
#include "logpuller/subscription_client.h"
#include "logpuller/subscription_state.h"

namespace sluice::logpuller {
namespace {

using Row = cdcpb::Event_Row;

constexpr uint64_t kRequestId = 1;
constexpr uint64_t kStreamId = 1;
constexpr int64_t kHandleStride = int64_t{1} << 40;  // Handles per region.
constexpr auto kWaitLimit = std::chrono::minutes(5);

struct Args {
  size_t events = 800000;
  size_t regions = 64;
  size_t events_per_msg = 4;      // Region events per ChangeDataEvent.
  size_t rounds = 1;              // Repetitions of the parse measurement and every run.
  size_t rows_per_event = 25;     // Rows per region event.
  double scan_fraction = 0.1;     // Share of events that come from the scan.
  size_t resolved_every = 10000;  // Rows between ResolvedTs messages.
  size_t txn_depth = 4;           // Transactions a region keeps prewritten.
  size_t region_workers = 2;
  size_t pipeline_workers = 2;
  size_t region_queue = logpuller::kDefaultRegionQueueCapacity;
  std::string runs = "inline,pipeline,single,store";  // Which runs, comma-separated.
  std::string dir;
};

// The recorded stream and what it must produce.
struct Stream {
  TableId table{100};
  Span span;  // Comparable.
  Ts checkpoint{1000};
  std::vector<pd::Region> regions;
  std::vector<Span> ranges;  // Comparable, per region.
  std::vector<std::string> messages;
  uint64_t events = 0;
  uint64_t rows = 0;
  uint64_t bytes = 0;
  Ts final_ts;
};

// Generates the stream; see the file comment for its shape.
class StreamGenerator {
 public:
  explicit StreamGenerator(const Args& args) : args_(args), rng_(42) {
    for (size_t i = 0; i < 64; ++i) {
      std::string v(100, '\0');
      for (char& c : v) c = static_cast<char>(rng_());
      values_.push_back(std::move(v));
    }
  }

  Stream Generate() {
    Stream s;
    table_ = s.table;
    ts_ = s.checkpoint.value();
    s.span = ToComparable(TableRecordSpan(s.table));
    SetUpRegions(s);
    size_t rows_since_resolved = 0;
    uint64_t last_resolved = 0;
    for (cdcpb::ChangeDataEvent msg = NextMessage(); msg.events_size() > 0; msg = NextMessage()) {
      for (const cdcpb::Event& ev : msg.events())
        rows_since_resolved += ev.entries().entries_size();
      Append(s, msg);
      if (rows_since_resolved < args_.resolved_every) continue;
      rows_since_resolved = 0;
      if (uint64_t ts = ResolvableTs(); ts > last_resolved) {
        Append(s, ResolvedMessage(ts));
        last_resolved = ts;
      }
    }
    if (ts_ > last_resolved) Append(s, ResolvedMessage(ts_));
    s.final_ts = Ts(ts_);
    s.events = events_;
    s.rows = rows_;
    return s;
  }

 private:
  struct Txn {
    uint64_t start_ts = 0;
    std::vector<int64_t> handles;
  };
  struct Gen {
    uint64_t id = 0;
    int64_t next_handle = 0;
    size_t scan_left = 0;
    size_t live_left = 0;
    bool initialized = false;
    std::deque<Row> queue;  // Rows generated, not yet put in a message.
    std::deque<Txn> open;   // Prewritten; COMMIT rows not generated yet.
  };

  // Splits the table's record span into regions of kHandleStride handles.
  void SetUpRegions(Stream& s) {
    const Span raw = TableRecordSpan(s.table);
    const size_t n = std::max<size_t>(1, args_.regions);
    const size_t per_region = args_.events / n;
    const size_t scan = static_cast<size_t>(per_region * args_.scan_fraction);
    for (size_t i = 0; i < n; ++i) {
      Span part = ToComparable(
          Span{i == 0 ? raw.start : codec::EncodeRowKey(s.table, kHandleStride * i),
               i + 1 == n ? raw.end : codec::EncodeRowKey(s.table, kHandleStride * (i + 1))});
      pd::Region region;
      region.id = RegionId(i + 1);
      region.version = 1;
      region.conf_ver = 1;
      region.leader_store = StoreId(1);
      region.start_key = part.start;
      region.end_key = part.end;
      s.regions.push_back(std::move(region));
      s.ranges.push_back(std::move(part));
      Gen& gen = gens_.emplace_back();
      gen.id = i + 1;
      gen.next_handle = kHandleStride * static_cast<int64_t>(i);
      gen.scan_left = scan;
      gen.live_left = per_region - scan;
    }
  }

  // The next data message: events of the next regions in turn; empty when
  // every region is done.
  cdcpb::ChangeDataEvent NextMessage() {
    cdcpb::ChangeDataEvent msg;
    for (size_t tries = 0;
         tries < gens_.size() && static_cast<size_t>(msg.events_size()) < args_.events_per_msg;
         ++tries) {
      Gen& gen = gens_[next_gen_];
      next_gen_ = (next_gen_ + 1) % gens_.size();
      cdcpb::Event ev;
      ev.set_region_id(gen.id);
      ev.set_request_id(kRequestId);
      auto* rows = ev.mutable_entries()->mutable_entries();
      while (static_cast<size_t>(rows->size()) < args_.rows_per_event) {
        if (gen.queue.empty() && !Refill(gen)) break;
        *rows->Add() = std::move(gen.queue.front());
        gen.queue.pop_front();
      }
      if (!rows->empty()) *msg.add_events() = std::move(ev);
    }
    return msg;
  }

  // Queues the region's next rows; false when the region has no more.
  bool Refill(Gen& gen) {
    if (gen.scan_left > 0) {
      size_t k = std::min(gen.scan_left, args_.rows_per_event);
      for (size_t i = 0; i < k; ++i) {
        Row& row = NewRow(gen, cdcpb::Event::COMMITTED, gen.next_handle++, ++ts_);
        row.set_commit_ts(++ts_);
        row.set_value(values_[rng_() % values_.size()]);
        ++events_;
      }
      gen.scan_left -= k;
      return true;
    }
    if (!gen.initialized) {
      gen.initialized = true;
      Row row;
      row.set_type(cdcpb::Event::INITIALIZED);
      gen.queue.push_back(std::move(row));
      return true;
    }
    if (gen.live_left > 0) {
      Txn txn;
      txn.start_ts = ++ts_;
      size_t k = std::min<size_t>(gen.live_left, 1 + rng_() % 7);
      for (size_t i = 0; i < k; ++i) {
        txn.handles.push_back(gen.next_handle);
        Row& row = NewRow(gen, cdcpb::Event::PREWRITE, gen.next_handle++, txn.start_ts);
        row.set_value(values_[rng_() % values_.size()]);
      }
      gen.live_left -= k;
      gen.open.push_back(std::move(txn));
      if (gen.open.size() > args_.txn_depth) CommitOldest(gen);
      return true;
    }
    if (gen.open.empty()) return false;
    CommitOldest(gen);
    return true;
  }

  void CommitOldest(Gen& gen) {
    Txn txn = std::move(gen.open.front());
    gen.open.pop_front();
    uint64_t commit_ts = ++ts_;
    for (int64_t handle : txn.handles) {
      NewRow(gen, cdcpb::Event::COMMIT, handle, txn.start_ts).set_commit_ts(commit_ts);
      ++events_;
    }
  }

  Row& NewRow(Gen& gen, cdcpb::Event::LogType type, int64_t handle, uint64_t start_ts) {
    Row& row = gen.queue.emplace_back();
    row.set_type(type);
    row.set_op_type(Row::PUT);
    row.set_start_ts(start_ts);
    row.set_key(codec::EncodeRowKey(table_, handle));
    ++rows_;
    return row;
  }

  // The largest ts no change still to be sent can commit at or below: below
  // the start ts of every transaction whose COMMIT rows are not sent yet.
  uint64_t ResolvableTs() const {
    uint64_t ts = ts_;
    for (const Gen& gen : gens_) {
      for (const Row& row : gen.queue) {
        if (row.type() == cdcpb::Event::COMMIT) ts = std::min(ts, row.start_ts() - 1);
      }
      if (!gen.open.empty()) ts = std::min(ts, gen.open.front().start_ts - 1);
    }
    return ts;
  }

  cdcpb::ChangeDataEvent ResolvedMessage(uint64_t ts) const {
    cdcpb::ChangeDataEvent msg;
    cdcpb::ResolvedTs* rts = msg.mutable_resolved_ts();
    rts->set_ts(ts);
    rts->set_request_id(kRequestId);
    for (const Gen& gen : gens_) rts->add_regions(gen.id);
    return msg;
  }

  static void Append(Stream& s, const cdcpb::ChangeDataEvent& msg) {
    std::string& out = s.messages.emplace_back();
    msg.SerializeToString(&out);
    s.bytes += out.size();
  }

  const Args& args_;
  std::mt19937_64 rng_;
  std::vector<std::string> values_;
  std::vector<Gen> gens_;
  size_t next_gen_ = 0;
  TableId table_{0};
  uint64_t ts_ = 0;
  uint64_t events_ = 0;
  uint64_t rows_ = 0;
};

// Where a run reports its resolved ts and failures; the main thread waits.
class Progress {
 public:
  void Resolved(Ts ts) EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    if (ts > resolved_) resolved_ = ts;
    cv_.SignalAll();
  }
  void Fail(const Status& status) EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    if (failure_.ok()) failure_ = status;
    cv_.SignalAll();
  }
  // OK once `ts` is published; the failure, or Timeout.
  Status WaitFor(Ts ts) EXCLUDES(mu_) {
    Clock* clock = Clock::Real();
    Clock::TimePoint deadline = clock->Now() + kWaitLimit;
    MutexLock lock(&mu_);
    while (failure_.ok() && resolved_ < ts) {
      if (clock->WaitUntil(&cv_, &mu_, deadline)) {
        return Timeout("resolved ts " + std::to_string(resolved_.value()) + " of " +
                       std::to_string(ts.value()));
      }
    }
    return failure_;
  }

 private:
  Mutex mu_;
  CondVar cv_;
  Ts resolved_ GUARDED_BY(mu_);
  Status failure_ GUARDED_BY(mu_);
};

// Counts entries and persists at once.
class NoopConsumer final : public KvConsumer {
 public:
  explicit NoopConsumer(Progress* progress) : progress_(progress) {}
  void ConsumeKvEvents(KvBatch batch, PersistedCallback persisted) override {
    entries_.fetch_add(batch.size(), std::memory_order_relaxed);
    persisted();
  }
  void AdvanceResolvedTs(Ts ts) override { progress_->Resolved(ts); }
  void OnSubscriptionError(const Status& status) override { progress_->Fail(status); }
  uint64_t entries() const { return entries_.load(); }

 private:
  Progress* const progress_;
  std::atomic<uint64_t> entries_{0};
};

// The subscription client's part of the data path: batches to the pipeline,
// span resolved ts from the range lock (recomputed on every region update).
class BenchHost final : public RegionWorkerHost {
 public:
  BenchHost(const SpanPipelineOptions& options, Progress* progress)
      : progress_(progress),
        pipeline_(options, [progress](SubscriptionId, const Status& status, bool) {
          progress->Fail(status.WithContext("span pipeline"));
        }) {}
  SpanPipeline& pipeline() { return pipeline_; }

  void OnRegionFailed(std::unique_ptr<RegionState> state, RegionFailure failure) override {
    progress_->Fail(Internal("region " + std::to_string(state->region.id.value()) + " failed: " +
                             failure.status.ToString() + " " + failure.error.ShortDebugString()));
  }
  void OnRegionInitialized(RegionState&) override {}
  void OnRegionDropped(RegionState&) override {}
  void EnqueueData(SubscriptionRun& run, KvBatch batch, const CancelToken& token) override {
    Status status = pipeline_.EnqueueData(run.sub->id, std::move(batch), token);
    if (!status.ok() && status.code() != Code::kCancelled) progress_->Fail(status);
  }
  void MaybeAdvance(SubscriptionRun& run, const CancelToken& token) override {
    Ts ts = run.lock.ResolvedTs();
    Subscription& sub = *run.sub;
    MutexLock lock(&sub.mu);
    if (ts <= sub.last_enqueued) return;
    sub.last_enqueued = ts;
    Status status = pipeline_.EnqueueResolved(sub.id, ts, token);
    if (!status.ok() && status.code() != Code::kCancelled) progress_->Fail(status);
  }
  void FailRun(const std::shared_ptr<SubscriptionRun>& run, const Status& status) override {
    run->stopped.store(true);
    progress_->Fail(status);
  }

 private:
  Progress* const progress_;
  SpanPipeline pipeline_;
};

struct RunConfig {
  size_t region_workers = 1;
  size_t pipeline_workers = 1;
  size_t region_queue = 1024;
};

struct Timing {
  double seconds = 0;
  double post_seconds = 0;  // Until the main thread had parsed and posted all.
  std::string threads;      // CPU seconds by thread kind.
  double cpu_seconds = 0;   // Process CPU time over the same interval.
};

double CpuSeconds() { return static_cast<double>(std::clock()) / CLOCKS_PER_SEC; }

// CPU seconds of the process's threads by kind, from /proc/self/task.
struct ThreadCpu {
  double main = 0, region = 0, pipe = 0, other = 0;

  static ThreadCpu Now() {
    ThreadCpu out;
    const double tick = static_cast<double>(::sysconf(_SC_CLK_TCK));
    const std::string self = std::to_string(::getpid());
    std::error_code ec;
    for (const auto& task : std::filesystem::directory_iterator("/proc/self/task", ec)) {
      std::ifstream in(task.path() / "stat");
      std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      size_t open = stat.find('('), close = stat.rfind(')');
      if (open == std::string::npos || close == std::string::npos) continue;
      std::string name = stat.substr(open + 1, close - open - 1);
      // Fields after the name: state is field 3, utime 14, stime 15.
      std::istringstream fields(stat.substr(close + 2));
      std::string field;
      double ticks = 0;
      for (int i = 3; i <= 15 && fields >> field; ++i) {
        if (i >= 14) ticks += std::strtod(field.c_str(), nullptr);
      }
      double& slot = task.path().filename() == self    ? out.main
                     : name == "region-worker"         ? out.region
                     : name.rfind("span-pipe", 0) == 0 ? out.pipe
                                                       : out.other;
      slot += ticks / tick;
    }
    return out;
  }
  std::string Since(const ThreadCpu& b) const {
    char buf[128];
    std::snprintf(buf, sizeof(buf),
                  " cpu_main_s=%.2f cpu_region_s=%.2f cpu_pipe_s=%.2f "
                  "cpu_other_s=%.2f",
                  main - b.main, region - b.region, pipe - b.pipe, other - b.other);
    return buf;
  }
};

double Seconds(Clock::Duration d) { return std::chrono::duration<double>(d).count(); }

// Feeds the stream through the region workers and the span pipeline into
// `consumer` (subscription `id`); returns once the final resolved ts reached
// `progress`.
Result<Timing> Drive(const Stream& s, const RunConfig& config, std::shared_ptr<KvConsumer> consumer,
                     SubscriptionId id, Progress* progress) {
  SpanPipelineOptions options;
  options.num_workers = config.pipeline_workers;
  BenchHost host(options, progress);
  RegionWorkerPool pool(config.region_workers, config.region_queue, &host);

  auto sub = std::make_shared<Subscription>();
  sub->id = id;
  sub->span = s.span;
  sub->start_ts = s.checkpoint;
  sub->options.advance_interval = std::chrono::milliseconds(0);
  sub->consumer = std::make_shared<TrackingConsumer>(std::move(consumer));
  auto run = std::make_shared<SubscriptionRun>(sub, kRequestId, s.span, s.checkpoint);
  {
    MutexLock lock(&sub->mu);
    sub->run = run;
    sub->last_enqueued = s.checkpoint;
  }
  Status status = host.pipeline().Register(id, sub->consumer, s.checkpoint);
  host.pipeline().Start();
  pool.Start();
  for (size_t i = 0; status.ok() && i < s.regions.size(); ++i) {
    const pd::Region& region = s.regions[i];
    LockResult lock = run->lock.TryLock(s.ranges[i], region.id, region.version);
    if (lock.outcome != LockOutcome::kSuccess) {
      status = Internal("region range did not lock");
      break;
    }
    auto state = std::make_unique<RegionState>(run, RegionRoute::Of(region), lock.resolved_ts, 0);
    state->stream_id = kStreamId;
    pool.PostStart(std::move(state));
  }

  Clock* clock = Clock::Real();
  Clock::TimePoint start = clock->Now();
  double cpu_start = CpuSeconds();
  ThreadCpu threads_start = ThreadCpu::Now();
  for (size_t i = 0; status.ok() && i < s.messages.size(); ++i) {
    // The reader copies each message out of gRPC's slices into one string.
    status = pool.PostEvent(kStreamId, std::make_shared<const std::string>(s.messages[i]));
  }
  double post_seconds = Seconds(clock->Now() - start);
  if (status.ok()) status = progress->WaitFor(s.final_ts);
  Timing timing{Seconds(clock->Now() - start), post_seconds, ThreadCpu::Now().Since(threads_start),
                CpuSeconds() - cpu_start};

  // Stop everything, then break the run <-> subscription cycle.
  run->stopped.store(true);
  pool.Stop();
  host.pipeline().Stop();
  {
    MutexLock lock(&sub->mu);
    sub->run.reset();
  }
  RETURN_IF_ERROR(status);
  return timing;
}

// What one run delivered, per second of wall clock and per CPU-second.
struct RunRate {
  double events_per_s = 0;
  double events_per_cpu_s = 0;
};

RunRate PrintRun(const char* name, const Stream& s, const Timing& t, const RunConfig& config,
                 double parse_events_per_s) {
  double events_per_s = static_cast<double>(s.events) / t.seconds;
  std::printf(
      "BENCH %s events_per_s=%.6g rows_per_s=%.6g parse_events_per_s=%.6g ratio=%.3f "
      "region_workers=%zu pipeline_workers=%zu cpu_s=%.3f events_per_cpu_s=%.6g events=%llu "
      "rows=%llu seconds=%.3f post_s=%.3f region_queue=%zu%s\n",
      name, events_per_s, static_cast<double>(s.rows) / t.seconds, parse_events_per_s,
      events_per_s / parse_events_per_s, config.region_workers, config.pipeline_workers,
      t.cpu_seconds, static_cast<double>(s.events) / t.cpu_seconds,
      static_cast<unsigned long long>(s.events), static_cast<unsigned long long>(s.rows), t.seconds,
      t.post_seconds, config.region_queue, t.threads.c_str());
  std::fflush(stdout);
  return RunRate{events_per_s, static_cast<double>(s.events) / t.cpu_seconds};
}

// Seconds to parse every message, into one reused message or a fresh one
// each time; the median of three passes.
Result<double> ParseSeconds(const Stream& s, bool reuse) {
  Clock* clock = Clock::Real();
  std::vector<double> passes;
  for (int pass = 0; pass < 3; ++pass) {
    cdcpb::ChangeDataEvent reused;
    Clock::TimePoint start = clock->Now();
    for (const std::string& bytes : s.messages) {
      cdcpb::ChangeDataEvent fresh;
      if (!(reuse ? reused : fresh).ParseFromString(bytes)) {
        return Corruption("recorded message does not parse");
      }
    }
    passes.push_back(Seconds(clock->Now() - start));
  }
  std::sort(passes.begin(), passes.end());
  return passes[1];
}

// The bare protobuf parse rate; returns events/s of the reused-message loop.
Result<double> MeasureParse(const Stream& s) {
  ASSIGN_OR_RETURN(double reused_s, ParseSeconds(s, true));
  ASSIGN_OR_RETURN(double fresh_s, ParseSeconds(s, false));
  double events = static_cast<double>(s.events);
  std::printf(
      "BENCH puller_parse events_per_s=%.6g rows_per_s=%.6g mib_per_s=%.6g "
      "fresh_msg_events_per_s=%.6g messages=%zu bytes=%llu seconds=%.3f\n",
      events / reused_s, static_cast<double>(s.rows) / reused_s,
      static_cast<double>(s.bytes) / (1024.0 * 1024.0) / reused_s, events / fresh_s,
      s.messages.size(), static_cast<unsigned long long>(s.bytes), reused_s);
  std::fflush(stdout);
  return events / reused_s;
}

// Parse and matcher on the calling thread only, with no queues: what the
// data path costs without thread hand-offs.
Result<RunRate> RunInline(const Stream& s, double parse_events_per_s) {
  std::map<uint64_t, RegionMatcher> matchers;
  for (const pd::Region& region : s.regions) {
    matchers.emplace(region.id.value(), RegionMatcher(region.id, s.checkpoint));
  }
  Clock* clock = Clock::Real();
  Clock::TimePoint start = clock->Now();
  double cpu_start = CpuSeconds();
  uint64_t delivered = 0;
  ChangeDataFrame frame;
  RegionEventDecoder decoder;
  DecodedRegionEvent decoded;
  for (const std::string& bytes : s.messages) {
    RETURN_IF_ERROR(SplitChangeData(bytes, &frame));
    KvBatch batch;
    for (const RegionEventRef& ref : frame.events) {
      auto it = matchers.find(ref.region_id);
      if (it == matchers.end()) return Internal("unknown region");
      RETURN_IF_ERROR(decoder.Decode(ref, &decoded));
      if (decoded.rows == nullptr) continue;
      for (const RowView& row : *decoded.rows) {
        RETURN_IF_ERROR(it->second.Handle(row, &batch));
      }
    }
    delivered += batch.size();
    if (frame.resolved_ts.has_value()) {
      for (uint64_t region : frame.resolved_ts->regions()) {
        matchers.at(region).AdvanceResolvedTs(Ts(frame.resolved_ts->ts()));
      }
    }
  }
  double seconds = Seconds(clock->Now() - start);
  double cpu_seconds = CpuSeconds() - cpu_start;
  if (delivered != s.events) return Internal("inline run delivered a different count");
  double events_per_s = static_cast<double>(s.events) / seconds;
  std::printf(
      "BENCH puller_inline events_per_s=%.6g rows_per_s=%.6g ratio=%.3f cpu_s=%.3f "
      "seconds=%.3f\n",
      events_per_s, static_cast<double>(s.rows) / seconds, events_per_s / parse_events_per_s,
      cpu_seconds, seconds);
  std::fflush(stdout);
  return RunRate{events_per_s, static_cast<double>(s.events) / cpu_seconds};
}

Result<RunRate> RunPipeline(const Stream& s, const RunConfig& config, const char* name,
                            double parse_events_per_s) {
  Progress progress;
  auto consumer = std::make_shared<NoopConsumer>(&progress);
  ASSIGN_OR_RETURN(Timing t, Drive(s, config, consumer, SubscriptionId(1), &progress));
  if (consumer->entries() != s.events) {
    return Internal(std::string(name) + ": delivered " + std::to_string(consumer->entries()) +
                    " of " + std::to_string(s.events));
  }
  return PrintRun(name, s, t, config, parse_events_per_s);
}

Result<RunRate> RunEventStore(const Stream& s, const RunConfig& config, const std::string& dir,
                              double parse_events_per_s) {
  logpuller::testing::CapturingSubscriber subscriber;
  eventstore::EventStoreOptions options;
  options.data_dir = dir;
  ASSIGN_OR_RETURN(std::unique_ptr<eventstore::EventStore> store,
                   eventstore::EventStore::Open(options, &subscriber));
  Progress progress;
  RETURN_IF_ERROR(store->RegisterDispatcher(DispatcherId{1, 1}, s.table, s.span, s.checkpoint,
                                            [&progress](Ts ts, Ts) { progress.Resolved(ts); }));
  std::shared_ptr<KvConsumer> consumer = subscriber.consumer();
  if (consumer == nullptr) return Internal("event store did not subscribe");
  Result<Timing> t = Drive(s, config, consumer, SubscriptionId(1), &progress);
  eventstore::EventStoreStats stats = store->stats();
  store->Stop();
  RETURN_IF_ERROR(t.status());
  if (stats.entries_written != s.events) {
    return Internal("event store wrote " + std::to_string(stats.entries_written) + " of " +
                    std::to_string(s.events));
  }
  return PrintRun("puller_eventstore", s, t.value(), config, parse_events_per_s);
}

Status Main(const Args& args, const std::string& dir) {
  if (args.events == 0 || args.regions == 0 || args.events_per_msg == 0 || args.rounds == 0 ||
      args.rows_per_event == 0 || args.region_workers == 0 || args.pipeline_workers == 0) {
    return InvalidArgument("counts must be > 0");
  }
  Clock::TimePoint gen_start = Clock::Real()->Now();
  Stream s = StreamGenerator(args).Generate();
  std::printf("stream: %zu messages, %.1f MiB, %llu rows, %llu events, generated in %.2f s\n",
              s.messages.size(), static_cast<double>(s.bytes) / (1024.0 * 1024.0),
              static_cast<unsigned long long>(s.rows), static_cast<unsigned long long>(s.events),
              Seconds(Clock::Real()->Now() - gen_start));
  RunConfig full{args.region_workers, args.pipeline_workers, args.region_queue};
  RunConfig single = full;
  single.region_workers = 1;
  single.pipeline_workers = 1;
  auto wanted = [&args](const char* run) { return args.runs.find(run) != std::string::npos; };
  // Per run kind, each round's ratios to that round's parse rate.
  std::map<std::string, std::vector<double>> wall_ratio;
  std::map<std::string, std::vector<double>> cpu_ratio;
  std::vector<double> parse_rates;
  for (size_t round = 0; round < args.rounds; ++round) {
    ASSIGN_OR_RETURN(double parse_rate, MeasureParse(s));
    parse_rates.push_back(parse_rate);
    auto note = [&](const char* name, const RunRate& rate) {
      wall_ratio[name].push_back(rate.events_per_s / parse_rate);
      cpu_ratio[name].push_back(rate.events_per_cpu_s / parse_rate);
    };
    if (wanted("inline")) {
      ASSIGN_OR_RETURN(RunRate rate, RunInline(s, parse_rate));
      note("inline", rate);
    }
    if (wanted("pipeline")) {
      ASSIGN_OR_RETURN(RunRate rate, RunPipeline(s, full, "puller_pipeline", parse_rate));
      note("pipeline", rate);
    }
    if (wanted("single")) {
      ASSIGN_OR_RETURN(RunRate rate, RunPipeline(s, single, "puller_pipeline_single", parse_rate));
      note("single", rate);
    }
    if (wanted("store")) {
      ASSIGN_OR_RETURN(RunRate rate, RunEventStore(s, full, dir, parse_rate));
      note("store", rate);
    }
  }
  if (args.rounds > 1) {
    std::printf("BENCH puller_summary rounds=%zu parse_events_per_s=%.6g", args.rounds,
                bench::Median(parse_rates));
    for (const auto& [name, ratios] : wall_ratio) {
      std::printf(" %s_ratio=%.3f %s_cpu_ratio=%.3f", name.c_str(), bench::Median(ratios),
                  name.c_str(), bench::Median(cpu_ratio[name]));
    }
    std::printf(" (medians of per-round ratios to the round's parse rate)\n");
  }
  return Status::Ok();
}

}  // namespace
}  // namespace sluice::logpuller

int main(int argc, char** argv) {
  sluice::logpuller::Args args;
  const std::map<std::string, size_t*> counts = {{"--events", &args.events},
                                                 {"--regions", &args.regions},
                                                 {"--resolved_every", &args.resolved_every},
                                                 {"--region_workers", &args.region_workers},
                                                 {"--pipeline_workers", &args.pipeline_workers},
                                                 {"--region_queue", &args.region_queue},
                                                 {"--rounds", &args.rounds}};
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    if (auto it = counts.find(flag); it != counts.end()) {
      *it->second = std::strtoull(argv[i + 1], nullptr, 10);
    } else if (flag == "--runs" || flag == "--dir") {
      (flag == "--runs" ? args.runs : args.dir) = argv[i + 1];
    } else {
      std::fprintf(stderr, "unknown flag %s\n", flag.c_str());
      return 2;
    }
  }
  // A directory of our own is removed whole; a given one keeps all but the store.
  std::filesystem::path dir = args.dir.empty() ? std::filesystem::temp_directory_path() /
                                                     ("puller_bench_" + std::to_string(::getpid()))
                                               : std::filesystem::path(args.dir);
  sluice::Status st = sluice::logpuller::Main(args, dir.string());
  std::error_code ec;
  std::filesystem::remove_all(args.dir.empty() ? dir : dir / "event_store", ec);
  if (!st.ok()) {
    std::fprintf(stderr, "puller_bench: %s\n", st.ToString().c_str());
    return 1;
  }
  return 0;
}
