// Fakes and a fixture for coordinator tests: a real EmbeddedMetaStore in a
// temp dir, a ManualClock, and stateful fakes of the maintainer client (it
// checks at send time that the request's epoch is already persisted), node
// membership, TSO and PD GC. Tests only; single-threaded use.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "coordinator/coordinator.h"
#include "meta/meta_test_util.h"

namespace sluice::coordinator {

struct SentAdd {
  NodeId node;
  AddMaintainerRequest request;
  MaintainerEpoch stored_epoch;  // What the store held when it was sent.
};

struct SentRemove {
  NodeId node;
  RemoveMaintainerRequest request;
};

class FakeMaintainers final : public MaintainerManagerClient {
 public:
  explicit FakeMaintainers(meta::MetaClient* meta) : meta_(meta) {}
  Status AddMaintainer(const NodeId& node, const AddMaintainerRequest& request) override {
    Result<meta::Versioned<meta::ChangefeedInfo>> stored = meta_->GetChangefeedInfo(request.id);
    EXPECT_TRUE(stored.ok());
    adds.push_back({node, request, stored.ok() ? stored->value.epoch : MaintainerEpoch()});
    return fail_adds ? Unavailable("node unreachable") : Status::Ok();
  }
  Status RemoveMaintainer(const NodeId& node, const RemoveMaintainerRequest& request) override {
    removes.push_back({node, request});
    return Status::Ok();
  }
  Status MoveTable(const NodeId& node, const MoveTableRequest& request) override {
    moves.push_back({node, request});
    return move_result;
  }

  std::vector<SentAdd> adds;
  std::vector<SentRemove> removes;
  std::vector<std::pair<NodeId, MoveTableRequest>> moves;
  Status move_result;  // What MoveTable answers.
  bool fail_adds = false;

 private:
  meta::MetaClient* const meta_;
};

class FakeNodes final : public NodeMembership {
 public:
  std::vector<NodeId> AliveNodes() const override { return alive; }
  std::vector<NodeId> alive{NodeId("node-a")};
};

class FakeTso final : public TsoSource {
 public:
  Result<Ts> GetTs() override { return Ts(now++); }
  uint64_t now = 1000000;
};

// PD's service safepoint semantics, in memory; fails on command.
class FakeGc final : public GcSafepointUpdater {
 public:
  Result<Ts> UpdateServiceGcSafepoint(const std::string& service_id, int64_t ttl_seconds,
                                      Ts safepoint) override {
    ++calls;
    if (fail) return Unavailable("pd is down");
    last_service = service_id;
    last_ttl = ttl_seconds;
    if (safepoint < gc_safepoint) return gc_safepoint;
    service_safepoint = safepoint;
    return safepoint;
  }
  Result<Ts> GetGcSafepoint() override {
    if (fail) return Unavailable("pd is down");
    return gc_safepoint;
  }

  Ts gc_safepoint{100};
  Ts service_safepoint;
  std::string last_service;
  int64_t last_ttl = 0;
  int calls = 0;
  bool fail = false;
};

class CoordinatorTest : public meta::MetaStoreTest {
 protected:
  void SetUp() override {
    MetaStoreTest::SetUp();
    meta_ = std::make_unique<meta::MetaClient>(store_.get(), meta::KeyLayout("default"));
    maintainers_ = std::make_unique<FakeMaintainers>(meta_.get());
    ASSERT_TRUE(OpenCoordinator().ok());
  }
  void TearDown() override {
    coord_.reset();
    maintainers_.reset();
    meta_.reset();
    MetaStoreTest::TearDown();
  }

  CoordinatorOptions Options() {
    CoordinatorOptions o;
    o.clock = &clock_;
    o.meta = meta_.get();
    o.maintainers = maintainers_.get();
    o.nodes = &nodes_;
    o.tso = &tso_;
    o.gc_updater = &gc_;
    o.gc.service_id = GcServiceId("default", 7);
    o.self_addr = "127.0.0.1:8300";
    o.backoff_initial = backoff_initial_;
    o.backoff_max = backoff_max_;
    o.error_bound = error_bound_;
    o.error_bound_of = error_bound_of_;
    return o;
  }

  Status OpenCoordinator() {
    coord_.reset();
    Result<std::unique_ptr<Coordinator>> c = Coordinator::Open(Options());
    if (!c.ok()) return c.status();
    coord_ = std::move(c).value();
    return Status::Ok();
  }

  static meta::ChangefeedId Id(const std::string& name) { return {"default", name}; }

  static meta::ChangefeedInfo NewInfo(const std::string& name, uint64_t start_ts = 1000) {
    meta::ChangefeedInfo info;
    info.id = Id(name);
    info.sink_uri = "blackhole://";
    info.start_ts = Ts(start_ts);
    return info;
  }

  MaintainerEpoch StoredEpoch(const std::string& name) {
    return meta_->GetChangefeedInfo(Id(name))->value.epoch;
  }
  meta::ChangefeedInfo StoredInfo(const std::string& name) {
    return meta_->GetChangefeedInfo(Id(name))->value;
  }
  Ts StoredCheckpoint(const std::string& name) {
    return meta_->GetChangefeedStatus(Id(name))->value.checkpoint_ts;
  }

  // A working status from the generation the coordinator placed last.
  MaintainerStatus Working(const std::string& name, uint64_t checkpoint) {
    Result<ChangefeedView> view = coord_->GetChangefeed(Id(name));
    EXPECT_TRUE(view.ok());
    MaintainerStatus s;
    s.id = Id(name);
    s.epoch = view->info.epoch;
    s.checkpoint_ts = Ts(checkpoint);
    s.bootstrap_done = true;
    return s;
  }
  NodeId NodeOf(const std::string& name) { return *coord_->GetChangefeed(Id(name))->node; }

  std::unique_ptr<meta::MetaClient> meta_;
  std::unique_ptr<FakeMaintainers> maintainers_;
  FakeNodes nodes_;
  FakeTso tso_;
  FakeGc gc_;
  Clock::Duration backoff_initial_ = std::chrono::seconds(10);
  Clock::Duration backoff_max_ = std::chrono::minutes(10);
  Clock::Duration error_bound_ = std::chrono::minutes(30);
  std::function<Clock::Duration(const meta::ChangefeedInfo&)> error_bound_of_;
  std::unique_ptr<Coordinator> coord_;
};

}  // namespace sluice::coordinator
