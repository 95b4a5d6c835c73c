#include "logpuller/store_stream.h"

#include <utility>
#include <vector>

#include "common/logging.h"

namespace sluice::logpuller {

std::atomic<uint64_t> StoreStream::next_stream_id_{1};

static constexpr char kEventFeedV2Method[] = "/cdcpb.ChangeData/EventFeedV2";

StoreStream::StoreStream(StoreId store, std::string address, StreamSink* sink,
                         StoreStreamOptions options)
    : store_(store), address_(std::move(address)), sink_(sink), options_(std::move(options)) {}

StoreStream::~StoreStream() { Stop(); }

bool StoreStream::connected() const {
  MutexLock lock(&mu_);
  return conn_ != nullptr && !conn_->broken;
}

void StoreStream::FillHeader(cdcpb::ChangeDataRequest* request) const {
  cdcpb::Header* header = request->mutable_header();
  header->set_cluster_id(options_.cluster_id);
  header->set_ticdc_version(options_.ticdc_version);
}

Status StoreStream::ConnectLocked() {
  if (stopped_) return Cancelled("store stream stopped");
  if (conn_ != nullptr) {
    // The old reader has reported the break (or is about to); wait for it.
    conn_->context.TryCancel();
    Connection* old = conn_.get();
    mu_.Unlock();
    old->reader.Join();
    mu_.Lock();
    if (stopped_) return Cancelled("store stream stopped");
  }
  auto conn = std::make_unique<Connection>();
  conn->id = next_stream_id_.fetch_add(1);
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(256 << 20);
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 10000);
  args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 3000);
  conn->channel = grpc::CreateCustomChannel(address_, grpc::InsecureChannelCredentials(), args);
  conn->context.AddMetadata("features", "stream-multiplexing");
  // The generated stub's call, with the response read as a byte buffer.
  const grpc::internal::RpcMethod method(kEventFeedV2Method,
                                         grpc::internal::RpcMethod::BIDI_STREAMING, conn->channel);
  conn->stream.reset(
      grpc::internal::ClientReaderWriterFactory<cdcpb::ChangeDataRequest, grpc::ByteBuffer>::Create(
          conn->channel.get(), method, &conn->context));
  Connection* raw = conn.get();
  conn_ = std::move(conn);
  raw->reader.Start("cdc-stream-read", [this, raw](StopToken) { ReadLoop(raw); });
  LOG_DEBUG("store {} stream {} opened to {}", store_.value(), raw->id, address_);
  return Status::Ok();
}

namespace {

// The message's bytes in one string (gRPC hands them over in slices), or
// null if the buffer cannot be read.
MessageBytes Flatten(const grpc::ByteBuffer& buffer) {
  std::vector<grpc::Slice> slices;
  if (!buffer.Dump(&slices).ok()) return nullptr;
  auto bytes = std::make_shared<std::string>();
  bytes->reserve(buffer.Length());
  for (const grpc::Slice& slice : slices) {
    bytes->append(reinterpret_cast<const char*>(slice.begin()), slice.size());
  }
  return bytes;
}

}  // namespace

void StoreStream::ReadLoop(Connection* conn) {
  grpc::ByteBuffer buffer;
  Status bad_input;
  while (conn->stream->Read(&buffer)) {
    MessageBytes bytes = Flatten(buffer);
    bad_input = bytes != nullptr ? sink_->OnStreamEvent(conn->id, std::move(bytes))
                                 : Corruption("a received message cannot be read");
    buffer.Clear();
    if (!bad_input.ok()) {
      conn->context.TryCancel();
      break;
    }
  }
  grpc::Status status = conn->stream->Finish();
  std::string prefix =
      "store " + std::to_string(store_.value()) + " stream " + std::to_string(conn->id);
  Status broken = bad_input.ok() ? Unavailable(prefix + " ended: " + status.error_message())
                                 : bad_input.WithContext(prefix);
  MutexLock lock(&mu_);
  conn->broken = true;
  sink_->OnStreamBroken(conn->id, store_, broken);
}

Result<uint64_t> StoreStream::Send(cdcpb::ChangeDataRequest request,
                                   const std::function<void(uint64_t)>& before_write) {
  FillHeader(&request);
  MutexLock lock(&mu_);
  if (conn_ == nullptr || conn_->broken) RETURN_IF_ERROR(ConnectLocked());
  if (conn_->broken) return Unavailable("store stream broke while connecting");
  uint64_t id = conn_->id;
  before_write(id);
  if (!conn_->stream->Write(request)) {
    // The reader sees the failure too and reports the break.
    conn_->context.TryCancel();
    return Unavailable("write to store " + std::to_string(store_.value()) + " failed");
  }
  return id;
}

void StoreStream::Deregister(uint64_t request_id) {
  cdcpb::ChangeDataRequest request;
  FillHeader(&request);
  request.set_request_id(request_id);
  request.mutable_deregister();
  MutexLock lock(&mu_);
  if (conn_ == nullptr || conn_->broken) return;
  if (!conn_->stream->Write(request)) conn_->context.TryCancel();
}

void StoreStream::Stop() {
  Connection* conn = nullptr;
  {
    MutexLock lock(&mu_);
    stopped_ = true;
    if (conn_ == nullptr) return;
    conn_->context.TryCancel();
    conn = conn_.get();
  }
  conn->reader.Join();
}

}  // namespace sluice::logpuller
