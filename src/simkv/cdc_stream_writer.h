// WriteStream: the writer side of one EventFeed stream. It drains the
// stream's StreamSink into ChangeDataEvent writes on the calling thread (the
// stream's `cdc-writer-N` thread; see cdc_service.h) until the sink is closed
// and drained, `token` is cancelled, or a write fails.
//
// While more is queued, a write carries gRPC's buffer hint, so that gRPC may
// send it together with the next one. A hinted message returns at once (gRPC
// holds up to its write buffer size, and writes beyond that), and it is always
// followed by a write without the hint (more was queued), which flushes both.
// The first write never carries the hint: it also carries the response
// headers, which gRPC holds back when they travel with a hinted message until
// something else makes the transport write, and a synchronous Write waits for
// them. A stream whose first message found more queued would stall until the
// client happened to send something (e.g. never, after closing its side).
//
// Messages leave as the sink's wire bytes: the ChangeData methods are served
// with a raw response type (ChangeDataService below), so no ChangeDataEvent
// and no live row is built as a protobuf object on this side (scan, error
// and resolved-ts parts still are, and are serialized into those bytes).
#pragma once

#include <grpcpp/grpcpp.h>
#include <grpcpp/impl/codegen/proto_utils.h>
#include <grpcpp/impl/service_type.h>
#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/sync_stream.h>

#include "cdcpb.pb.h"
#include "common/cancel.h"
#include "simkv/cdc_stream_sink.h"

namespace sluice::simkv {

// A ChangeData stream whose responses are serialized ChangeDataEvents.
using CdcServerStream = grpc::ServerReaderWriter<grpc::ByteBuffer, cdcpb::ChangeDataRequest>;

// cdcpb.ChangeData (EventFeed, EventFeedV2) as gRPC's generated service
// registers it, except that responses are raw bytes. Clients see the same
// service. A method not overridden answers UNIMPLEMENTED.
class ChangeDataService : public grpc::Service {
 public:
  ChangeDataService();
  ~ChangeDataService() override = default;

  virtual grpc::Status EventFeed(grpc::ServerContext* context, CdcServerStream* stream);
  virtual grpc::Status EventFeedV2(grpc::ServerContext* context, CdcServerStream* stream);
};

// Borrows everything. Only one thread may write to `stream`; another may read
// it meanwhile. On a failed write (the client is gone) the sink is closed and
// the call cancelled, which wakes the stream's reader.
void WriteStream(grpc::ServerContext* context, CdcServerStream* stream, StreamSink* sink,
                 const CancelToken& token);

}  // namespace sluice::simkv
