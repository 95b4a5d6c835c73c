#include "meta/election.h"

#include <thread>

#include "common/test_util.h"
#include "meta/keys.h"
#include "meta/meta_test_util.h"

namespace sluice::meta {
namespace {

using std::chrono::seconds;

class ElectionTest : public MetaBackendTest {
 protected:
  // Campaigns on another thread; the result lands in `result`.
  std::thread CampaignAsync(Election* election, std::string value, LeaseId lease,
                            Result<LeaderInfo>* result, Notification* done) {
    return std::thread([=, this] {
      *result = election->Campaign(value, lease, cancel_.token());
      done->Notify();
    });
  }

  const std::string prefix_ = KeyLayout().OwnerPrefix();
  CancelSource cancel_;
};

SLUICE_META_BACKENDS(ElectionTest);

TEST_P(ElectionTest, ResignHandsOverToTheNextCandidate) {
  Election election(store_, prefix_);
  LeaseGrant l1 = *store_->GrantLease(seconds(10));
  LeaseGrant l2 = *store_->GrantLease(seconds(10));
  EXPECT_FALSE(election.Leader()->has_value());

  Result<LeaderInfo> first = election.Campaign("node-1", l1.id, cancel_.token());
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->value, "node-1");

  Result<LeaderInfo> second = Cancelled("not run");
  Notification second_done;
  std::thread t = CampaignAsync(&election, "node-2", l2.id, &second, &second_done);
  // node-2 is in line (its key exists) but does not lead.
  ASSERT_TRUE(PollUntil([&] { return store_->GetPrefix(prefix_)->kvs.size() == 2; }));
  EXPECT_FALSE(second_done.HasBeenNotified());
  EXPECT_EQ((*election.Leader())->value, "node-1");

  // An observer sees the change.
  Result<std::optional<LeaderInfo>> observed = Cancelled("not run");
  std::thread observer([&] { observed = election.WaitForChange(*first, cancel_.token()); });

  ASSERT_TRUE(election.Resign(l1.id).ok());
  t.join();
  observer.join();
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_EQ(second->value, "node-2");
  EXPECT_GT(second->create_revision, first->create_revision);
  ASSERT_TRUE(observed.ok());
  EXPECT_EQ((*observed)->value, "node-2");
}

TEST_P(ElectionTest, LeaseExpiryHandsOver) {
  Election election(store_, prefix_);
  LeaseGrant l1 = *store_->GrantLease(seconds(1));
  LeaseGrant l2 = *store_->GrantLease(seconds(30));
  ASSERT_TRUE(election.Campaign("node-1", l1.id, cancel_.token()).ok());
  Result<LeaderInfo> second = Cancelled("not run");
  Notification done;
  std::thread t = CampaignAsync(&election, "node-2", l2.id, &second, &done);
  ASSERT_TRUE(PollUntil([&] { return store_->GetPrefix(prefix_)->kvs.size() == 2; }));
  // node-1 does not keep its lease alive: it expires within seconds.
  t.join();
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_EQ(second->value, "node-2");
  // Campaigning again with the same lease keeps the leadership as it is.
  EXPECT_EQ(*election.Campaign("node-2", l2.id, cancel_.token()), *second);
}

TEST_P(ElectionTest, CancelledCampaignAndLostKey) {
  Election election(store_, prefix_);
  LeaseGrant l1 = *store_->GrantLease(seconds(10));
  LeaseGrant l2 = *store_->GrantLease(seconds(5));
  ASSERT_TRUE(election.Campaign("node-1", l1.id, CancelToken()).ok());
  Result<LeaderInfo> second = Cancelled("not run");
  Notification done;
  std::thread t = CampaignAsync(&election, "node-2", l2.id, &second, &done);
  ASSERT_TRUE(PollUntil([&] { return store_->GetPrefix(prefix_)->kvs.size() == 2; }));
  // node-2's own lease ends first: its candidacy is gone, typed.
  ASSERT_TRUE(store_->RevokeLease(l2.id).ok());
  t.join();
  EXPECT_EQ(second.status().code(), Code::kAborted);

  LeaseGrant l3 = *store_->GrantLease(seconds(10));
  Result<LeaderInfo> third = Cancelled("not run");
  Notification third_done;
  std::thread t3 = CampaignAsync(&election, "node-3", l3.id, &third, &third_done);
  ASSERT_TRUE(PollUntil([&] { return store_->GetPrefix(prefix_)->kvs.size() == 2; }));
  cancel_.Cancel();
  t3.join();
  EXPECT_EQ(third.status().code(), Code::kCancelled);
  EXPECT_EQ(election.Campaign("x", LeaseId(), CancelToken()).status().code(),
            Code::kInvalidArgument);
}

}  // namespace
}  // namespace sluice::meta
