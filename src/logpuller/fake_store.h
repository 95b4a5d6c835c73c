// FakeStore: a scripted TiKV store for log puller tests. It serves the
// ChangeData gRPC service (EventFeed and EventFeedV2, multiplexed by request
// id) on a loopback port and answers each register request with the steps
// the test scripted for that region and attempt: rows, resolved ts, region
// errors, raw messages, or the end of the stream with a chosen status. It
// holds no data of its own, so it can send what a real TiKV never would.
//
// Promises:
//  - The n-th register request for a region (over all streams, counting from
//    1) is answered with Script(region, n), or with the default script
//    ({Initialized()} unless changed). Steps are written in order, and
//    nothing pushed or ticked for the region overtakes them.
//  - A register is "live" from its arrival until it is deregistered
//    (request id and region, or region 0 for all regions of the request) or
//    its stream ends. Push and Tick reach only live registers.
//  - A Break step ends the stream (the handler returns that status) after the
//    earlier steps are written; every register of that stream is forgotten.
//
// Ownership: the store owns its gRPC server and per-stream state. Threads:
// gRPC handler threads (one per stream, which also writes the scripted
// answers); every public method may be called from any thread.
#pragma once

#include <grpcpp/grpcpp.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "cdcpb.grpc.pb.h"
#include "common/status.h"
#include "common/strong_id.h"
#include "common/thread_annotations.h"
#include "simkv/grpc_util.h"

namespace sluice::logpuller::testing {

// Rows as TiKV sends them (op type PUT; tests may change any field).
cdcpb::Event_Row CommittedRow(std::string key, std::string value, Ts start, Ts commit);
cdcpb::Event_Row PrewriteRow(std::string key, std::string value, Ts start);
cdcpb::Event_Row CommitRow(std::string key, Ts start, Ts commit);
cdcpb::Event_Row RollbackRow(std::string key, Ts start);
cdcpb::Event_Row InitializedRow();

// One thing the fake store sends. Event and resolved steps are addressed to
// the register they answer (its region and request id) unless overridden.
struct FakeStep {
  enum class Kind {
    kEvent,     // A ChangeDataEvent with one Event (`event`).
    kResolved,  // A ChangeDataEvent with a batched ResolvedTs of `ts`.
    kRaw,       // `raw`, sent verbatim.
    kBreak,     // The stream ends with `status` (register scripts only).
  };

  static FakeStep Rows(std::vector<cdcpb::Event_Row> rows);
  static FakeStep Initialized();
  static FakeStep Error(cdcpb::Error error);
  // An Event with ids but no payload (the oneof unset).
  static FakeStep Empty();
  // The deprecated per-region resolved ts inside an Event.
  static FakeStep LegacyResolved(Ts ts);
  static FakeStep Resolved(Ts ts);
  static FakeStep Raw(cdcpb::ChangeDataEvent event);
  static FakeStep Break(grpc::Status status);

  // Copies addressed to another region or request id.
  FakeStep ForRegion(uint64_t region_id) const;
  FakeStep ForRequest(uint64_t request_id) const;

  Kind kind = Kind::kEvent;
  cdcpb::Event event;
  Ts ts;
  cdcpb::ChangeDataEvent raw;
  grpc::Status status;
  std::optional<uint64_t> region_id;
  std::optional<uint64_t> request_id;
};

// A register request as the fake store received it.
struct FakeRegister {
  uint64_t stream_id = 0;  // The fake store's id of the stream (from 1).
  uint64_t request_id = 0;
  RegionId region;
  int attempt = 0;  // 1 for the region's first register, then 2, ...
  Ts checkpoint;
  std::string start_key;  // Comparable.
  std::string end_key;
  bool old_value = false;
};

class FakeStore final : public cdcpb::ChangeData::Service {
 public:
  using Stream = grpc::ServerReaderWriter<cdcpb::ChangeDataEvent, cdcpb::ChangeDataRequest>;

  // Serves on 127.0.0.1 with a free port.
  static Result<std::unique_ptr<FakeStore>> Start();
  ~FakeStore() override;
  FakeStore(const FakeStore&) = delete;
  FakeStore& operator=(const FakeStore&) = delete;

  // Cancels open streams, waits for their handlers and stops the server.
  // Idempotent.
  void Stop() EXCLUDES(mu_);
  std::string address() const { return server_.address(); }

  // The answer to the `attempt`-th register of `region` (1-based).
  void Script(RegionId region, int attempt, std::vector<FakeStep> steps) EXCLUDES(mu_);
  // The answer to registers without a script.
  void SetDefaultScript(std::vector<FakeStep> steps) EXCLUDES(mu_);

  // Sends `steps` to the region's newest live register. NotFound if it has
  // none; InvalidArgument for a Break step (scripts only).
  Status Push(RegionId region, const std::vector<FakeStep>& steps) EXCLUDES(mu_);
  // Sends a ResolvedTs of `ts` for every live register: one message per
  // stream and request id, listing its regions. Returns the regions reached.
  size_t Tick(Ts ts) EXCLUDES(mu_);
  // Cancels every open stream (the client sees CANCELLED).
  void BreakStreams() { calls_.CancelAll(); }

  // Registers of `region` whose scripted answer has been written, in order.
  std::vector<FakeRegister> Registers(RegionId region) const EXCLUDES(mu_);
  int NumRegisters(RegionId region) const EXCLUDES(mu_);
  // The region's newest live register.
  std::optional<FakeRegister> Live(RegionId region) const EXCLUDES(mu_);
  uint64_t NumDeregisters() const EXCLUDES(mu_);
  uint64_t NumStreams() const EXCLUDES(mu_);
  // Streams opened with the `features: stream-multiplexing` metadata.
  uint64_t NumMultiplexedStreams() const EXCLUDES(mu_);

  grpc::Status EventFeed(grpc::ServerContext* context, Stream* stream) override;
  grpc::Status EventFeedV2(grpc::ServerContext* context, Stream* stream) override;

 private:
  struct Conn;
  // (stream id, request id, region id).
  using LiveKey = std::tuple<uint64_t, uint64_t, uint64_t>;
  struct LiveEntry {
    FakeRegister reg;
    std::shared_ptr<Conn> conn;
  };

  FakeStore() = default;
  grpc::Status Serve(grpc::ServerContext* context, Stream* stream);
  // Returns the status to end the stream with, if a step breaks it.
  std::optional<grpc::Status> HandleRegister(const std::shared_ptr<Conn>& conn,
                                             const cdcpb::ChangeDataRequest& request) EXCLUDES(mu_);
  void HandleDeregister(const Conn& conn, const cdcpb::ChangeDataRequest& request) EXCLUDES(mu_);
  void ForgetStream(uint64_t stream_id) EXCLUDES(mu_);

  simkv::LoopbackServer server_;
  simkv::ActiveCalls calls_;

  mutable Mutex mu_;
  bool stopped_ GUARDED_BY(mu_) = false;
  uint64_t next_stream_id_ GUARDED_BY(mu_) = 1;
  uint64_t num_streams_ GUARDED_BY(mu_) = 0;
  uint64_t num_multiplexed_ GUARDED_BY(mu_) = 0;
  uint64_t num_deregisters_ GUARDED_BY(mu_) = 0;
  std::map<std::pair<RegionId, int>, std::vector<FakeStep>> scripts_ GUARDED_BY(mu_);
  std::vector<FakeStep> default_script_ GUARDED_BY(mu_);
  std::map<RegionId, int> attempts_ GUARDED_BY(mu_);
  std::map<LiveKey, LiveEntry> live_ GUARDED_BY(mu_);
  std::vector<FakeRegister> answered_ GUARDED_BY(mu_);
};

}  // namespace sluice::logpuller::testing
