#include "meta/session.h"

#include "common/logging.h"

namespace sluice::meta {

Result<std::unique_ptr<Session>> Session::Create(MetaStore* store, SessionOptions options,
                                                 LostCallback on_lost) {
  if (store == nullptr || options.clock == nullptr || !on_lost) {
    return InvalidArgument("session: store, clock and loss callback are required");
  }
  if (options.ttl < std::chrono::seconds(1) || options.keepalives_per_ttl < 2) {
    return InvalidArgument("session: the ttl must be at least 1 s, with at least 2 keep-alives");
  }
  const Clock::TimePoint asked = options.clock->Now();
  ASSIGN_OR_RETURN(LeaseGrant grant, store->GrantLease(options.ttl));
  std::unique_ptr<Session> session(
      new Session(store, std::move(options), std::move(on_lost), grant, asked));
  session->thread_.Start("meta-session",
                         [s = session.get()](const StopToken& token) { s->Loop(token); });
  return session;
}

Session::Session(MetaStore* store, SessionOptions options, LostCallback on_lost, LeaseGrant grant,
                 Clock::TimePoint asked)
    : store_(store),
      options_(std::move(options)),
      on_lost_(std::move(on_lost)),
      lease_(grant.id),
      // Count loss from the TTL asked for when the store granted more: the
      // smaller bound is the safe one.
      ttl_(std::min(grant.ttl, options_.ttl)),
      liveness_(std::make_shared<SessionLiveness>(options_.clock)),
      granted_at_(asked) {
  liveness_->alive_until_.store((granted_at_ + ttl_).time_since_epoch().count(),
                                std::memory_order_release);
}

Session::~Session() { Stop(); }

void Session::Stop() { thread_.Stop(); }

Status Session::Close() {
  Stop();
  Status revoked = store_->RevokeLease(lease_);
  if (revoked.code() == Code::kNotFound) return Status::Ok();  // Already gone.
  return revoked;
}

void Session::Lose(const Status& why) {
  if (liveness_->lost_.exchange(true, std::memory_order_acq_rel)) return;
  LOG_WARN("session lost; lease={:x} why={}", lease_.value(), why.ToString());
  on_lost_(why);
}

void Session::Loop(const StopToken& token) {
  Clock* clock = options_.clock;
  const Clock::Duration interval = ttl_ / options_.keepalives_per_ttl;
  // The lease surely lives until one TTL after the last successful
  // keep-alive was sent (the grant counts as one).
  Clock::TimePoint alive_until = granted_at_ + ttl_;
  while (!token.cancelled()) {
    clock->SleepFor(interval, token);
    if (token.cancelled()) return;
    const Clock::TimePoint sent = clock->Now();
    if (sent >= alive_until) {
      Lose(Unavailable("session: no keep-alive succeeded for a whole ttl"));
      return;
    }
    Status st = store_->KeepAlive(lease_);
    if (st.ok()) {
      alive_until = sent + ttl_;
      liveness_->alive_until_.store(alive_until.time_since_epoch().count(),
                                    std::memory_order_release);
    } else if (st.code() == Code::kNotFound) {
      Lose(st);
      return;
    } else if (st.code() == Code::kCancelled) {
      return;  // The store stopped: the owner is shutting down.
    } else {
      LOG_WARN("session keep-alive failed; lease={:x} error={}", lease_.value(), st.ToString());
    }
    if (clock->Now() >= alive_until) {
      Lose(Unavailable("session: no keep-alive succeeded for a whole ttl"));
      return;
    }
  }
}

}  // namespace sluice::meta
