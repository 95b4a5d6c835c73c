// Event store write rate: N small changes (19-byte row keys, 100-byte
// values, 1,000 per batch) handed to ConsumeKvEvents of S subscriptions, one
// producer thread per subscription as the puller does; the clock stops when
// every persisted callback has run. Commit ts rise with the keys, as live
// changes arrive; with --scattered 1 they are drawn at random, as an
// incremental scan delivers its rows (key order, any commit ts), so each row
// lands anywhere in the memtable.
//   build/bench/eventstore_bench [--entries N] [--subs S] [--batch B]
//                                [--dbs D] [--scattered 0|1]
//                                [--write-batch E] [--dir PATH]
// Prints:
//   BENCH eventstore_write entries_per_s=... mib_per_s=... entries=... seconds=...
// mib_per_s counts key and value bytes.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "codec/tablecodec.h"
#include "common/lifecycle.h"
#include "common/thread_annotations.h"
#include "eventstore/event_store.h"

namespace sluice::eventstore {
namespace {

using SteadyClock = std::chrono::steady_clock;

struct Args {
  size_t entries = 1000000;
  size_t subs = 4;
  size_t batch = 1000;
  size_t dbs = 2;
  bool scattered = false;
  size_t write_batch = EventStoreOptions().max_batch_entries;
  std::string dir;
};

// Hands out consumers; the bench drives them itself.
class BenchPuller : public logpuller::SpanSubscriber {
 public:
  Result<SubscriptionId> Subscribe(const Span&, Ts, std::shared_ptr<logpuller::KvConsumer> consumer,
                                   const logpuller::SubscribeOptions&) override {
    MutexLock lock(&mu_);
    consumers_.push_back(std::move(consumer));
    return SubscriptionId(consumers_.size());
  }
  void Unsubscribe(SubscriptionId) override {}

  std::shared_ptr<logpuller::KvConsumer> consumer(size_t i) {
    MutexLock lock(&mu_);
    return consumers_.at(i);
  }

 private:
  Mutex mu_;
  std::vector<std::shared_ptr<logpuller::KvConsumer>> consumers_ GUARDED_BY(mu_);
};

// Counts persisted callbacks and lets the main thread wait for all of them.
class Completion {
 public:
  void Done(uint64_t entries) EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    entries_ += entries;
    cv_.SignalAll();
  }
  void WaitFor(uint64_t entries) EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    while (entries_ < entries) cv_.Wait(&mu_);
  }

 private:
  Mutex mu_;
  CondVar cv_;
  uint64_t entries_ GUARDED_BY(mu_) = 0;
};

KvBatch MakeBatch(TableId table, size_t first, size_t n, const std::string& value,
                  std::mt19937_64* scatter) {
  KvBatch batch;
  batch.reserve(n);
  for (size_t i = first; i < first + n; ++i) {
    RawKvEntry e;
    e.op = KvOp::kPut;
    e.key = codec::EncodeRowKey(table, static_cast<int64_t>(i));
    e.value = value;
    const uint64_t ts = scatter != nullptr ? (*scatter)() % (uint64_t{1} << 40) : i;
    e.start_ts = Ts(1000 + 2 * ts);
    e.commit_ts = Ts(1001 + 2 * ts);
    e.region_id = RegionId(1);
    batch.push_back(std::move(e));
  }
  return batch;
}

Status Run(const Args& args) {
  if (args.subs == 0 || args.batch == 0 || args.write_batch == 0) {
    return InvalidArgument("--subs, --batch and --write-batch must be > 0");
  }
  BenchPuller puller;
  EventStoreOptions options;
  options.data_dir = args.dir;
  options.num_dbs = args.dbs;
  options.max_batch_entries = args.write_batch;
  ASSIGN_OR_RETURN(std::unique_ptr<EventStore> store, EventStore::Open(options, &puller));
  for (size_t s = 0; s < args.subs; ++s) {
    TableId table(100 + static_cast<int64_t>(s));
    RETURN_IF_ERROR(store->RegisterDispatcher(
        DispatcherId{1, s}, table, ToComparable(TableRecordSpan(table)), Ts(1), nullptr));
  }
  const size_t per_sub = args.entries / args.subs;
  const uint64_t total = per_sub * args.subs;
  const std::string value(100, 'v');
  Completion completion;
  std::atomic<uint64_t> payload_bytes{0};

  auto start = SteadyClock::now();
  {
    ThreadGroup producers;
    for (size_t s = 0; s < args.subs; ++s) {
      std::string name = "bench-prod-";
      name += std::to_string(s);
      producers.Start(name, [&, s](StopToken) {
        std::shared_ptr<logpuller::KvConsumer> consumer = puller.consumer(s);
        TableId table(100 + static_cast<int64_t>(s));
        uint64_t bytes = 0;
        std::mt19937_64 scatter(s + 1);
        for (size_t done = 0; done < per_sub; done += args.batch) {
          size_t n = std::min(args.batch, per_sub - done);
          KvBatch batch = MakeBatch(table, done, n, value, args.scattered ? &scatter : nullptr);
          for (const RawKvEntry& e : batch) bytes += e.key.size() + e.value.size();
          consumer->ConsumeKvEvents(std::move(batch), [&completion, n] { completion.Done(n); });
        }
        payload_bytes.fetch_add(bytes);
      });
    }
    producers.Join();
  }
  completion.WaitFor(total);
  double seconds = std::chrono::duration<double>(SteadyClock::now() - start).count();
  EventStoreStats stats = store->stats();
  store->Stop();
  store.reset();
  if (stats.entries_written != total) {
    std::string msg = "wrote ";
    msg += std::to_string(stats.entries_written);
    msg += " of ";
    msg += std::to_string(total);
    return Internal(msg);
  }
  double mib = static_cast<double>(payload_bytes.load()) / (1024.0 * 1024.0);
  std::printf(
      "BENCH eventstore_write entries_per_s=%.6g mib_per_s=%.6g entries=%llu seconds=%.3f "
      "scattered=%d write_batch=%zu\n",
      static_cast<double>(total) / seconds, mib / seconds, static_cast<unsigned long long>(total),
      seconds, args.scattered ? 1 : 0, args.write_batch);
  return Status::Ok();
}

}  // namespace
}  // namespace sluice::eventstore

int main(int argc, char** argv) {
  sluice::eventstore::Args args;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    const char* v = argv[i + 1];
    if (flag == "--entries") {
      args.entries = std::strtoull(v, nullptr, 10);
    } else if (flag == "--subs") {
      args.subs = std::strtoull(v, nullptr, 10);
    } else if (flag == "--batch") {
      args.batch = std::strtoull(v, nullptr, 10);
    } else if (flag == "--dbs") {
      args.dbs = std::strtoull(v, nullptr, 10);
    } else if (flag == "--scattered") {
      args.scattered = std::strtoull(v, nullptr, 10) != 0;
    } else if (flag == "--write-batch") {
      args.write_batch = std::strtoull(v, nullptr, 10);
    } else if (flag == "--dir") {
      args.dir = v;
    } else {
      std::fprintf(stderr, "unknown flag %s\n", flag.c_str());
      return 2;
    }
  }
  std::filesystem::path dir = args.dir.empty()
                                  ? std::filesystem::temp_directory_path() / "eventstore_bench"
                                  : std::filesystem::path(args.dir);
  args.dir = dir.string();
  sluice::Status st = sluice::eventstore::Run(args);
  std::error_code ec;
  std::filesystem::remove_all(dir / "event_store", ec);
  if (!st.ok()) {
    std::fprintf(stderr, "eventstore_bench: %s\n", st.ToString().c_str());
    return 1;
  }
  return 0;
}
