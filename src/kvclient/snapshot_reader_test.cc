// SnapshotReader against a real in-process simkv cluster: scans across
// regions with limits and paging, point gets, busy stores, cancellation, and
// a fake store whose answers break the protocol.
#include "kvclient/snapshot_reader.h"

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "cdcpb.grpc.pb.h"
#include "common/lifecycle.h"
#include "common/test_util.h"
#include "kvclient/kvclient_test_util.h"
#include "simkv/grpc_util.h"
#include "tikvpb.grpc.pb.h"

namespace sluice::kvclient::testing {
namespace {

constexpr auto kWait = std::chrono::seconds(15);

class SnapshotReaderTest : public KvClientTest {
 protected:
  void SetUp() override { StartCluster({"b", "d", "f"}); }

  Ts Put(const KvPairs& pairs) {
    Result<simkv::Txn> txn = cluster_->txn().Begin();
    EXPECT_TRUE(txn.ok());
    for (const auto& [key, value] : pairs) txn->Put(key, value);
    Result<Ts> commit = cluster_->txn().Commit(*txn);
    EXPECT_TRUE(commit.ok()) << commit.status().ToString();
    return commit.ok() ? *commit : Ts();
  }

  KvPairs MustScan(std::string_view start, std::string_view end, Ts ts, size_t limit) {
    Result<KvPairs> pairs = reader_->Scan(start, end, ts, limit);
    EXPECT_TRUE(pairs.ok()) << pairs.status().ToString();
    return pairs.ok() ? *pairs : KvPairs{};
  }
};

TEST_F(SnapshotReaderTest, ScansAcrossRegionsInKeyOrder) {
  const Ts first = Put({{"a", "1"}, {"b", "1"}, {"c", "1"}, {"d", "1"}, {"e", "1"}, {"g", "1"}});
  const Ts second = Put({{"c", "2"}, {"f", "2"}});
  const KvPairs all_first = {{"a", "1"}, {"b", "1"}, {"c", "1"},
                             {"d", "1"}, {"e", "1"}, {"g", "1"}};
  EXPECT_EQ(MustScan("", "", first, 0), all_first);
  EXPECT_EQ(
      MustScan("", "", second, 0),
      (KvPairs{
          {"a", "1"}, {"b", "1"}, {"c", "2"}, {"d", "1"}, {"e", "1"}, {"f", "2"}, {"g", "1"}}));
  EXPECT_EQ(MustScan("b", "f", first, 0),
            (KvPairs{{"b", "1"}, {"c", "1"}, {"d", "1"}, {"e", "1"}}));
  EXPECT_EQ(MustScan("a\x01", "", first, 3), (KvPairs{{"b", "1"}, {"c", "1"}, {"d", "1"}}));
  EXPECT_TRUE(MustScan("h", "", second, 0).empty());
  EXPECT_TRUE(MustScan("e", "c", second, 0).empty());
  EXPECT_TRUE(MustScan("", "", Ts(first.value() - 1), 0).empty());
  EXPECT_GE(cache_->size(), 4u);
}

TEST_F(SnapshotReaderTest, GetsOneKey) {
  const Ts ts = Put({{"c", "1"}});
  Result<std::optional<std::string>> found = reader_->Get("c", ts);
  ASSERT_TRUE(found.ok()) << found.status().ToString();
  EXPECT_EQ(found->value_or("<none>"), "1");
  Result<std::optional<std::string>> missing = reader_->Get("cc", ts);
  ASSERT_TRUE(missing.ok());
  EXPECT_FALSE(missing->has_value());
  Result<std::optional<std::string>> before = reader_->Get("c", Ts(ts.value() - 1));
  ASSERT_TRUE(before.ok());
  EXPECT_FALSE(before->has_value());
}

TEST_F(SnapshotReaderTest, BusyStoreIsRetriedAfterItsBackoff) {
  const Ts ts = Put({{"c", "1"}});
  const StoreId leader = RegionOf("c").leader;
  ASSERT_TRUE(cluster_->SetStoreBusy(leader, "read pool full", 20).ok());
  std::optional<Result<KvPairs>> result;
  OwnedThread reader;
  reader.Start("scan", [&](StopToken) { result.emplace(reader_->Scan("c", "d", ts, 0)); });
  ASSERT_TRUE(PollUntil([&] { return reader_->stats().region_errors > 1; }, kWait));
  ASSERT_TRUE(cluster_->ClearStoreBusy(leader).ok());
  reader.Join();
  ASSERT_TRUE(result.has_value() && result->ok()) << result->status().ToString();
  EXPECT_EQ(**result, (KvPairs{{"c", "1"}}));
}

TEST_F(SnapshotReaderTest, BusyUntilTheDeadlineIsBusy) {
  const Ts ts = Put({{"c", "1"}});
  ASSERT_TRUE(cluster_->SetStoreBusy(RegionOf("c").leader, "read pool full", 20).ok());
  SnapshotReaderOptions options = ReaderOptions();
  // Long enough for the first call to connect and see the store busy even
  // in a sanitizer build; a first call cut by the deadline has no busy
  // answer to report.
  options.timeout = std::chrono::milliseconds(1500);
  Result<KvPairs> result = NewReader(options)->Scan("c", "d", ts, 0);
  EXPECT_EQ(result.status().code(), Code::kBusy) << result.status().ToString();
}

TEST_F(SnapshotReaderTest, StopCancelsAWaitingRead) {
  const Ts lock_ts = Put({{"c", "1"}});
  ASSERT_TRUE(cluster_->mvcc()
                  .Prewrite({simkv::Mutation::Put("c", "2")}, "c", Ts(lock_ts.value() + 1), 60000)
                  .ok());
  std::optional<Result<KvPairs>> result;
  OwnedThread reader;
  reader.Start("scan", [&](StopToken) { result.emplace(reader_->Scan("", "", Now(), 0)); });
  ASSERT_TRUE(PollUntil([&] { return reader_->stats().lock_waits > 0; }, kWait));
  reader_->Stop();
  reader.Join();
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->status().code(), Code::kCancelled) << result->status().ToString();
  EXPECT_EQ(reader_->Get("a", Now()).status().code(), Code::kCancelled);
}

// A store that answers every scan with what `answer` fills in.
class FakeTikv final : public tikvpb::Tikv::Service {
 public:
  explicit FakeTikv(std::function<void(kvrpcpb::ScanResponse*)> answer)
      : answer_(std::move(answer)) {}
  grpc::Status KvScan(grpc::ServerContext*, const kvrpcpb::ScanRequest*,
                      kvrpcpb::ScanResponse* response) override {
    answer_(response);
    return grpc::Status::OK;
  }

 private:
  std::function<void(kvrpcpb::ScanResponse*)> answer_;
};

TEST_F(SnapshotReaderTest, MalformedAnswersAreProtocolViolations) {
  const Ts ts = Put({{"c", "1"}});
  struct Case {
    const char* name;
    std::function<void(kvrpcpb::ScanResponse*)> answer;
    Code code;
  };
  const std::vector<Case> cases = {
      {"out of order",
       [](kvrpcpb::ScanResponse* r) {
         r->add_pairs()->set_key("cc");
         r->add_pairs()->set_key("c");
       },
       Code::kProtocolViolation},
      {"outside the range", [](kvrpcpb::ScanResponse* r) { r->add_pairs()->set_key("z"); },
       Code::kProtocolViolation},
      {"more than the limit",
       [](kvrpcpb::ScanResponse* r) {
         for (const char* key : {"c1", "c2", "c3"}) r->add_pairs()->set_key(key);
       },
       Code::kProtocolViolation},
      {"unknown key error",
       [](kvrpcpb::ScanResponse* r) { r->mutable_error()->mutable_deadlock(); },
       Code::kProtocolViolation},
      {"abort", [](kvrpcpb::ScanResponse* r) { r->mutable_error()->set_abort("no"); },
       Code::kAborted},
  };
  const StoreId leader = RegionOf("c").leader;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    FakeTikv fake(c.answer);
    Result<simkv::LoopbackServer> server = simkv::StartLoopbackServer({&fake});
    ASSERT_TRUE(server.ok());
    ASSERT_TRUE(cluster_->store_registry().SetAddress(leader, server->address()).ok());
    cache_->InvalidateStore(leader);
    Result<KvPairs> result = reader_->Scan("c", "d", ts, 0);
    EXPECT_EQ(result.status().code(), c.code) << result.status().ToString();
    simkv::ShutdownServer(server->server.get());
  }
  // A store without the Tikv service.
  cdcpb::ChangeData::Service cdc_only;
  Result<simkv::LoopbackServer> empty = simkv::StartLoopbackServer({&cdc_only});
  ASSERT_TRUE(empty.ok());
  ASSERT_TRUE(cluster_->store_registry().SetAddress(leader, empty->address()).ok());
  cache_->InvalidateStore(leader);
  EXPECT_EQ(reader_->Scan("c", "d", ts, 0).status().code(), Code::kNotSupported);
  simkv::ShutdownServer(empty->server.get());
}

}  // namespace
}  // namespace sluice::kvclient::testing
