// simkv event rate: how many CDC row events per second the simulated
// upstream produces from pre-generated transactions, measured end to end to a
// gRPC EventFeedV2 client on loopback, next to the bare MVCC apply rate of the
// same transactions (no subscriber) as the baseline, in one run.
//   build/bench/simkv_bench [--txns N] [--rows-per-txn R] [--only apply|cdc] [--pin 1]
// (--only runs one half, e.g. to profile it. --pin 1 runs every simkv thread
// on CPU 0 and the client's reader on CPU 1, so the rate is simkv's on one
// core: threads inherit the main thread's CPU set, and the reader moves
// itself.)
// Prints:
//   BENCH simkv_mvcc_apply rows_per_s=...
//   # cpu seconds by thread: <thread name>=<seconds> ... (the CDC run's timed phase)
//   BENCH simkv_cdc_events events_per_s=... rows_per_s=... apply_s=... total_s=...
//         ratio_to_apply=... rows_per_message=... pinned=0|1
#include <google/protobuf/arena.h>
#include <grpcpp/grpcpp.h>
#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>

#include "cdcpb.grpc.pb.h"
#include "simkv/sim_cluster.h"
#include "simkv/workload.h"

namespace sluice::simkv {
namespace {

using SteadyClock = std::chrono::steady_clock;

struct Args {
  size_t txns = 20000;
  int rows_per_txn = 8;
  bool run_apply = true;
  bool run_cdc = true;
  bool pin = false;
};

// Restricts the calling thread (and the threads it creates later) to `cpu`.
bool PinToCpu(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof(set), &set) == 0;
}

WorkloadOptions BenchWorkload(const Args& args) {
  WorkloadOptions w;
  w.seed = 42;
  w.narrow_tables = 4;
  w.kitchen_sink_table = false;
  w.row_width = 32;
  w.dml.rows_per_txn = args.rows_per_txn;
  w.dml.key_space = 1000000;
  return w;
}

Result<std::vector<PreparedTxn>> Prepare(SimCluster& cluster, Workload& workload, size_t n) {
  RETURN_IF_ERROR(workload.Setup());
  return workload.Pregenerate(n);
}

// Counts every row of every ChangeDataEvent until `want` rows arrived.
class EventCounter {
 public:
  EventCounter(const std::string& address, uint64_t cluster_id, const RegionInfo& region,
               Ts checkpoint, bool pin)
      : stub_(cdcpb::ChangeData::NewStub(
            grpc::CreateChannel(address, grpc::InsecureChannelCredentials()))) {
    ctx_.AddMetadata("features", "stream-multiplexing");
    stream_ = stub_->EventFeedV2(&ctx_);
    cdcpb::ChangeDataRequest req;
    req.mutable_header()->set_cluster_id(cluster_id);
    req.mutable_header()->set_ticdc_version("8.5.0");
    req.set_region_id(region.id.value());
    req.mutable_region_epoch()->set_conf_ver(region.epoch.conf_ver);
    req.mutable_region_epoch()->set_version(region.epoch.version);
    req.set_checkpoint_ts(checkpoint.value());
    req.set_start_key(region.start_key);
    req.set_end_key(region.end_key);
    req.set_request_id(1);
    req.set_extra_op(kvrpcpb::ReadOldValue);
    stream_->Write(req);
    reader_ = std::thread([this, pin] {
      pthread_setname_np(pthread_self(), "bench-client");
      if (pin && !PinToCpu(1)) std::fprintf(stderr, "could not pin the client to CPU 1\n");
      ReadLoop();
    });
  }

  ~EventCounter() {
    ctx_.TryCancel();
    reader_.join();
  }

  bool WaitInitialized() {
    for (int i = 0; i < 10000 && !initialized_.load(); ++i) {
      std::this_thread::yield();
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return initialized_.load();
  }
  // Spins until `want` rows arrived or the stream ended; the arrival time.
  std::optional<SteadyClock::time_point> WaitRows(uint64_t want) {
    while (rows_.load() < want && !done_.load()) std::this_thread::yield();
    if (rows_.load() < want) return std::nullopt;
    return last_row_at_;
  }
  uint64_t rows() const { return rows_.load(); }
  uint64_t messages() const { return messages_.load(); }

 private:
  // Each message is parsed into an arena that is reset every few messages,
  // so the count costs the parse and not a malloc/free per row.
  void ReadLoop() {
    constexpr int kMessagesPerArena = 64;
    google::protobuf::Arena arena;
    int parsed = 0;
    while (true) {
      if (++parsed % kMessagesPerArena == 0) arena.Reset();
      auto& msg = *google::protobuf::Arena::CreateMessage<cdcpb::ChangeDataEvent>(&arena);
      if (!stream_->Read(&msg)) break;
      uint64_t n = 0;
      for (const cdcpb::Event& e : msg.events()) {
        if (!e.has_entries()) continue;
        for (const cdcpb::Event_Row& row : e.entries().entries()) {
          if (row.type() == cdcpb::Event_LogType_INITIALIZED) {
            initialized_.store(true);
          } else {
            ++n;
          }
        }
      }
      if (n > 0) {
        last_row_at_ = SteadyClock::now();
        messages_.fetch_add(1);
        rows_.fetch_add(n);
      }
    }
    done_.store(true);
  }

  std::unique_ptr<cdcpb::ChangeData::Stub> stub_;
  grpc::ClientContext ctx_;
  std::unique_ptr<grpc::ClientReaderWriter<cdcpb::ChangeDataRequest, cdcpb::ChangeDataEvent>>
      stream_;
  std::thread reader_;
  std::atomic<bool> initialized_{false};
  std::atomic<bool> done_{false};
  std::atomic<uint64_t> rows_{0};
  std::atomic<uint64_t> messages_{0};    // Messages that carried rows.
  SteadyClock::time_point last_row_at_;  // written before rows_ is bumped
};

// CPU seconds (user + system) used so far by this process's threads, summed
// per thread name (Linux /proc; empty elsewhere).
std::map<std::string, double> ThreadCpu() {
  std::map<std::string, double> out;
  const double tick = static_cast<double>(sysconf(_SC_CLK_TCK));
  std::error_code ec;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task", ec)) {
    std::ifstream comm_file(task.path() / "comm");
    std::ifstream stat_file(task.path() / "stat");
    std::string comm, stat;
    std::getline(comm_file, comm);
    std::getline(stat_file, stat);
    size_t close = stat.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream fields(stat.substr(close + 2));
    std::string field;
    uint64_t utime = 0, stime = 0;
    for (int i = 3; i <= 15 && fields >> field; ++i) {  // Fields 14 and 15 of stat.
      if (i == 14) utime = std::strtoull(field.c_str(), nullptr, 10);
      if (i == 15) stime = std::strtoull(field.c_str(), nullptr, 10);
    }
    out[comm] += static_cast<double>(utime + stime) / tick;
  }
  return out;
}

// Prints the CPU each thread group used between two ThreadCpu() readings.
void PrintCpu(const std::map<std::string, double>& before,
              const std::map<std::string, double>& after) {
  std::printf("# cpu seconds by thread:");
  for (const auto& [comm, seconds] : after) {
    auto it = before.find(comm);
    double used = seconds - (it == before.end() ? 0 : it->second);
    if (used > 0) std::printf(" %s=%.2f", comm.c_str(), used);
  }
  std::printf("\n");
}

Result<double> ApplyAll(Workload& workload, const std::vector<PreparedTxn>& txns) {
  auto start = SteadyClock::now();
  for (const PreparedTxn& t : txns) RETURN_IF_ERROR(workload.Apply(t));
  return std::chrono::duration<double>(SteadyClock::now() - start).count();
}

SimClusterOptions BenchCluster() {
  SimClusterOptions copts;
  copts.num_stores = 1;
  copts.replicas = 1;
  return copts;
}

uint64_t CountRows(const std::vector<PreparedTxn>& txns) {
  uint64_t rows = 0;
  for (const PreparedTxn& t : txns) rows += t.mutations.size();
  return rows;
}

// Baseline: the transactions applied with nobody subscribed; the seconds.
Result<double> RunApply(const Args& args) {
  ASSIGN_OR_RETURN(auto base_cluster, SimCluster::Start(BenchCluster()));
  Workload base_workload(&base_cluster->mvcc(), &base_cluster->tso(), BenchWorkload(args));
  ASSIGN_OR_RETURN(auto base_txns, Prepare(*base_cluster, base_workload, args.txns));
  uint64_t rows = CountRows(base_txns);
  ASSIGN_OR_RETURN(double base_s, ApplyAll(base_workload, base_txns));
  base_cluster->Stop();
  std::printf("BENCH simkv_mvcc_apply rows_per_s=%.6g txns=%zu rows=%llu\n", rows / base_s,
              args.txns, static_cast<unsigned long long>(rows));
  return base_s;
}

Status Run(const Args& args) {
  double base_s = 0;
  if (args.run_apply) {
    ASSIGN_OR_RETURN(base_s, RunApply(args));
  }
  if (!args.run_cdc) return Status::Ok();
  ASSIGN_OR_RETURN(auto cluster, SimCluster::Start(BenchCluster()));
  Workload workload(&cluster->mvcc(), &cluster->tso(), BenchWorkload(args));
  ASSIGN_OR_RETURN(auto txns, Prepare(*cluster, workload, args.txns));
  uint64_t rows = CountRows(txns);
  RegionInfo region;
  cluster->regions().ForEach([&](const RegionInfo& r) { region = r; });
  ASSIGN_OR_RETURN(Ts checkpoint, cluster->tso().Allocate());
  EventCounter counter(cluster->store_address(region.leader), cluster->cluster_id(), region,
                       checkpoint, args.pin);
  if (!counter.WaitInitialized()) return Timeout("subscription never initialized");
  uint64_t want = 2 * rows;  // a PREWRITE and a COMMIT row per written row
  std::map<std::string, double> cpu_before = ThreadCpu();
  auto start = SteadyClock::now();
  ASSIGN_OR_RETURN(double apply_s, ApplyAll(workload, txns));
  auto last = counter.WaitRows(want);
  if (!last) return Unavailable("stream ended after " + std::to_string(counter.rows()) + " rows");
  double total_s = std::chrono::duration<double>(*last - start).count();
  PrintCpu(cpu_before, ThreadCpu());
  std::printf(
      "BENCH simkv_cdc_events events_per_s=%.6g rows_per_s=%.6g apply_s=%.3f total_s=%.3f "
      "ratio_to_apply=%.3f rows_per_message=%.1f pinned=%d\n",
      want / total_s, rows / total_s, apply_s, total_s, base_s / total_s,
      static_cast<double>(want) / static_cast<double>(std::max<uint64_t>(1, counter.messages())),
      args.pin ? 1 : 0);
  cluster->Stop();
  return Status::Ok();
}

}  // namespace
}  // namespace sluice::simkv

int main(int argc, char** argv) {
  sluice::simkv::Args args;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "--txns") {
      args.txns = std::strtoull(argv[i + 1], nullptr, 10);
    } else if (flag == "--rows-per-txn") {
      args.rows_per_txn = std::atoi(argv[i + 1]);
    } else if (flag == "--only") {
      std::string only = argv[i + 1];
      args.run_apply = only == "apply";
      args.run_cdc = only == "cdc";
    } else if (flag == "--pin") {
      args.pin = std::string(argv[i + 1]) == "1";
    } else {
      std::fprintf(stderr, "unknown flag %s\n", flag.c_str());
      return 2;
    }
  }
  if (args.pin && !sluice::simkv::PinToCpu(0)) {
    std::fprintf(stderr, "simkv_bench: could not pin to CPU 0\n");
    return 1;
  }
  sluice::Status st = sluice::simkv::Run(args);
  if (!st.ok()) {
    std::fprintf(stderr, "simkv_bench: %s\n", st.ToString().c_str());
    return 1;
  }
  return 0;
}
