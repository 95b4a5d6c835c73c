// CdcService: the ChangeData gRPC service (EventFeed, EventFeedV2) of one
// simulated TiKV store, answering as TiKV's CDC component does.
//
// Per stream, the gRPC handler thread is the reader: it parses each request
// and registers or deregisters subscriptions (cdc_hub.h). A writer thread,
// owned by the handler and joined before it returns, drains the stream's
// StreamSink into ChangeDataEvent messages (cdc_stream_writer.h). Neither the
// MVCC observer nor a gRPC thread ever waits for a slow client: a full sink
// congests the region (Error{congested}) instead.
//
// Requests:
//  - register (the `request` oneof unset, or `register`): stream-level checks
//    (cdc_request_validator.h), then region checks (CdcHub::Register), then
//    an incremental scan (cdc_scanner.h) and live events;
//  - deregister: region_id != 0 ends that region under request_id; 0 ends
//    every region under request_id (stream-multiplexing semantics);
//  - notify_txn_status and anything else: logged and ignored (TiKV would
//    abort on it; a simulator must not).
// EventFeedV2 reads the `features` metadata; an unknown feature fails the
// stream with UNIMPLEMENTED before any request is read. When the client
// closes its side, the stream's subscriptions end, the queued messages are
// sent and the stream finishes OK, as in TiKV.
//
// Threads: gRPC handler threads, one writer per stream, the scan workers and
// the resolved-ts ticker (both owned here). Control calls (SetBusy,
// DropStreams, Congest, Reconcile, AdvanceResolvedTs, Stop) come from any
// thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>

#include "cdcpb.grpc.pb.h"
#include "common/clock.h"
#include "common/strong_id.h"
#include "common/thread_annotations.h"
#include "simkv/cdc_hub.h"
#include "simkv/cdc_request_validator.h"
#include "simkv/cdc_scanner.h"
#include "simkv/cdc_stream_sink.h"
#include "simkv/cdc_stream_writer.h"
#include "simkv/grpc_util.h"
#include "simkv/resolved_ts_ticker.h"

namespace sluice::simkv {

struct CdcServiceOptions {
  StoreId store_id;
  uint64_t cluster_id = 0;
  Clock* clock = Clock::Real();  // Drives the resolved-ts tick; must outlive the service.
  // TiKV's min_ts_interval. Zero: no ticker; call AdvanceResolvedTs().
  std::chrono::milliseconds resolved_ts_interval{200};
  StreamSinkOptions sink;
  size_t scan_threads = 2;
  bool check_conf_ver = false;  // See CdcHubOptions.
};

class CdcService final : public ChangeDataService {
 public:
  using Stream = CdcServerStream;

  // Borrows the store, the regions and the TSO; all must outlive the service.
  CdcService(CdcServiceOptions options, MvccStore* store, RegionMap* regions, TsoAllocator* tso);
  ~CdcService() override;
  CdcService(const CdcService&) = delete;
  CdcService& operator=(const CdcService&) = delete;

  // Observes the store and starts the scan workers and the ticker. Once.
  void Start();
  // Refuses new streams, cancels open ones and waits for their handlers,
  // joins the owned threads and stops observing the store. Idempotent.
  void Stop();

  void AdvanceResolvedTs() { hub_.AdvanceResolvedTs(); }
  // Registers are answered ServerIsBusy while set.
  void SetBusy(std::optional<BusyState> busy) EXCLUDES(mu_);
  // Breaks every open stream (clients see CANCELLED).
  void DropStreams() { calls_.CancelAll(); }
  // Ends every subscription with Congested.
  void Congest() { hub_.CongestAll(); }
  // Re-checks subscriptions after region operations (CdcHub::Reconcile).
  void Reconcile() { hub_.Reconcile(); }

  size_t NumStreams() const { return calls_.size(); }
  size_t NumSubscriptions() const { return hub_.NumSubscriptions(); }

  grpc::Status EventFeed(grpc::ServerContext* context, Stream* stream) override;
  grpc::Status EventFeedV2(grpc::ServerContext* context, Stream* stream) override;

 private:
  // One stream's state, owned by its handler (reader) thread.
  struct Conn {
    uint64_t id = 0;
    bool multiplexing = false;
    std::shared_ptr<StreamSink> sink;
    std::optional<ClientVersion> version;  // From the first request.
  };

  grpc::Status Serve(grpc::ServerContext* context, Stream* stream, bool v2);
  void HandleRequest(Conn& conn, const cdcpb::ChangeDataRequest& request);
  void HandleRegister(const Conn& conn, const cdcpb::ChangeDataRequest& request);
  std::optional<BusyState> busy() const EXCLUDES(mu_);

  const CdcServiceOptions options_;
  MvccStore* const store_;
  CdcHub hub_;
  CdcScanner scanner_;
  ResolvedTsTicker ticker_;
  ActiveCalls calls_;
  std::atomic<uint64_t> next_conn_id_{1};
  std::atomic<uint64_t> next_downstream_id_{1};

  mutable Mutex mu_;
  std::optional<BusyState> busy_ GUARDED_BY(mu_);
  bool started_ GUARDED_BY(mu_) = false;
  bool stopped_ GUARDED_BY(mu_) = false;
};

}  // namespace sluice::simkv
