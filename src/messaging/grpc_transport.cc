#include "messaging/grpc_transport.h"

#include <grpcpp/grpcpp.h>

#include <deque>
#include <random>
#include <utility>

#include "common/lifecycle.h"
#include "common/logging.h"
#include "sluice_peer.grpc.pb.h"

namespace sluice::messaging {

using heartbeatpb::MessageEnvelope;

struct GrpcTransport::Counters {
  std::atomic<uint64_t> sent{0};
  std::atomic<uint64_t> received{0};
  std::atomic<uint64_t> queue_full{0};
  std::atomic<uint64_t> unknown_peer{0};
  std::atomic<uint64_t> streams_opened{0};
  std::atomic<uint64_t> streams_refused{0};
  std::atomic<uint64_t> rejected{0};
  std::atomic<uint64_t> dropped_unknown{0};
  std::atomic<uint64_t> dropped_on_remove{0};
};

namespace {

void Bump(std::atomic<uint64_t>& counter, uint64_t n = 1) {
  counter.fetch_add(n, std::memory_order_relaxed);
}

}  // namespace

// One established stream, client or server side. Writes come from the
// link's writer thread only. Close() cancels the call and waits for a write
// in progress; after it neither a write nor a cancel touches the call, so
// its owner may finish it.
class GrpcTransport::Stream {
 public:
  using WriteFn = std::function<bool(const MessageEnvelope&)>;
  Stream(WriteFn write, std::function<void()> cancel)
      : write_(std::move(write)), cancel_(std::move(cancel)) {}

  bool Write(const MessageEnvelope& envelope) EXCLUDES(write_mu_) {
    MutexLock lock(&write_mu_);
    if (closed_) return false;
    return write_(envelope);
  }
  // Cancels the call; never blocks on a write.
  void Cancel() EXCLUDES(cancel_mu_) {
    MutexLock lock(&cancel_mu_);
    if (!dead_) cancel_();
  }
  void Close() EXCLUDES(cancel_mu_, write_mu_) {
    {
      MutexLock lock(&cancel_mu_);
      if (!dead_) cancel_();
      dead_ = true;
    }
    MutexLock lock(&write_mu_);
    closed_ = true;
  }

 private:
  const WriteFn write_;
  const std::function<void()> cancel_;
  Mutex cancel_mu_;
  bool dead_ GUARDED_BY(cancel_mu_) = false;
  Mutex write_mu_;
  bool closed_ GUARDED_BY(write_mu_) = false;
};

// The state of one peer: its queue, its current stream, and its threads.
class GrpcTransport::Link {
 public:
  Link(GrpcTransport* transport, PeerAddress peer)
      : transport_(transport),
        peer_(std::move(peer.id)),
        dialer_(transport->self() < peer_),
        address_(std::move(peer.address)) {}

  const NodeId& peer() const { return peer_; }
  bool dialer() const { return dialer_; }

  void Start() {
    writer_.Start("peer-w-" + peer_.value().substr(0, 8),
                  [this](const StopToken& token) { WriteLoop(token); });
    if (dialer_) {
      dial_.Start("peer-d-" + peer_.value().substr(0, 8),
                  [this](const StopToken& token) { DialLoop(token); });
    }
  }

  Status Enqueue(MessageEnvelope envelope) EXCLUDES(mu_) {
    const size_t bytes = envelope.ByteSizeLong();
    MutexLock lock(&mu_);
    if (closed_) return Unavailable("peer " + peer_.value() + " is not registered");
    const GrpcTransportOptions& o = transport_->options_;
    if (queue_.size() >= o.queue_messages || queue_bytes_ + bytes > o.queue_bytes) {
      return Busy("the queue to peer " + peer_.value() + " is full");
    }
    queue_.push_back(Queued{next_id_++, bytes, std::move(envelope)});
    queue_bytes_ += bytes;
    cv_.SignalAll();
    return Status::Ok();
  }

  // Makes `stream` the current one (an older one is cancelled). False if
  // the link is closed: the caller ends the stream.
  bool Attach(std::shared_ptr<Stream> stream) EXCLUDES(mu_) {
    std::shared_ptr<Stream> old;
    {
      MutexLock lock(&mu_);
      if (closed_) return false;
      old = std::exchange(stream_, std::move(stream));
      cv_.SignalAll();
    }
    if (old != nullptr) old->Cancel();
    Bump(transport_->counters_->streams_opened);
    return true;
  }

  void Detach(const Stream* stream) EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    if (stream_.get() == stream) stream_.reset();
  }

  void SetAddress(const std::string& address) EXCLUDES(mu_) {
    std::shared_ptr<Stream> current;
    {
      MutexLock lock(&mu_);
      if (address_ == address) return;
      address_ = address;
      current = stream_;
      if (dialing_ != nullptr) dialing_->TryCancel();
    }
    if (current != nullptr) current->Cancel();  // The dialer reconnects.
  }

  bool Connected() const EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    return stream_ != nullptr;
  }

  bool closed() const EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    return closed_;
  }

  // Cancels the stream, joins the threads; returns how many envelopes were
  // still queued. Idempotent.
  size_t Close() EXCLUDES(mu_) {
    std::shared_ptr<Stream> current;
    size_t dropped = 0;
    {
      MutexLock lock(&mu_);
      if (!closed_) {
        closed_ = true;
        dropped = queue_.size();
        queue_.clear();
        queue_bytes_ = 0;
      }
      current = std::move(stream_);
      if (dialing_ != nullptr) dialing_->TryCancel();
      cv_.SignalAll();
    }
    if (current != nullptr) current->Cancel();
    writer_.Stop();
    dial_.Stop();
    return dropped;
  }

 private:
  struct Queued {
    uint64_t id;
    size_t bytes;
    MessageEnvelope envelope;
  };

  void WriteLoop(const StopToken& token) EXCLUDES(mu_);
  void DialLoop(const StopToken& token) EXCLUDES(mu_);
  // One dial, handshake and read loop; returns when the stream ends.
  void DialOnce(const std::string& address) EXCLUDES(mu_);

  GrpcTransport* const transport_;
  const NodeId peer_;
  const bool dialer_;

  mutable Mutex mu_;
  CondVar cv_;
  std::string address_ GUARDED_BY(mu_);
  std::deque<Queued> queue_ GUARDED_BY(mu_);
  size_t queue_bytes_ GUARDED_BY(mu_) = 0;
  uint64_t next_id_ GUARDED_BY(mu_) = 0;
  std::shared_ptr<Stream> stream_ GUARDED_BY(mu_);
  grpc::ClientContext* dialing_ GUARDED_BY(mu_) = nullptr;  // The call being dialed.
  bool closed_ GUARDED_BY(mu_) = false;

  OwnedThread writer_;
  OwnedThread dial_;
};

void GrpcTransport::Link::WriteLoop(const StopToken& token) {
  while (!token.cancelled()) {
    std::shared_ptr<Stream> stream;
    uint64_t id = 0;
    MessageEnvelope envelope;
    {
      MutexLock lock(&mu_);
      while (!closed_ && (queue_.empty() || stream_ == nullptr)) cv_.Wait(&mu_);
      if (closed_) return;
      stream = stream_;
      id = queue_.front().id;
      envelope = queue_.front().envelope;
    }
    if (stream->Write(envelope)) {
      Bump(transport_->counters_->sent);
      MutexLock lock(&mu_);
      if (!queue_.empty() && queue_.front().id == id) {
        queue_bytes_ -= queue_.front().bytes;
        queue_.pop_front();
      }
      continue;
    }
    // The stream broke: let its reader end it; the envelope stays queued.
    stream->Cancel();
    Detach(stream.get());
  }
}

void GrpcTransport::Link::DialLoop(const StopToken& token) {
  Backoff backoff(transport_->options_.reconnect, std::random_device()());
  while (!token.cancelled()) {
    std::string address;
    {
      MutexLock lock(&mu_);
      if (closed_) return;
      address = address_;
    }
    const uint64_t opened = transport_->counters_->streams_opened.load();
    DialOnce(address);
    if (transport_->counters_->streams_opened.load() != opened) backoff.Reset();
    Clock::Real()->SleepFor(backoff.Next(), token);
  }
}

void GrpcTransport::Link::DialOnce(const std::string& address) {
  auto channel = grpc::CreateChannel(address, grpc::InsecureChannelCredentials());
  auto stub = peerpb::PeerMessaging::NewStub(channel);
  grpc::ClientContext context;
  {
    MutexLock lock(&mu_);
    if (closed_ || address_ != address) return;
    dialing_ = &context;
  }
  auto rw = stub->Connect(&context);
  MessageEnvelope hello;
  bool ok = rw->Write(transport_->Hello(peer_)) && rw->Read(&hello);
  if (ok) {
    Status checked = transport_->CheckHello(hello);
    if (!checked.ok() || hello.from() != peer_.value()) {
      LOG_WARN("peer {} at {} answered with a bad hello; error={}", peer_.value(), address,
               checked.ok() ? "it is another node" : checked.ToString());
      context.TryCancel();
      ok = false;
    }
  }
  std::shared_ptr<Stream> stream;
  if (ok) {
    auto* raw = rw.get();
    stream = std::make_shared<Stream>([raw](const MessageEnvelope& e) { return raw->Write(e); },
                                      [&context] { context.TryCancel(); });
    if (Attach(stream)) {
      MessageEnvelope envelope;
      while (rw->Read(&envelope)) transport_->Deliver(this, envelope);
      Detach(stream.get());
    }
    stream->Close();
  }
  {
    MutexLock lock(&mu_);
    dialing_ = nullptr;
  }
  grpc::Status finished = rw->Finish();
  if (!finished.ok() && finished.error_code() != grpc::StatusCode::CANCELLED) {
    LOG_DEBUG("stream to peer {} at {} ended; code={} error={}", peer_.value(), address,
              static_cast<int>(finished.error_code()), finished.error_message());
  }
}

// The accepting side: a stream opened by a peer whose id sorts lower.
class GrpcTransport::Service final : public peerpb::PeerMessaging::Service {
 public:
  explicit Service(GrpcTransport* transport) : transport_(transport) {}

  grpc::Status Connect(grpc::ServerContext* context,
                       grpc::ServerReaderWriter<MessageEnvelope, MessageEnvelope>* rw) override {
    MessageEnvelope hello;
    if (!rw->Read(&hello)) return grpc::Status(grpc::StatusCode::CANCELLED, "no hello");
    Status checked = transport_->CheckHello(hello);
    std::shared_ptr<Link> link;
    if (checked.ok()) {
      link = transport_->FindLink(NodeId(hello.from()));
      if (link == nullptr) {
        checked = Unavailable("node " + hello.from() + " is not a registered peer");
      } else if (link->dialer()) {
        checked = ProtocolViolation("node " + hello.from() + " must wait for this node to dial");
      }
    }
    if (!checked.ok()) {
      Bump(transport_->counters_->streams_refused);
      LOG_WARN("refused a peer stream from {}; error={}", context->peer(), checked.ToString());
      return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, checked.ToString());
    }
    if (!rw->Write(transport_->Hello(link->peer()))) {
      return grpc::Status(grpc::StatusCode::CANCELLED, "peer went away");
    }
    auto stream = std::make_shared<Stream>([rw](const MessageEnvelope& e) { return rw->Write(e); },
                                           [context] { context->TryCancel(); });
    if (link->Attach(stream)) {
      MessageEnvelope envelope;
      while (rw->Read(&envelope)) transport_->Deliver(link.get(), envelope);
      link->Detach(stream.get());
    }
    stream->Close();  // No write is in progress once the handler returns.
    return grpc::Status::OK;
  }

 private:
  GrpcTransport* const transport_;
};

GrpcTransport::GrpcTransport(GrpcTransportOptions options)
    : options_(std::move(options)), counters_(std::make_unique<Counters>()) {}

GrpcTransport::~GrpcTransport() { Stop(); }

Result<std::unique_ptr<GrpcTransport>> GrpcTransport::Start(GrpcTransportOptions options) {
  if (options.self.value().empty()) return InvalidArgument("grpc transport: a node id is required");
  if (options.queue_messages == 0 || options.queue_bytes == 0) {
    return InvalidArgument("grpc transport: the peer queue bounds must be positive");
  }
  std::unique_ptr<GrpcTransport> transport(new GrpcTransport(std::move(options)));
  RETURN_IF_ERROR(transport->Serve());
  return transport;
}

Status GrpcTransport::Serve() {
  const size_t colon = options_.listen.rfind(':');
  if (colon == std::string::npos) {
    return InvalidArgument("peer address \"" + options_.listen + "\" is not host:port");
  }
  service_ = std::make_unique<Service>(this);
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(options_.listen, grpc::InsecureServerCredentials(), &port);
  // Two processes must not share a peer port.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.RegisterService(service_.get());
  server_ = builder.BuildAndStart();
  if (server_ == nullptr || port == 0) {
    return Unavailable("cannot serve the peer stream on " + options_.listen);
  }
  address_ = options_.listen.substr(0, colon) + ":" + std::to_string(port);
  return Status::Ok();
}

void GrpcTransport::Stop() {
  std::map<NodeId, std::shared_ptr<Link>> links;
  {
    MutexLock lock(&mu_);
    if (stopped_) return;
    stopped_ = true;
    links.swap(links_);
  }
  for (auto& [id, link] : links) Bump(counters_->dropped_on_remove, link->Close());
  if (server_ != nullptr) {
    server_->Shutdown(std::chrono::system_clock::now() + std::chrono::milliseconds(200));
    server_->Wait();
  }
  SetReceiver(nullptr);
}

void GrpcTransport::SetPeers(const std::vector<PeerAddress>& peers) {
  std::vector<std::shared_ptr<Link>> removed;
  std::vector<std::shared_ptr<Link>> added;
  {
    MutexLock lock(&mu_);
    if (stopped_) return;
    std::map<NodeId, std::string> wanted;
    for (const PeerAddress& p : peers) {
      if (p.id != options_.self && !p.id.value().empty()) wanted[p.id] = p.address;
    }
    for (auto it = links_.begin(); it != links_.end();) {
      auto w = wanted.find(it->first);
      if (w == wanted.end()) {
        removed.push_back(std::move(it->second));
        it = links_.erase(it);
        continue;
      }
      it->second->SetAddress(w->second);
      wanted.erase(w);
      ++it;
    }
    for (auto& [id, address] : wanted) {
      auto link = std::make_shared<Link>(this, PeerAddress{id, address});
      links_.emplace(id, link);
      added.push_back(std::move(link));
    }
  }
  for (auto& link : removed) {
    LOG_INFO("peer {} is no longer registered; its stream closes", link->peer().value());
    Bump(counters_->dropped_on_remove, link->Close());
  }
  for (auto& link : added) link->Start();
}

bool GrpcTransport::Connected(const NodeId& peer) const {
  std::shared_ptr<Link> link = FindLink(peer);
  return link != nullptr && link->Connected();
}

std::shared_ptr<GrpcTransport::Link> GrpcTransport::FindLink(const NodeId& peer) const {
  MutexLock lock(&mu_);
  auto it = links_.find(peer);
  return it == links_.end() ? nullptr : it->second;
}

Status GrpcTransport::Send(MessageEnvelope envelope) {
  const NodeId to(envelope.to());
  if (to == options_.self) return InvalidArgument("grpc transport: a message to this node itself");
  std::shared_ptr<Link> link = FindLink(to);
  if (link == nullptr) {
    Bump(counters_->unknown_peer);
    return Unavailable("node " + to.value() + " is not a registered peer");
  }
  Status queued = link->Enqueue(std::move(envelope));
  if (queued.code() == Code::kBusy) Bump(counters_->queue_full);
  return queued;
}

void GrpcTransport::SetReceiver(Receiver receiver) {
  MutexLock lock(&receiver_mu_);
  const uint64_t old = receiver_generation_++;
  receiver_ = receiver ? std::make_shared<Receiver>(std::move(receiver)) : nullptr;
  for (auto it = receiver_calls_.find(old); it != receiver_calls_.end() && it->second > 0;
       it = receiver_calls_.find(old)) {
    receiver_cv_.Wait(&receiver_mu_);
  }
}

void GrpcTransport::Deliver(Link* link, const MessageEnvelope& envelope) {
  if (envelope.from() != link->peer().value() || envelope.to() != options_.self.value()) {
    Bump(counters_->rejected);
    LOG_WARN("dropped an envelope on the stream of peer {}: from={} to={}", link->peer().value(),
             envelope.from(), envelope.to());
    return;
  }
  if (link->closed()) {
    Bump(counters_->dropped_unknown);
    return;
  }
  std::shared_ptr<Receiver> receiver;
  uint64_t generation = 0;
  {
    MutexLock lock(&receiver_mu_);
    if (receiver_ == nullptr) return;
    receiver = receiver_;
    generation = receiver_generation_;
    ++receiver_calls_[generation];
  }
  Status handled = (*receiver)(envelope);
  if (!handled.ok()) {
    LOG_DEBUG("peer envelope not handled; from={} topic={} error={}", envelope.from(),
              envelope.topic(), handled.ToString());
  }
  Bump(counters_->received);
  MutexLock lock(&receiver_mu_);
  if (--receiver_calls_[generation] == 0) receiver_calls_.erase(generation);
  receiver_cv_.SignalAll();
}

MessageEnvelope GrpcTransport::Hello(const NodeId& to) const {
  MessageEnvelope hello;
  hello.set_from(options_.self.value());
  hello.set_to(to.value());
  hello.set_payload(options_.cluster_id);
  return hello;
}

Status GrpcTransport::CheckHello(const MessageEnvelope& hello) const {
  if (!hello.topic().empty() || hello.type() != 0) {
    return ProtocolViolation("the first envelope of a peer stream is not a hello");
  }
  if (hello.to() != options_.self.value()) {
    return ProtocolViolation("the hello is for node " + hello.to() + ", not this node");
  }
  if (hello.payload() != options_.cluster_id) {
    return Incompatible("the hello is from cluster \"" + hello.payload() + "\", this is \"" +
                        options_.cluster_id + "\"");
  }
  if (hello.from().empty()) return ProtocolViolation("the hello names no sender");
  return Status::Ok();
}

GrpcTransportStats GrpcTransport::stats() const {
  GrpcTransportStats s;
  const Counters& c = *counters_;
  s.sent = c.sent.load(std::memory_order_relaxed);
  s.received = c.received.load(std::memory_order_relaxed);
  s.queue_full = c.queue_full.load(std::memory_order_relaxed);
  s.unknown_peer = c.unknown_peer.load(std::memory_order_relaxed);
  s.streams_opened = c.streams_opened.load(std::memory_order_relaxed);
  s.streams_refused = c.streams_refused.load(std::memory_order_relaxed);
  s.rejected = c.rejected.load(std::memory_order_relaxed);
  s.dropped_unknown = c.dropped_unknown.load(std::memory_order_relaxed);
  s.dropped_on_remove = c.dropped_on_remove.load(std::memory_order_relaxed);
  return s;
}

}  // namespace sluice::messaging
