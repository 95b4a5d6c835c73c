// Test support: a CDC client that sees simkv as TiCDC sees TiKV. It opens
// one EventFeed / EventFeedV2 stream over real gRPC, reads it on its own
// thread, files every event under its (request id, region id), and checks on
// arrival the rules a TiCDC client relies on:
//  - events and a resolved-ts batch never share a message; ts is never 0;
//  - no resolved ts for a region before its INITIALIZED, and never going back;
//  - after INITIALIZED every COMMIT matches a PREWRITE (start_ts, key), and
//    no COMMIT/COMMITTED at or below the last resolved ts;
//  - nothing for a subscription after its error (but DuplicateRequest, which
//    refuses only the second register) until it is registered again.
// Broken rules are collected in StreamLog::violations.
//
// Thread-safety: Send/CloseSend/WaitFor/Snapshot from the test thread; the
// reader thread is owned and joined by the destructor.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "cdcpb.grpc.pb.h"
#include "common/lifecycle.h"
#include "common/strong_id.h"
#include "common/thread_annotations.h"
#include "simkv/region_map.h"

namespace sluice::simkv::testing {

inline constexpr const char* kClientVersion = "8.5.0";

using Row = cdcpb::Event::Row;

struct RegionLog {
  std::vector<Row> rows;          // Every row (INITIALIZED too), arrival order.
  std::vector<uint64_t> indexes;  // Event.index of each row.
  std::vector<cdcpb::Error> errors;
  std::vector<uint64_t> resolved;  // Resolved ts values, arrival order.
  bool initialized = false;
  // Client-side matcher state.
  std::map<std::pair<uint64_t, std::string>, Row> prewrites;
  std::vector<Row> parked;  // COMMITs seen before INITIALIZED.

  size_t CountType(cdcpb::Event::LogType type) const;
  std::vector<Row> RowsOfType(cdcpb::Event::LogType type) const;
};

struct StreamLog {
  using Key = std::pair<uint64_t, uint64_t>;  // (request id, region id)
  std::map<Key, RegionLog> regions;
  std::vector<RegionLog> archived;  // Earlier lives of re-registered keys.
  size_t messages = 0;
  std::vector<std::string> violations;

  const RegionLog* Find(uint64_t request_id, uint64_t region_id) const;
};

struct CdcTestClientOptions {
  bool v2 = true;
  std::optional<std::string> features = "stream-multiplexing";  // nullopt: no metadata.
  bool start_reading = true;
};

class CdcTestClient {
 public:
  CdcTestClient(const std::string& address, CdcTestClientOptions options = {});
  ~CdcTestClient();
  CdcTestClient(const CdcTestClient&) = delete;
  CdcTestClient& operator=(const CdcTestClient&) = delete;

  bool Send(const cdcpb::ChangeDataRequest& request);
  void CloseSend();
  void StartReading();

  // Waits (real time) until `pred` holds on the log; returns whether it did.
  bool WaitFor(const std::function<bool(const StreamLog&)>& pred,
               std::chrono::milliseconds timeout = std::chrono::seconds(10));
  bool WaitInitialized(uint64_t request_id, uint64_t region_id);
  // Waits for an error event and returns it.
  std::optional<cdcpb::Error> WaitError(uint64_t request_id, uint64_t region_id);
  // Waits for a resolved ts for the region greater than `above`.
  std::optional<uint64_t> WaitResolvedAbove(uint64_t request_id, uint64_t region_id,
                                            uint64_t above);
  // Waits for the stream to end and returns its status.
  std::optional<grpc::Status> WaitFinished(
      std::chrono::milliseconds timeout = std::chrono::seconds(10));

  StreamLog Snapshot() const EXCLUDES(mu_);

 private:
  void ReadLoop() EXCLUDES(mu_);
  void OnMessage(const cdcpb::ChangeDataEvent& message) REQUIRES(mu_);
  void OnEvent(const cdcpb::Event& event) REQUIRES(mu_);
  void OnRow(StreamLog::Key key, RegionLog& region, const Row& row, uint64_t index) REQUIRES(mu_);
  void MatchCommit(StreamLog::Key key, RegionLog& region, const Row& commit) REQUIRES(mu_);
  void OnResolved(const cdcpb::ResolvedTs& resolved) REQUIRES(mu_);
  void Violation(std::string what) REQUIRES(mu_);

  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<cdcpb::ChangeData::Stub> stub_;
  grpc::ClientContext context_;
  std::unique_ptr<grpc::ClientReaderWriter<cdcpb::ChangeDataRequest, cdcpb::ChangeDataEvent>>
      stream_;
  OwnedThread reader_;

  mutable Mutex mu_;
  CondVar changed_;
  StreamLog log_ GUARDED_BY(mu_);
  std::set<StreamLog::Key> closed_ GUARDED_BY(mu_);  // Ended by an error.
  std::optional<grpc::Status> finished_ GUARDED_BY(mu_);
};

// A register request as TiCDC sends it (the oneof left unset), for the
// region's whole range unless a range is given.
cdcpb::ChangeDataRequest RegisterRequest(uint64_t cluster_id, const RegionInfo& region,
                                         uint64_t request_id, Ts checkpoint_ts,
                                         bool old_value = true);
cdcpb::ChangeDataRequest DeregisterRequest(uint64_t cluster_id, uint64_t request_id,
                                           uint64_t region_id = 0);

}  // namespace sluice::simkv::testing
