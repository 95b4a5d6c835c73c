#include "messaging/in_memory_transport.h"

#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <optional>

#include "common/lifecycle.h"

namespace sluice::messaging {

// One node: its Transport face, its inbox and its delivery thread.
class InMemoryNetwork::Endpoint final : public Transport {
 public:
  Endpoint(InMemoryNetwork* network, NodeId self) : network_(network), self_(std::move(self)) {}
  ~Endpoint() override {
    Close();
    thread_.Stop();
  }

  const NodeId& self() const override { return self_; }

  void SetReceiver(Receiver receiver) override EXCLUDES(receiver_mu_) {
    MutexLock lock(&receiver_mu_);  // Waits for a delivery in progress.
    receiver_ = std::move(receiver);
  }

  Status Send(heartbeatpb::MessageEnvelope envelope) override {
    return network_->Route(self_, std::move(envelope));
  }

  void Start() {
    thread_.Start("memnet-" + self_.value(), [this](StopToken) { Run(); });
  }

  void Push(std::string wire) EXCLUDES(inbox_mu_) {
    MutexLock lock(&inbox_mu_);
    inbox_.push_back(std::move(wire));
    inbox_cv_.Signal();
  }

  // Ends delivery; returns how many queued envelopes were dropped.
  size_t Close() EXCLUDES(inbox_mu_) {
    MutexLock lock(&inbox_mu_);
    if (closed_) return 0;
    closed_ = true;
    size_t dropped = inbox_.size();
    inbox_.clear();
    inbox_cv_.SignalAll();
    return dropped;
  }

  void Join() { thread_.Join(); }

 private:
  void Run() {
    for (;;) {
      std::string wire;
      {
        MutexLock lock(&inbox_mu_);
        while (inbox_.empty() && !closed_) inbox_cv_.Wait(&inbox_mu_);
        if (closed_) return;
        wire = std::move(inbox_.front());
        inbox_.pop_front();
      }
      heartbeatpb::MessageEnvelope envelope;
      bool had_receiver = false;
      Status status;
      if (!envelope.ParseFromString(wire)) {
        status = Corruption("envelope does not parse");
      } else {
        MutexLock lock(&receiver_mu_);
        if (receiver_) {
          had_receiver = true;
          status = receiver_(std::move(envelope));
        }
      }
      network_->OnDelivered(had_receiver, status);
    }
  }

  InMemoryNetwork* const network_;
  const NodeId self_;

  Mutex inbox_mu_;
  CondVar inbox_cv_;
  std::deque<std::string> inbox_ GUARDED_BY(inbox_mu_);
  bool closed_ GUARDED_BY(inbox_mu_) = false;

  Mutex receiver_mu_;  // Held while the receiver runs.
  Receiver receiver_ GUARDED_BY(receiver_mu_);

  OwnedThread thread_;
};

InMemoryNetwork::InMemoryNetwork() = default;
InMemoryNetwork::~InMemoryNetwork() { Stop(); }

Transport* InMemoryNetwork::AddNode(const NodeId& node) {
  MutexLock lock(&mu_);
  if (stopped_ || endpoints_.contains(node)) return nullptr;
  auto endpoint = std::make_unique<Endpoint>(this, node);
  endpoint->Start();
  Transport* transport = endpoint.get();
  endpoints_.emplace(node, std::move(endpoint));
  return transport;
}

void InMemoryNetwork::Stop() {
  std::vector<Endpoint*> endpoints;
  {
    MutexLock lock(&mu_);
    if (stopped_) return;
    stopped_ = true;
    for (auto& [key, link] : links_) {
      stats_.dropped_on_stop += link.held.size();
      link.held.clear();
    }
    for (auto& [node, endpoint] : endpoints_) {
      size_t dropped = endpoint->Close();
      stats_.dropped_on_stop += dropped;
      pending_ -= dropped;
      endpoints.push_back(endpoint.get());
    }
    idle_.SignalAll();
  }
  // Endpoints are never removed, so the pointers stay valid.
  for (Endpoint* endpoint : endpoints) endpoint->Join();
}

void InMemoryNetwork::SetLinkDown(const NodeId& from, const NodeId& to, bool down) {
  MutexLock lock(&mu_);
  links_[{from, to}].down = down;
}

void InMemoryNetwork::DropNext(const NodeId& from, const NodeId& to, size_t n) {
  MutexLock lock(&mu_);
  links_[{from, to}].drop_next = n;
}

void InMemoryNetwork::CorruptNext(const NodeId& from, const NodeId& to, size_t n) {
  MutexLock lock(&mu_);
  links_[{from, to}].corrupt_next = n;
}

void InMemoryNetwork::Hold(const NodeId& from, const NodeId& to) {
  MutexLock lock(&mu_);
  links_[{from, to}].holding = true;
}

size_t InMemoryNetwork::Release(const NodeId& from, const NodeId& to, ReleaseOrder order) {
  MutexLock lock(&mu_);
  Link& link = links_[{from, to}];
  link.holding = false;
  std::vector<std::string> held;
  held.swap(link.held);
  if (order == ReleaseOrder::kReversed) std::reverse(held.begin(), held.end());
  auto it = endpoints_.find(to);
  if (stopped_ || it == endpoints_.end()) {
    stats_.dropped_on_stop += held.size();
    return 0;
  }
  for (std::string& wire : held) EnqueueLocked(it->second.get(), std::move(wire));
  return held.size();
}

size_t InMemoryNetwork::HeldCount(const NodeId& from, const NodeId& to) const {
  MutexLock lock(&mu_);
  auto it = links_.find({from, to});
  return it == links_.end() ? 0 : it->second.held.size();
}

bool InMemoryNetwork::WaitIdle(std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  MutexLock lock(&mu_);
  while (pending_ > 0) {
    if (idle_.WaitUntil(&mu_, deadline)) return pending_ == 0;
  }
  return true;
}

InMemoryNetworkStats InMemoryNetwork::stats() const {
  MutexLock lock(&mu_);
  return stats_;
}

Status InMemoryNetwork::Route(const NodeId& from, heartbeatpb::MessageEnvelope envelope) {
  const NodeId to(envelope.to());
  MutexLock lock(&mu_);
  if (stopped_) return Cancelled("in-memory network stopped");
  auto it = endpoints_.find(to);
  if (it == endpoints_.end()) {
    ++stats_.refused;
    return Unavailable(fmt::format("node '{}' is not on the network", to.value()));
  }
  Link& link = links_[{from, to}];
  if (link.down) {
    ++stats_.refused;
    return Unavailable(fmt::format("link {} -> {} is down", from.value(), to.value()));
  }
  ++stats_.sent;
  if (link.drop_next > 0) {
    --link.drop_next;
    ++stats_.dropped;
    return Status::Ok();
  }
  if (link.corrupt_next > 0) {
    --link.corrupt_next;
    ++stats_.corrupted;
    envelope.set_payload(std::string(3, '\xff'));  // A truncated varint tag.
  }
  std::string wire;
  envelope.SerializeToString(&wire);
  if (link.holding) {
    link.held.push_back(std::move(wire));
    return Status::Ok();
  }
  EnqueueLocked(it->second.get(), std::move(wire));
  return Status::Ok();
}

void InMemoryNetwork::EnqueueLocked(Endpoint* to, std::string wire) {
  ++pending_;
  to->Push(std::move(wire));
}

void InMemoryNetwork::OnDelivered(bool had_receiver, const Status& status) {
  MutexLock lock(&mu_);
  if (had_receiver) {
    ++stats_.delivered;
    if (!status.ok()) ++stats_.receiver_errors;
  } else {
    ++stats_.no_receiver;
  }
  if (pending_ > 0) --pending_;
  if (pending_ == 0) idle_.SignalAll();
}

}  // namespace sluice::messaging
