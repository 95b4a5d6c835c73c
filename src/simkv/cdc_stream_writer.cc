#include "simkv/cdc_stream_writer.h"

namespace sluice::simkv {

void WriteStream(grpc::ServerContext* context, CdcServerStream* stream, StreamSink* sink,
                 const CancelToken& token) {
  // Reused from one write to the next (see StreamSink::NextMessage).
  cdcpb::ChangeDataEvent message;
  bool more = false;
  bool headers_sent = false;  // The first write sends the response headers.
  while (sink->NextMessage(token, &message, &more)) {
    grpc::WriteOptions options;
    if (more && headers_sent) options.set_buffer_hint();
    if (!stream->Write(message, options)) {
      sink->Close();
      context->TryCancel();
      return;
    }
    headers_sent = true;
  }
}

}  // namespace sluice::simkv
