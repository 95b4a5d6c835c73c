#include "meta/session.h"

#include "common/test_util.h"
#include "meta/meta_test_util.h"

namespace sluice::meta {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// Records the loss.
struct LossRecorder {
  Session::LostCallback Callback() {
    return [this](const Status& why) {
      code = why.code();
      lost.Notify();
    };
  }
  std::atomic<Code> code{Code::kOk};
  Notification lost;
};

using SessionTest = MetaBackendTest;
SLUICE_META_BACKENDS(SessionTest);

TEST_P(SessionTest, KeepsItsLeaseAliveUntilClosed) {
  LossRecorder loss;
  SessionOptions options;
  options.ttl = seconds(1);
  Result<std::unique_ptr<Session>> session = Session::Create(store_, options, loss.Callback());
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  ASSERT_TRUE(store_->Put("/node", "me", (*session)->lease()).ok());
  // Three TTLs pass; the key stays all along.
  const auto until = std::chrono::steady_clock::now() + seconds(3);
  while (std::chrono::steady_clock::now() < until) {
    ASSERT_TRUE(store_->Get("/node")->has_value());
    std::this_thread::sleep_for(milliseconds(50));  // Polling the store.
  }
  EXPECT_FALSE((*session)->lost());
  ASSERT_TRUE((*session)->Close().ok());
  EXPECT_FALSE(store_->Get("/node")->has_value());
  EXPECT_FALSE(loss.lost.HasBeenNotified());
}

TEST_P(SessionTest, ARevokedLeaseIsLostOnce) {
  LossRecorder loss;
  SessionOptions options;
  options.ttl = seconds(2);
  std::unique_ptr<Session> session =
      std::move(Session::Create(store_, options, loss.Callback())).value();
  ASSERT_TRUE(store_->RevokeLease(session->lease()).ok());
  ASSERT_TRUE(loss.lost.WaitFor(seconds(5)));
  EXPECT_EQ(loss.code.load(), Code::kNotFound);
  EXPECT_TRUE(session->lost());
  EXPECT_TRUE(session->Close().ok());  // Already gone: nothing to revoke.
}

// A store whose keep-alives fail with kUnavailable on command (a node cut
// off from etcd); everything else goes to the real store.
class UnreachableKeepAlives final : public MetaStore {
 public:
  explicit UnreachableKeepAlives(MetaStore* store) : store_(store) {}
  Result<std::optional<KeyValue>> Get(const std::string& key) override { return store_->Get(key); }
  Result<RangeResult> GetPrefix(const std::string& p) override { return store_->GetPrefix(p); }
  Result<TxnResponse> Txn(const TxnRequest& txn) override { return store_->Txn(txn); }
  Result<Revision> CurrentRevision() override { return store_->CurrentRevision(); }
  Result<std::unique_ptr<WatchCursor>> Watch(const std::string& p, Revision r) override {
    return store_->Watch(p, r);
  }
  Result<LeaseGrant> GrantLease(Clock::Duration ttl) override { return store_->GrantLease(ttl); }
  Status KeepAlive(LeaseId lease) override {
    ++keepalives;
    if (cut.load()) return Unavailable("cut off");
    return store_->KeepAlive(lease);
  }
  Status RevokeLease(LeaseId lease) override { return store_->RevokeLease(lease); }
  Result<Clock::Duration> LeaseTimeToLive(LeaseId lease) override {
    return store_->LeaseTimeToLive(lease);
  }

  std::atomic<bool> cut{false};
  std::atomic<int> keepalives{0};

 private:
  MetaStore* const store_;
};

// On the embedded store's ManualClock: the loss is declared one TTL after
// the last successful keep-alive was sent, before the store could have let
// anyone else take the lease's place.
TEST_F(MetaStoreTest, ACutOffSessionIsLostOneTtlAfterItsLastKeepAlive) {
  UnreachableKeepAlives store(store_.get());
  LossRecorder loss;
  SessionOptions options;
  options.ttl = seconds(9);  // Keep-alives every 3 s.
  options.clock = &clock_;
  std::unique_ptr<Session> session =
      std::move(Session::Create(&store, options, loss.Callback())).value();
  // Waiters: the lease thread and the session.
  ASSERT_TRUE(clock_.AwaitWaiters(2));
  clock_.Advance(seconds(3));  // t=3: a keep-alive succeeds; alive until 12.
  ASSERT_TRUE(PollUntil([&] { return store.keepalives.load() == 1; }));
  ASSERT_TRUE(clock_.AwaitWaiters(2));
  store.cut = true;
  for (int t = 6; t <= 9; t += 3) {  // t=6, 9: fail; still within the TTL.
    clock_.Advance(seconds(3));
    ASSERT_TRUE(PollUntil([&] { return store.keepalives.load() == t / 3; }));
    ASSERT_TRUE(clock_.AwaitWaiters(2));
    EXPECT_FALSE(session->lost()) << "t=" << t;
    EXPECT_TRUE(session->liveness()->Alive()) << "t=" << t;
  }
  clock_.Advance(seconds(3));  // t=12: a whole TTL since t=3.
  // Whoever checks the liveness sees it at once, before the session's
  // thread has run (it may be paused).
  EXPECT_FALSE(session->liveness()->Alive());
  ASSERT_TRUE(loss.lost.WaitFor(seconds(5)));
  EXPECT_EQ(loss.code.load(), Code::kUnavailable);
}

TEST_F(MetaStoreTest, SessionOptionsAreChecked) {
  SessionOptions options;
  options.ttl = milliseconds(500);
  EXPECT_EQ(Session::Create(store_.get(), options, [](const Status&) {}).status().code(),
            Code::kInvalidArgument);
  options.ttl = seconds(10);
  EXPECT_EQ(Session::Create(store_.get(), options, nullptr).status().code(),
            Code::kInvalidArgument);
}

}  // namespace
}  // namespace sluice::meta
