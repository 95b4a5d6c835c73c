// The server's terms: the owner thread's campaign, becoming the owner and
// stepping down, and what a session loss does (fence at once, then a new
// capture).
#include <unistd.h>

#include <random>

#include "api/api_server.h"
#include "common/logging.h"
#include "config/replica_config.h"
#include "server/server.h"

namespace sluice::server {

namespace {

NodeId NewNodeId() {
  std::random_device rd;
  std::mt19937_64 rng((static_cast<uint64_t>(rd()) << 32) ^ rd() ^ getpid());
  const uint64_t a = rng();
  const uint64_t b = rng();
  return NodeId(fmt::format("{:08x}-{:04x}-{:04x}-{:04x}-{:012x}", a >> 32, (a >> 16) & 0xffff,
                            a & 0xffff, b >> 48, b & 0xffffffffffffULL));
}

}  // namespace

Status Server::StartCapture() {
  const NodeId id = NewNodeId();
  {
    MutexLock lock(&id_mu_);
    id_ = id;
  }
  meta::SessionOptions session_options;
  session_options.ttl = options_.capture_session_ttl;
  session_options.clock = options_.clock;
  ASSIGN_OR_RETURN(std::unique_ptr<meta::Session> session,
                   meta::Session::Create(store_.get(), session_options,
                                         [this](const Status& why) { OnSessionLost(why); }));
  std::unique_ptr<meta::Session> old;
  {
    MutexLock transport_lock(&transport_mu_);
    // The previous capture's node is gone (fenced); its transport goes
    // before the new one binds a fixed peer port.
    {
      MutexLock lock(&term_mu_);
      if (node_ != nullptr) return Internal("a new capture while the old one's node still runs");
      node_transport_ = nullptr;
    }
    transport_.reset();
    ASSIGN_OR_RETURN(transport_, StartTransport(id));
    MutexLock lock(&term_mu_);
    node_transport_ = transport_.get();
    old = std::move(session_);
    session_ = std::move(session);
    capture_cancel_ = CancelSource();
    fenced_ = false;
    if (node_ == nullptr) RETURN_IF_ERROR(InitNode());
  }
  old.reset();  // Joins its thread, which may be waiting for term_mu_.
  RETURN_IF_ERROR(RegisterCapture());
  LOG_INFO("capture registered; id={} lease={:x} ttl={}s", id.value(), session_lease().value(),
           std::chrono::duration_cast<std::chrono::seconds>(options_.capture_session_ttl).count());
  return Status::Ok();
}

meta::LeaseId Server::session_lease() const {
  MutexLock lock(&term_mu_);
  return session_ != nullptr ? session_->lease() : meta::LeaseId();
}

CancelToken Server::CaptureToken() const {
  MutexLock lock(&term_mu_);
  return capture_cancel_.token();
}

bool Server::fenced() const {
  MutexLock lock(&term_mu_);
  return fenced_;
}

void Server::OnSessionLost(const Status& why) {
  LOG_ERROR("session lost: fencing this node, then re-registering; id={} why={}", id().value(),
            why.ToString());
  MutexLock lock(&term_mu_);
  fenced_ = true;
  if (node_ != nullptr) node_->LocalFence();
  if (ticker_ != nullptr) ticker_->RequestStop();
  capture_cancel_.Cancel();
  term_cancel_.Cancel();
}

CancelToken Server::NewTermToken() {
  MutexLock lock(&term_mu_);
  term_cancel_ = CancelSource();
  if (fenced_ || capture_cancel_.cancelled()) term_cancel_.Cancel();
  return term_cancel_.token();
}

Status Server::ResignOwner() {
  MutexLock lock(&term_mu_);
  if (coordinator_ == nullptr) return NotFound("this node is not the owner");
  LOG_INFO("the owner resigns; id={}", id().value());
  resign_requested_ = true;
  term_cancel_.Cancel();
  return Status::Ok();
}

void Server::OwnerLoop(const StopToken& token) {
  Backoff backoff(BackoffOptions{std::chrono::milliseconds(200), std::chrono::seconds(5)},
                  std::random_device()());
  while (!token.cancelled()) {
    if (fenced()) {
      // The session is gone: this node starts over as a new capture.
      StepDown();
      Status renewed = StartCapture();
      if (!renewed.ok()) {
        LOG_WARN("cannot register a new capture yet; error={}", renewed.ToString());
        options_.clock->SleepFor(backoff.Next(), token);
      }
      continue;
    }
    const CancelToken capture = CaptureToken();
    Result<meta::LeaderInfo> led = election_->Campaign(id().value(), session_lease(), capture);
    if (token.cancelled()) return;
    if (!led.ok()) {
      if (!fenced()) {
        LOG_WARN("campaign for the owner failed; error={}", led.status().ToString());
        options_.clock->SleepFor(backoff.Next(), token);
      }
      continue;
    }
    const CancelToken term = NewTermToken();
    Status became = BecomeOwner();
    if (became.ok()) {
      backoff.Reset();
      // Serve until the leadership moves (lease gone), the term ends
      // (resign, session lost) or the node stops.
      while (!term.cancelled()) {
        Result<std::optional<meta::LeaderInfo>> changed = election_->WaitForChange(*led, term);
        if (changed.ok()) break;
        if (!term.cancelled()) options_.clock->SleepFor(backoff.Next(), term);
      }
    } else {
      LOG_ERROR("cannot become the owner; error={}", became.ToString());
      (void)election_->Resign(session_lease());
    }
    if (token.cancelled()) return;  // Stop() ends the term.
    LOG_INFO("this node is no longer the owner; id={}", id().value());
    StepDown();
    bool resign = false;
    {
      MutexLock lock(&term_mu_);
      std::swap(resign, resign_requested_);
    }
    // Only now, with this term's changefeeds stopped, may the next owner
    // start: leave the election (and campaign again, behind the others).
    if (resign) (void)election_->Resign(session_lease());
    if (!became.ok()) options_.clock->SleepFor(backoff.Next(), token);
  }
}

Status Server::BecomeOwner() {
  node::Node* node = nullptr;
  {
    MutexLock lock(&term_mu_);
    if (fenced_) return Aborted("the session was lost");
    node = node_.get();
  }
  LOG_INFO("this node is the owner now; id={}", id().value());
  coordinator::CoordinatorOptions co;
  co.clock = options_.clock;
  co.meta = meta_.get();
  co.maintainers = node->host();
  co.nodes = cluster_.get();
  co.tso = tso_.get();
  co.gc_updater = gc_.get();
  co.gc.ttl_seconds = options_.gc_ttl_seconds;
  co.self_addr = options_.addr;
  co.backoff_initial = options_.backoff_initial;
  co.backoff_max = options_.backoff_max;
  // changefeed-error-stuck-duration from each changefeed's replica config.
  co.error_bound_of = [](const meta::ChangefeedInfo& info) -> Clock::Duration {
    if (info.config_json.empty()) return Clock::Duration::zero();
    Result<config::ReplicaConfig> config = config::ReplicaConfigFromJson(info.config_json);
    if (!config.ok()) return Clock::Duration::zero();
    return std::chrono::duration_cast<Clock::Duration>(
        config->changefeed_error_stuck_duration.value);
  };
  ASSIGN_OR_RETURN(std::unique_ptr<coordinator::Coordinator> coord,
                   coordinator::Coordinator::Open(co));
  RETURN_IF_ERROR(node->Start(coord.get()));
  auto ticker = std::make_unique<OwnedThread>();
  ticker->Start("coord-tick", [c = coord.get(), clock = options_.clock](const StopToken& token) {
    while (!token.cancelled()) {
      c->Tick();
      clock->SleepFor(std::chrono::milliseconds(100), token);
    }
  });
  coordinator::Coordinator* raw = coord.get();
  {
    MutexLock lock(&term_mu_);
    coordinator_ = std::move(coord);
    ticker_ = std::move(ticker);
    if (fenced_) {
      ticker_->RequestStop();
      return Aborted("the session was lost");
    }
    term_cv_.SignalAll();
  }
  api_->SetCoordinator(raw);
  return Status::Ok();
}

void Server::EndTerm() {
  if (api_ != nullptr) api_->SetCoordinator(nullptr);
  std::unique_ptr<OwnedThread> ticker;
  node::Node* node = nullptr;
  bool fenced = false;
  {
    MutexLock lock(&term_mu_);
    fenced = fenced_;
    // A standby's node goes too when fenced: it is bound to the old session.
    if (coordinator_ == nullptr && !fenced) return;
    if (node_ == nullptr) return;
    ticker = std::move(ticker_);
    node = node_.get();
  }
  if (ticker != nullptr) ticker->Stop();
  // A graceful stop lets the maintainers report a last time; a fenced node
  // reports nothing. The node stays reachable for a fence meanwhile.
  if (fenced) node->LocalFence();
  node->Stop();
  std::unique_ptr<coordinator::Coordinator> coord;
  std::unique_ptr<node::Node> stopped;
  {
    MutexLock lock(&term_mu_);
    coord = std::move(coordinator_);
    stopped = std::move(node_);
  }
}

void Server::StepDown() {
  EndTerm();
  MutexLock lock(&term_mu_);
  if (node_ == nullptr && !fenced_) {
    Status st = InitNode();
    if (!st.ok())
      LOG_ERROR("cannot prepare the data plane of the next term; error={}", st.ToString());
  }
}

std::optional<std::string> Server::OwnerAddress() {
  Result<std::optional<meta::LeaderInfo>> leader = election_->Leader();
  if (!leader.ok() || !leader->has_value()) return std::nullopt;
  Result<meta::CaptureList> captures = meta_->ListCaptures();
  if (!captures.ok()) return std::nullopt;
  for (const auto& c : captures->captures) {
    if (c.value.id.value() == (*leader)->value) return c.value.advertise_addr;
  }
  return std::nullopt;
}

}  // namespace sluice::server
