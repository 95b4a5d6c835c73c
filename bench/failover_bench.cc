// failover_bench: how long a changefeed stalls when the owner of a Sluice
// cluster is killed. Two `sluice server` nodes share an etcd (its own
// process), simkv runs a steady workload as its own process, and one
// changefeed replicates into the blackhole sink. Each round kills the owner
// with SIGKILL and measures, on the surviving node's API, the time until
//  - the checkpoint passes the moment of the kill ("advance"), and
//  - the checkpoint lag (wall clock minus the checkpoint's physical time) is
//    back under 1 s ("lag1s");
// then restarts the killed node (it stands by) for the next round. Runs with
// each session TTL asked for and prints, per TTL:
//   BENCH failover ttl_s=<t> kills=<n> advance_p50_s=.. advance_max_s=..
//         lag1s_p50_s=.. lag1s_max_s=.. target_s=<t + 3>
#include <httplib.h>
#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>
#include <thread>

#include "common/logging.h"
#include "common/status.h"
#include "common/tso.h"
#include "process/child_process.h"
#include "process/etcd_process.h"

namespace sluice::bench {
namespace {

using json = nlohmann::json;
using SteadyClock = std::chrono::steady_clock;
using testing::ChildProcess;
using testing::EtcdProcess;

struct Args {
  int kills = 10;
  std::vector<int> ttls = {10, 3};
  int txns_per_s = 200;
  std::string dir;
};

json GetJson(const std::string& api, const std::string& path) {
  httplib::Client client("http://" + api);
  client.set_connection_timeout(1);
  client.set_read_timeout(5);
  auto res = client.Get(path.c_str());
  if (!res || res->status != 200) return nullptr;
  return json::parse(res->body, nullptr, false);
}

int64_t WallMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// The changefeed's checkpoint as a wall time (ms), through `api`; -1 if not
// readable now.
int64_t CheckpointMs(const std::string& api) {
  json s = GetJson(api, "/api/v2/changefeeds/fo/status");
  if (!s.is_object() || !s.contains("checkpoint_ts")) return -1;
  return static_cast<int64_t>(tso::Physical(Ts(s["checkpoint_ts"].get<uint64_t>())));
}

struct Node {
  std::string name;
  std::unique_ptr<ChildProcess> child;
  std::string api;
};

class Cluster {
 public:
  Cluster(const Args& args, int ttl)
      : args_(args), ttl_(ttl), dir_(args.dir + "/ttl" + std::to_string(ttl)) {}

  Status Start() {
    std::filesystem::create_directories(dir_);
    etcd_ = std::make_unique<EtcdProcess>(dir_ + "/etcd");
    RETURN_IF_ERROR(etcd_->Start());
    ASSIGN_OR_RETURN(
        simkv_, ChildProcess::Start(
                    {SLUICE_SIMKV_BIN, "--txns-per-s", std::to_string(args_.txns_per_s), "--tables",
                     "4", "--regions", "8", "--tick", "100ms", "--no-kitchen-sink", "--paused"},
                    dir_ + "/simkv.log"));
    ASSIGN_OR_RETURN(pd_, simkv_->WaitForLine(std::regex("^pd (\\S+)"), std::chrono::seconds(30)));
    ASSIGN_OR_RETURN(control_, simkv_->WaitForLine(std::regex("^control http://(\\S+)"),
                                                   std::chrono::seconds(30)));
    nodes_[0].name = "a";
    nodes_[1].name = "b";
    for (Node& n : nodes_) RETURN_IF_ERROR(StartNode(&n));
    httplib::Client api("http://" + nodes_[1].api);
    auto created =
        api.Post("/api/v2/changefeeds", R"({"changefeed_id":"fo","sink_uri":"blackhole://"})",
                 "application/json");
    if (!created || created->status != 200) {
      return Unavailable("cannot create the changefeed: " +
                         (created ? created->body : std::string("no answer")));
    }
    httplib::Client control("http://" + control_);
    auto started = control.Post("/workload/start", "{}", "application/json");
    if (!started || started->status != 200) return Unavailable("cannot start the workload");
    return Status::Ok();
  }

  Status StartNode(Node* n) {
    ASSIGN_OR_RETURN(
        n->child,
        ChildProcess::Start({SLUICE_BIN, "server", "--pd", pd_, "--addr", "127.0.0.1:0",
                             "--data-dir", dir_ + "/" + n->name, "--etcd", etcd_->endpoint(),
                             "--capture-session-ttl", std::to_string(ttl_), "--log-level", "warn"},
                            dir_ + "/" + n->name + ".log"));
    ASSIGN_OR_RETURN(n->api, n->child->WaitForLine(std::regex("serving the API on (\\S+)"),
                                                   std::chrono::seconds(60)));
    return Status::Ok();
  }

  // Waits (bounded) for `pred`, polling every 20 ms.
  template <typename Pred>
  Status Await(Pred pred, std::chrono::seconds limit, const char* what) {
    const auto start = SteadyClock::now();
    while (!pred()) {
      if (SteadyClock::now() - start > limit) return Timeout(std::string("waiting for ") + what);
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return Status::Ok();
  }

  bool LagUnder1s(const std::string& api) {
    const int64_t ckpt = CheckpointMs(api);
    return ckpt > 0 && WallMs() - ckpt < 1000;
  }

  // One round: kill the owner, time the recovery on the survivor, restart.
  Status Round(double* advance_s, double* lag_s) {
    int owner = -1;
    RETURN_IF_ERROR(Await(
        [&] {
          for (int i = 0; i < 2; ++i) {
            json s = GetJson(nodes_[i].api, "/api/v2/status");
            if (s.is_object() && s.value("is_owner", false)) owner = i;
          }
          return owner >= 0 && LagUnder1s(nodes_[owner].api);
        },
        std::chrono::seconds(120), "an owner with lag under 1 s"));
    Node& dead = nodes_[owner];
    Node& survivor = nodes_[1 - owner];
    dead.child->Signal(SIGKILL);
    const int64_t killed_ms = WallMs();
    const auto killed = SteadyClock::now();
    (void)dead.child->Wait(std::chrono::seconds(10));
    RETURN_IF_ERROR(Await([&] { return CheckpointMs(survivor.api) > killed_ms; },
                          std::chrono::seconds(120), "the checkpoint to pass the kill"));
    *advance_s = std::chrono::duration<double>(SteadyClock::now() - killed).count();
    RETURN_IF_ERROR(Await([&] { return LagUnder1s(survivor.api); }, std::chrono::seconds(120),
                          "lag under 1 s"));
    *lag_s = std::chrono::duration<double>(SteadyClock::now() - killed).count();
    return StartNode(&dead);
  }

  void Stop() {
    for (Node& n : nodes_) {
      if (n.child != nullptr) {
        n.child->Signal(SIGTERM);
        (void)n.child->Wait(std::chrono::seconds(30));
      }
    }
    simkv_.reset();
    if (etcd_ != nullptr) etcd_->Kill();
  }

 private:
  const Args& args_;
  const int ttl_;
  const std::string dir_;
  std::unique_ptr<EtcdProcess> etcd_;
  std::unique_ptr<ChildProcess> simkv_;
  std::string pd_;
  std::string control_;
  Node nodes_[2];
};

double Percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(p * static_cast<double>(v.size() - 1) + 0.5)];
}

Status Run(const Args& args) {
  for (int ttl : args.ttls) {
    Cluster cluster(args, ttl);
    Status st = cluster.Start();
    std::vector<double> advance;
    std::vector<double> lag;
    for (int k = 0; st.ok() && k < args.kills; ++k) {
      double a = 0;
      double l = 0;
      st = cluster.Round(&a, &l);
      if (!st.ok()) break;
      std::fprintf(
          stderr,
          "ttl %d s kill %d: checkpoint past the kill after %.2f s, lag < 1 s after %.2f s\n", ttl,
          k + 1, a, l);
      advance.push_back(a);
      lag.push_back(l);
    }
    cluster.Stop();
    RETURN_IF_ERROR(st);
    std::printf(
        "BENCH failover ttl_s=%d kills=%d advance_p50_s=%.2f advance_max_s=%.2f lag1s_p50_s=%.2f "
        "lag1s_max_s=%.2f target_s=%d\n",
        ttl, args.kills, Percentile(advance, 0.5),
        *std::max_element(advance.begin(), advance.end()), Percentile(lag, 0.5),
        *std::max_element(lag.begin(), lag.end()), ttl + 3);
    std::fflush(stdout);
  }
  return Status::Ok();
}

}  // namespace
}  // namespace sluice::bench

int main(int argc, char** argv) {
  sluice::bench::Args args;
  CLI::App app{"failover_bench: time from kill -9 of the owner to the checkpoint moving again"};
  app.add_option("--kills", args.kills, "kills per session TTL")->check(CLI::Range(1, 1000));
  app.add_option("--ttl", args.ttls, "session TTLs in seconds (repeatable)");
  app.add_option("--txns-per-s", args.txns_per_s, "simkv's workload rate");
  app.add_option("--dir", args.dir, "scratch directory (removed after a run that succeeds)");
  CLI11_PARSE(app, argc, argv);
  sluice::logging::SetLevel(sluice::logging::Level::kWarn);
  if (args.dir.empty()) {
    args.dir =
        (std::filesystem::temp_directory_path() / ("failover_bench_" + std::to_string(getpid())))
            .string();
  }
  std::filesystem::create_directories(args.dir);
  sluice::Status s = sluice::bench::Run(args);
  std::error_code ec;
  if (s.ok()) std::filesystem::remove_all(args.dir, ec);
  if (!s.ok()) {
    std::fprintf(stderr, "failover_bench: %s (logs in %s)\n", s.ToString().c_str(),
                 args.dir.c_str());
    return 1;
  }
  return 0;
}
