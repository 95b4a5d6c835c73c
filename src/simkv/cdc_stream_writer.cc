#include "simkv/cdc_stream_writer.h"

#include <grpcpp/impl/rpc_method.h>
#include <grpcpp/support/method_handler.h>

#include <string>

namespace sluice::simkv {

namespace {

using Handler = grpc::internal::BidiStreamingHandler<ChangeDataService, cdcpb::ChangeDataRequest,
                                                     grpc::ByteBuffer>;

}  // namespace

ChangeDataService::ChangeDataService() {
  AddMethod(new grpc::internal::RpcServiceMethod(
      "/cdcpb.ChangeData/EventFeed", grpc::internal::RpcMethod::BIDI_STREAMING,
      new Handler([](ChangeDataService* service, grpc::ServerContext* context,
                     CdcServerStream* stream) { return service->EventFeed(context, stream); },
                  this)));
  AddMethod(new grpc::internal::RpcServiceMethod(
      "/cdcpb.ChangeData/EventFeedV2", grpc::internal::RpcMethod::BIDI_STREAMING,
      new Handler([](ChangeDataService* service, grpc::ServerContext* context,
                     CdcServerStream* stream) { return service->EventFeedV2(context, stream); },
                  this)));
}

grpc::Status ChangeDataService::EventFeed(grpc::ServerContext*, CdcServerStream*) {
  return grpc::Status(grpc::StatusCode::UNIMPLEMENTED, "");
}

grpc::Status ChangeDataService::EventFeedV2(grpc::ServerContext*, CdcServerStream*) {
  return grpc::Status(grpc::StatusCode::UNIMPLEMENTED, "");
}

void WriteStream(grpc::ServerContext* context, CdcServerStream* stream, StreamSink* sink,
                 const CancelToken& token) {
  std::string bytes;  // Reused from one message to the next.
  bool more = false;
  bool headers_sent = false;  // The first write sends the response headers.
  while (sink->NextMessage(token, &bytes, &more)) {
    grpc::WriteOptions options;
    if (more && headers_sent) options.set_buffer_hint();
    grpc::Slice slice(bytes.data(), bytes.size());
    grpc::ByteBuffer buffer(&slice, 1);
    if (!stream->Write(buffer, options)) {
      sink->Close();
      context->TryCancel();
      return;
    }
    headers_sent = true;
  }
}

}  // namespace sluice::simkv
