// Session: a node's lease in the metastore, kept alive by a thread of its own
// (etcd's concurrency.Session; TiCDC's capture session). Everything a node
// registers (its capture info, its election candidacy) lives on this lease,
// so it all vanishes together when the node stops keeping it alive.
//
// Loss: the session is lost when a keep-alive is refused (the lease expired
// or was revoked), and also when no keep-alive has succeeded for a whole TTL
// counted from the sending of the last successful one: by then the lease may
// have expired in the store even if the node cannot reach the store to learn
// it. A partitioned or paused node therefore learns of the loss at the
// latest one TTL after its last successful keep-alive, never after another
// node may have taken its place. `on_lost` runs once, on the session's
// thread; it must not block for long (fence, then signal).
//
// Threads: one (`meta-session`), started by Create() and joined by Stop().
// lease() and lost() from any thread.
#pragma once

#include <atomic>
#include <functional>
#include <memory>

#include "common/clock.h"
#include "common/lifecycle.h"
#include "meta/metastore.h"

namespace sluice::meta {

// Whether a session may still hold its lease: lock-free, from any thread,
// shared with whatever must check it right before acting (the sinks' write
// permit). Outlives the session if its holders do.
class SessionLiveness {
 public:
  explicit SessionLiveness(Clock* clock) : clock_(clock) {}
  // False once the session is lost, or once one TTL has passed since the
  // last successful keep-alive was sent (even before the session's thread
  // notices: it may have been paused).
  bool Alive() const {
    if (lost_.load(std::memory_order_acquire)) return false;
    return clock_->Now().time_since_epoch().count() < alive_until_.load(std::memory_order_acquire);
  }

 private:
  friend class Session;
  Clock* const clock_;
  std::atomic<bool> lost_{false};
  std::atomic<Clock::Duration::rep> alive_until_{0};  // Clock::TimePoint, as a count.
};

struct SessionOptions {
  Clock::Duration ttl = std::chrono::seconds(10);  // TiCDC's capture-session-ttl.
  // Keep-alives are sent every ttl / keepalives_per_ttl.
  int keepalives_per_ttl = 3;
  Clock* clock = Clock::Real();
};

class Session {
 public:
  using LostCallback = std::function<void(const Status& why)>;

  // Grants the lease and starts keeping it alive. The store is borrowed and
  // must outlive the session.
  static Result<std::unique_ptr<Session>> Create(MetaStore* store, SessionOptions options,
                                                 LostCallback on_lost);
  ~Session();  // Stop()s.
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Stops keeping the lease alive; the lease expires one TTL later unless
  // Close() revokes it first. Idempotent.
  void Stop();
  // Stop(), then revokes the lease so its keys vanish at once (a graceful
  // exit).
  Status Close();

  LeaseId lease() const { return lease_; }
  Clock::Duration ttl() const { return ttl_; }
  bool lost() const { return liveness_->lost_.load(std::memory_order_acquire); }
  std::shared_ptr<const SessionLiveness> liveness() const { return liveness_; }

 private:
  // `asked`: when the grant was asked for; the lease surely lives one TTL
  // from then.
  Session(MetaStore* store, SessionOptions options, LostCallback on_lost, LeaseGrant grant,
          Clock::TimePoint asked);
  void Loop(const StopToken& token);
  void Lose(const Status& why);

  MetaStore* const store_;
  const SessionOptions options_;
  const LostCallback on_lost_;
  const LeaseId lease_;
  const Clock::Duration ttl_;  // As granted (the store may round it up).
  const std::shared_ptr<SessionLiveness> liveness_;
  const Clock::TimePoint granted_at_;
  OwnedThread thread_;
};

}  // namespace sluice::meta
