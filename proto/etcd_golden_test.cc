// Golden cases of the etcd v3 API: mvccpb and etcdserverpb (see
// golden_test.cc).

#include <cstdint>
#include <string>
#include <vector>

#include "etcd/kv.pb.h"
#include "etcd/rpc.pb.h"
#include "golden_util.h"

namespace sluice::golden {
namespace {

etcdserverpb::ResponseHeader MakeEtcdHeader() {
  etcdserverpb::ResponseHeader h;
  h.set_cluster_id(14841639068965178418ULL);
  h.set_member_id(10276657743932975437ULL);
  h.set_revision(42);
  h.set_raft_term(3);
  return h;
}
std::string EtcdHeaderBytes() {
  return Cat({V(1, 14841639068965178418ULL), V(2, 10276657743932975437ULL), V(3, 42), V(4, 3)});
}

mvccpb::KeyValue MakeKv(const std::string& key, int64_t revision) {
  mvccpb::KeyValue kv;
  kv.set_key(key);
  kv.set_create_revision(revision);
  kv.set_mod_revision(revision);
  kv.set_version(1);
  kv.set_value("{\"id\":1}");
  return kv;
}
std::string KvBytes(const std::string& key, int64_t revision) {
  return Cat(
      {L(1, key), V(2, Signed(revision)), V(3, Signed(revision)), V(4, 1), L(5, "{\"id\":1}")});
}

void AddMvccpb(std::vector<Golden>& g) {
  {
    mvccpb::KeyValue m = MakeKv("/tidb/cdc/default/changefeed/info/cf1", 40);
    m.set_lease(7587862543829475123);
    g.push_back(
        {"mvccpb_KeyValue", Own(m),
         Cat({KvBytes("/tidb/cdc/default/changefeed/info/cf1", 40), V(6, 7587862543829475123)})});
  }
  {
    mvccpb::Event m;
    m.set_type(mvccpb::Event::DELETE);
    *m.mutable_kv() = MakeKv("/k", 41);
    *m.mutable_prev_kv() = MakeKv("/k", 40);
    g.push_back(
        {"mvccpb_Event", Own(m), Cat({V(1, 1), L(2, KvBytes("/k", 41)), L(3, KvBytes("/k", 40))})});
  }
}

void AddEtcdKv(std::vector<Golden>& g) {
  g.push_back({"etcdserverpb_ResponseHeader", Own(MakeEtcdHeader()), EtcdHeaderBytes()});
  const std::string range_bytes =
      Cat({L(1, "/tidb/cdc/"), L(2, "/tidb/cdc0"), V(3, 100), V(4, 40), V(5, 2), V(6, 3), V(7, 1),
           V(8, 1), V(9, 1), V(10, 10), V(11, 11), V(12, 12), V(13, 13)});
  etcdserverpb::RangeRequest range;
  range.set_key("/tidb/cdc/");
  range.set_range_end("/tidb/cdc0");
  range.set_limit(100);
  range.set_revision(40);
  range.set_sort_order(etcdserverpb::RangeRequest::DESCEND);
  range.set_sort_target(etcdserverpb::RangeRequest::MOD);
  range.set_serializable(true);
  range.set_keys_only(true);
  range.set_count_only(true);
  range.set_min_mod_revision(10);
  range.set_max_mod_revision(11);
  range.set_min_create_revision(12);
  range.set_max_create_revision(13);
  g.push_back({"etcdserverpb_RangeRequest", Own(range), range_bytes});
  const std::string range_resp_bytes = Cat(
      {L(1, EtcdHeaderBytes()), L(2, KvBytes("/a", 5)), L(2, KvBytes("/b", 6)), V(3, 1), V(4, 2)});
  etcdserverpb::RangeResponse range_resp;
  *range_resp.mutable_header() = MakeEtcdHeader();
  *range_resp.add_kvs() = MakeKv("/a", 5);
  *range_resp.add_kvs() = MakeKv("/b", 6);
  range_resp.set_more(true);
  range_resp.set_count(2);
  g.push_back({"etcdserverpb_RangeResponse", Own(range_resp), range_resp_bytes});
  const std::string put_bytes = Cat(
      {L(1, "/owner"), L(2, "capture-1"), V(3, 7587862543829475123), V(4, 1), V(5, 1), V(6, 1)});
  etcdserverpb::PutRequest put;
  put.set_key("/owner");
  put.set_value("capture-1");
  put.set_lease(7587862543829475123);
  put.set_prev_kv(true);
  put.set_ignore_value(true);
  put.set_ignore_lease(true);
  g.push_back({"etcdserverpb_PutRequest", Own(put), put_bytes});
  const std::string put_resp_bytes = Cat({L(1, EtcdHeaderBytes()), L(2, KvBytes("/owner", 30))});
  etcdserverpb::PutResponse put_resp;
  *put_resp.mutable_header() = MakeEtcdHeader();
  *put_resp.mutable_prev_kv() = MakeKv("/owner", 30);
  g.push_back({"etcdserverpb_PutResponse", Own(put_resp), put_resp_bytes});
  const std::string del_bytes = Cat({L(1, "/a"), L(2, "/b"), V(3, 1)});
  etcdserverpb::DeleteRangeRequest del;
  del.set_key("/a");
  del.set_range_end("/b");
  del.set_prev_kv(true);
  g.push_back({"etcdserverpb_DeleteRangeRequest", Own(del), del_bytes});
  const std::string del_resp_bytes =
      Cat({L(1, EtcdHeaderBytes()), V(2, 1), L(3, KvBytes("/a", 5))});
  etcdserverpb::DeleteRangeResponse del_resp;
  *del_resp.mutable_header() = MakeEtcdHeader();
  del_resp.set_deleted(1);
  *del_resp.add_prev_kvs() = MakeKv("/a", 5);
  g.push_back({"etcdserverpb_DeleteRangeResponse", Own(del_resp), del_resp_bytes});

  // RequestOp and ResponseOp: one case per oneof member.
  {
    etcdserverpb::RequestOp m;
    *m.mutable_request_range() = range;
    g.push_back({"etcdserverpb_RequestOp_range", Own(m), L(1, range_bytes)});
    *m.mutable_request_put() = put;
    g.push_back({"etcdserverpb_RequestOp_put", Own(m), L(2, put_bytes)});
    *m.mutable_request_delete_range() = del;
    g.push_back({"etcdserverpb_RequestOp_delete_range", Own(m), L(3, del_bytes)});
    m.mutable_request_txn()->add_success()->mutable_request_put()->set_key("/x");
    g.push_back({"etcdserverpb_RequestOp_txn", Own(m), L(4, L(2, L(2, L(1, "/x"))))});
  }
  {
    etcdserverpb::ResponseOp m;
    *m.mutable_response_range() = range_resp;
    g.push_back({"etcdserverpb_ResponseOp_range", Own(m), L(1, range_resp_bytes)});
    *m.mutable_response_put() = put_resp;
    g.push_back({"etcdserverpb_ResponseOp_put", Own(m), L(2, put_resp_bytes)});
    *m.mutable_response_delete_range() = del_resp;
    g.push_back({"etcdserverpb_ResponseOp_delete_range", Own(m), L(3, del_resp_bytes)});
    m.mutable_response_txn()->set_succeeded(true);
    g.push_back({"etcdserverpb_ResponseOp_txn", Own(m), L(4, V(2, 1))});
  }
}

void AddEtcdTxn(std::vector<Golden>& g) {
  // Compare: one case per target_union member; range_end is field 64.
  etcdserverpb::Compare base;
  base.set_result(etcdserverpb::Compare::NOT_EQUAL);
  base.set_target(etcdserverpb::Compare::LEASE);
  base.set_key("/owner");
  const std::string base_bytes = Cat({V(1, 3), V(2, 4), L(3, "/owner")});
  {
    etcdserverpb::Compare m = base;
    m.set_version(-2);
    g.push_back({"etcdserverpb_Compare_version", Own(m), Cat({base_bytes, V(4, Signed(-2))})});
  }
  {
    etcdserverpb::Compare m = base;
    m.set_create_revision(5);
    g.push_back({"etcdserverpb_Compare_create_revision", Own(m), Cat({base_bytes, V(5, 5)})});
  }
  {
    etcdserverpb::Compare m = base;
    m.set_mod_revision(6);
    m.set_range_end("/owner0");
    g.push_back({"etcdserverpb_Compare_mod_revision", Own(m),
                 Cat({base_bytes, V(6, 6), L(64, "/owner0")})});
  }
  {
    etcdserverpb::Compare m = base;
    m.set_value("capture-1");
    g.push_back({"etcdserverpb_Compare_value", Own(m), Cat({base_bytes, L(7, "capture-1")})});
  }
  {
    etcdserverpb::Compare m = base;
    m.set_lease(8);
    g.push_back({"etcdserverpb_Compare_lease", Own(m), Cat({base_bytes, V(8, 8)})});
  }
  {
    etcdserverpb::TxnRequest m;
    auto* cmp = m.add_compare();
    cmp->set_target(etcdserverpb::Compare::MOD);
    cmp->set_key("/owner");
    cmp->set_mod_revision(0);  // explicit zero in a oneof is still sent
    auto* put = m.add_success()->mutable_request_put();
    put->set_key("/owner");
    put->set_value("capture-1");
    m.add_success()->mutable_request_range()->set_key("/owner");
    m.add_failure()->mutable_request_range()->set_key("/owner");
    g.push_back({"etcdserverpb_TxnRequest", Own(m),
                 Cat({L(1, Cat({V(2, 2), L(3, "/owner"), V(6, 0)})),
                      L(2, L(2, Cat({L(1, "/owner"), L(2, "capture-1")}))),
                      L(2, L(1, L(1, "/owner"))), L(3, L(1, L(1, "/owner")))})});
  }
  {
    etcdserverpb::TxnResponse m;
    *m.mutable_header() = MakeEtcdHeader();
    m.set_succeeded(true);
    *m.add_responses()->mutable_response_put()->mutable_header() = MakeEtcdHeader();
    m.add_responses()->mutable_response_range()->set_count(1);
    g.push_back({"etcdserverpb_TxnResponse", Own(m),
                 Cat({L(1, EtcdHeaderBytes()), V(2, 1), L(3, L(2, L(1, EtcdHeaderBytes()))),
                      L(3, L(1, V(4, 1)))})});
  }
  {
    etcdserverpb::CompactionRequest m;
    m.set_revision(1000);
    m.set_physical(true);
    g.push_back({"etcdserverpb_CompactionRequest", Own(m), Cat({V(1, 1000), V(2, 1)})});
  }
  {
    etcdserverpb::CompactionResponse m;
    *m.mutable_header() = MakeEtcdHeader();
    g.push_back({"etcdserverpb_CompactionResponse", Own(m), L(1, EtcdHeaderBytes())});
  }
}

void AddEtcdWatch(std::vector<Golden>& g) {
  // `filters` is a packed repeated enum.
  const std::string create_bytes =
      Cat({L(1, "/tidb/cdc/"), L(2, "/tidb/cdc0"), V(3, 41), V(4, 1),
           L(5, Cat({Varint(0), Varint(1)})), V(6, 1), V(7, 3), V(8, 1)});
  etcdserverpb::WatchCreateRequest create;
  create.set_key("/tidb/cdc/");
  create.set_range_end("/tidb/cdc0");
  create.set_start_revision(41);
  create.set_progress_notify(true);
  create.add_filters(etcdserverpb::WatchCreateRequest::NOPUT);
  create.add_filters(etcdserverpb::WatchCreateRequest::NODELETE);
  create.set_prev_kv(true);
  create.set_watch_id(3);
  create.set_fragment(true);
  g.push_back({"etcdserverpb_WatchCreateRequest", Own(create), create_bytes});
  etcdserverpb::WatchCancelRequest cancel;
  cancel.set_watch_id(3);
  g.push_back({"etcdserverpb_WatchCancelRequest", Own(cancel), V(1, 3)});
  g.push_back(Opaque<etcdserverpb::WatchProgressRequest>("etcdserverpb_WatchProgressRequest"));
  {
    etcdserverpb::WatchRequest m;
    *m.mutable_create_request() = create;
    g.push_back({"etcdserverpb_WatchRequest_create", Own(m), L(1, create_bytes)});
    *m.mutable_cancel_request() = cancel;
    g.push_back({"etcdserverpb_WatchRequest_cancel", Own(m), L(2, V(1, 3))});
    m.mutable_progress_request();
    g.push_back({"etcdserverpb_WatchRequest_progress", Own(m), L(3, "")});
  }
  {
    // Field numbers 8 to 10 are unused: events is 11.
    etcdserverpb::WatchResponse m;
    *m.mutable_header() = MakeEtcdHeader();
    m.set_watch_id(3);
    m.set_created(true);
    m.set_canceled(true);
    m.set_compact_revision(39);
    m.set_cancel_reason("mvcc: required revision has been compacted");
    m.set_fragment(true);
    auto* put = m.add_events();
    *put->mutable_kv() = MakeKv("/k", 41);
    auto* del = m.add_events();
    del->set_type(mvccpb::Event::DELETE);
    *del->mutable_kv() = MakeKv("/k", 42);
    g.push_back(
        {"etcdserverpb_WatchResponse", Own(m),
         Cat({L(1, EtcdHeaderBytes()), V(2, 3), V(3, 1), V(4, 1), V(5, 39),
              L(6, "mvcc: required revision has been compacted"), V(7, 1),
              L(11, L(2, KvBytes("/k", 41))), L(11, Cat({V(1, 1), L(2, KvBytes("/k", 42))}))})});
  }
}

void AddEtcdLease(std::vector<Golden>& g) {
  constexpr int64_t kLease = 7587862543829475123;
  {
    etcdserverpb::LeaseGrantRequest m;
    m.set_ttl(10);
    m.set_id(kLease);
    g.push_back({"etcdserverpb_LeaseGrantRequest", Own(m), Cat({V(1, 10), V(2, kLease)})});
  }
  {
    etcdserverpb::LeaseGrantResponse m;
    *m.mutable_header() = MakeEtcdHeader();
    m.set_id(kLease);
    m.set_ttl(10);
    m.set_error("lease already exists");
    g.push_back(
        {"etcdserverpb_LeaseGrantResponse", Own(m),
         Cat({L(1, EtcdHeaderBytes()), V(2, kLease), V(3, 10), L(4, "lease already exists")})});
  }
  {
    etcdserverpb::LeaseRevokeRequest m;
    m.set_id(kLease);
    g.push_back({"etcdserverpb_LeaseRevokeRequest", Own(m), V(1, kLease)});
  }
  {
    etcdserverpb::LeaseRevokeResponse m;
    *m.mutable_header() = MakeEtcdHeader();
    g.push_back({"etcdserverpb_LeaseRevokeResponse", Own(m), L(1, EtcdHeaderBytes())});
  }
  {
    etcdserverpb::LeaseKeepAliveRequest m;
    m.set_id(kLease);
    g.push_back({"etcdserverpb_LeaseKeepAliveRequest", Own(m), V(1, kLease)});
  }
  {
    etcdserverpb::LeaseKeepAliveResponse m;
    *m.mutable_header() = MakeEtcdHeader();
    m.set_id(kLease);
    m.set_ttl(-1);  // expired
    g.push_back({"etcdserverpb_LeaseKeepAliveResponse", Own(m),
                 Cat({L(1, EtcdHeaderBytes()), V(2, kLease), V(3, Signed(-1))})});
  }
  {
    etcdserverpb::LeaseTimeToLiveRequest m;
    m.set_id(kLease);
    m.set_keys(true);
    g.push_back({"etcdserverpb_LeaseTimeToLiveRequest", Own(m), Cat({V(1, kLease), V(2, 1)})});
  }
  {
    etcdserverpb::LeaseTimeToLiveResponse m;
    *m.mutable_header() = MakeEtcdHeader();
    m.set_id(kLease);
    m.set_ttl(7);
    m.set_grantedttl(10);
    m.add_keys("/owner");
    m.add_keys("/capture");
    g.push_back({"etcdserverpb_LeaseTimeToLiveResponse", Own(m),
                 Cat({L(1, EtcdHeaderBytes()), V(2, kLease), V(3, 7), V(4, 10), L(5, "/owner"),
                      L(5, "/capture")})});
  }
}

SLUICE_GOLDEN_CASES(mvccpb, AddMvccpb);
SLUICE_GOLDEN_CASES(etcd_kv, AddEtcdKv);
SLUICE_GOLDEN_CASES(etcd_txn, AddEtcdTxn);
SLUICE_GOLDEN_CASES(etcd_watch, AddEtcdWatch);
SLUICE_GOLDEN_CASES(etcd_lease, AddEtcdLease);

}  // namespace
}  // namespace sluice::golden
