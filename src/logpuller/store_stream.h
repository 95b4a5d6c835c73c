// StoreStream: one multiplexed EventFeedV2 stream to one TiKV store. The
// stream is opened lazily by the first Send() and re-opened (on a fresh
// channel) by the next Send() after it broke. Every connection gets a new
// stream id, so events of a broken connection can be told apart from those of
// its successor.
//
// Threads: Send() and Deregister() are for one writer thread (the request
// scheduler). Each connection has a reader thread owned by the StoreStream
// that hands events to the StreamSink and reports the break once.
#pragma once

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <functional>
#include <memory>
#include <string>

#include "cdcpb.grpc.pb.h"
#include "common/lifecycle.h"
#include "common/status.h"
#include "common/strong_id.h"
#include "common/thread_annotations.h"
#include "logpuller/change_data.h"

namespace sluice::logpuller {

// Receives what the reader threads read.
class StreamSink {
 public:
  virtual ~StreamSink() = default;
  // A serialized ChangeDataEvent read from stream `stream_id`; may block
  // (back-pressure on TiKV). An error (bytes that do not decode) breaks the
  // stream: the reader cancels it and reports that error as the break.
  virtual Status OnStreamEvent(uint64_t stream_id, MessageBytes message) = 0;
  // The stream is over; called once per connection, after its last event and
  // while the stream's lock is held, so it must not block for long.
  virtual void OnStreamBroken(uint64_t stream_id, StoreId store, const Status& status) = 0;
};

struct StoreStreamOptions {
  std::string ticdc_version = "8.5.0";  // Sent in every request header.
  uint64_t cluster_id = 0;
};

class StoreStream {
 public:
  StoreStream(StoreId store, std::string address, StreamSink* sink, StoreStreamOptions options);
  ~StoreStream();
  StoreStream(const StoreStream&) = delete;
  StoreStream& operator=(const StoreStream&) = delete;

  // Sends a register request, connecting first if needed. `before_write`
  // runs with the stream id just before the write, under the stream's lock,
  // so nothing it posts can be overtaken by OnStreamBroken of that stream.
  // Returns the stream id used, or an error if the write failed (the stream
  // is then broken and OnStreamBroken follows).
  Result<uint64_t> Send(cdcpb::ChangeDataRequest request,
                        const std::function<void(uint64_t)>& before_write) EXCLUDES(mu_);
  // Sends Deregister for `request_id` if a stream is open. Best effort.
  void Deregister(uint64_t request_id) EXCLUDES(mu_);
  // Cancels the stream and joins its reader. Idempotent.
  void Stop() EXCLUDES(mu_);

  StoreId store() const { return store_; }
  const std::string& address() const { return address_; }
  bool connected() const EXCLUDES(mu_);

 private:
  // Events are read as bytes: the region workers parse their rows.
  using Stream = grpc::ClientReaderWriter<cdcpb::ChangeDataRequest, grpc::ByteBuffer>;
  struct Connection {
    uint64_t id = 0;
    std::shared_ptr<grpc::Channel> channel;
    grpc::ClientContext context;
    std::unique_ptr<Stream> stream;
    bool broken = false;
    OwnedThread reader;
  };

  Status ConnectLocked() REQUIRES(mu_);
  void ReadLoop(Connection* conn) EXCLUDES(mu_);
  void FillHeader(cdcpb::ChangeDataRequest* request) const;

  const StoreId store_;
  const std::string address_;
  StreamSink* const sink_;
  const StoreStreamOptions options_;

  mutable Mutex mu_;
  std::unique_ptr<Connection> conn_ GUARDED_BY(mu_);
  bool stopped_ GUARDED_BY(mu_) = false;
  static std::atomic<uint64_t> next_stream_id_;
};

}  // namespace sluice::logpuller
