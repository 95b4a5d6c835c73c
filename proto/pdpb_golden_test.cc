// Golden cases of pdpb (see golden_test.cc).

#include <cstdint>
#include <string>
#include <vector>

#include "golden_samples.h"
#include "golden_util.h"
#include "metapb.pb.h"
#include "pdpb.pb.h"

namespace sluice::golden {
namespace {

metapb::Store MakeStore(uint64_t id) {
  metapb::Store s;
  s.set_id(id);
  s.set_address("tikv-" + std::to_string(id) + ":20160");
  return s;
}
std::string StoreBytes(uint64_t id) {
  return Cat({V(1, id), L(2, "tikv-" + std::to_string(id) + ":20160")});
}

pdpb::RequestHeader MakeReqHeader() {
  pdpb::RequestHeader h;
  h.set_cluster_id(kClusterId);
  h.set_caller_id("cdc");
  return h;
}
std::string ReqHeaderBytes() { return Cat({V(1, kClusterId), L(3, "cdc")}); }

pdpb::ResponseHeader MakeRespHeader() {
  pdpb::ResponseHeader h;
  h.set_cluster_id(kClusterId);
  return h;
}
std::string RespHeaderBytes() { return V(1, kClusterId); }

pdpb::Member MakeMember(uint64_t id) {
  pdpb::Member m;
  m.set_name("pd-" + std::to_string(id));
  m.set_member_id(id);
  m.add_client_urls("http://pd-" + std::to_string(id) + ":2379");
  return m;
}
std::string MemberBytes(uint64_t id) {
  return Cat({L(1, "pd-" + std::to_string(id)), V(2, id),
              L(4, "http://pd-" + std::to_string(id) + ":2379")});
}

pdpb::PeerStats MakePeerStats() {
  pdpb::PeerStats s;
  *s.mutable_peer() = MakePeer(12, 2);
  s.set_down_seconds(600);
  return s;
}
std::string PeerStatsBytes() { return Cat({L(1, PeerBytes(12, 2)), V(2, 600)}); }

pdpb::Region MakePdRegion(uint64_t id) {
  pdpb::Region r;
  *r.mutable_region() = MakeRegion(id);
  *r.mutable_leader() = MakePeer(id * 10 + 1, 1);
  return r;
}
std::string PdRegionBytes(uint64_t id) {
  return Cat({L(1, RegionBytes(id)), L(2, PeerBytes(id * 10 + 1, 1))});
}

void AddPdpbCommon(std::vector<Golden>& g) {
  {
    pdpb::RequestHeader m = MakeReqHeader();
    m.set_sender_id(99);
    m.set_caller_component("puller");
    g.push_back({"pdpb_RequestHeader", Own(m),
                 Cat({V(1, kClusterId), V(2, 99), L(3, "cdc"), L(4, "puller")})});
  }
  const std::string error_bytes = Cat({V(1, 6), L(2, "region not found")});
  pdpb::Error error;
  error.set_type(pdpb::REGION_NOT_FOUND);
  error.set_message("region not found");
  g.push_back({"pdpb_Error", Own(error), error_bytes});
  {
    pdpb::ResponseHeader m = MakeRespHeader();
    *m.mutable_error() = error;
    g.push_back({"pdpb_ResponseHeader", Own(m), Cat({RespHeaderBytes(), L(2, error_bytes)})});
  }
  const std::string ts_bytes = Cat({V(1, 1700000000000), V(2, 5), V(3, 2)});
  pdpb::Timestamp ts;
  ts.set_physical(1700000000000);
  ts.set_logical(5);
  ts.set_suffix_bits(2);
  g.push_back({"pdpb_Timestamp", Own(ts), ts_bytes});
  {
    pdpb::Member m;
    m.set_name("pd-1");
    m.set_member_id(9876543210987654321ULL);
    m.add_peer_urls("http://pd-1:2380");
    m.add_peer_urls("http://10.0.0.1:2380");
    m.add_client_urls("http://pd-1:2379");
    m.add_client_urls("http://10.0.0.1:2379");
    m.set_leader_priority(-1);  // int32: sign-extended to ten bytes
    m.set_deploy_path("/deploy/pd");
    m.set_binary_version("8.5.0");
    m.set_git_hash("fedcba98");
    m.set_dc_location("global");
    g.push_back({"pdpb_Member", Own(m),
                 Cat({L(1, "pd-1"), V(2, 9876543210987654321ULL), L(3, "http://pd-1:2380"),
                      L(3, "http://10.0.0.1:2380"), L(4, "http://pd-1:2379"),
                      L(4, "http://10.0.0.1:2379"), V(5, Signed(-1)), L(6, "/deploy/pd"),
                      L(7, "8.5.0"), L(8, "fedcba98"), L(9, "global")})});
  }
  {
    pdpb::GetMembersRequest m;
    m.mutable_header()->set_cluster_id(0);  // learning the cluster id: empty header
    g.push_back({"pdpb_GetMembersRequest", Own(m), L(1, "")});
  }
  {
    pdpb::GetMembersResponse m;
    *m.mutable_header() = MakeRespHeader();
    *m.add_members() = MakeMember(1);
    *m.add_members() = MakeMember(2);
    *m.mutable_leader() = MakeMember(1);
    *m.mutable_etcd_leader() = MakeMember(2);
    auto* global = m.add_tso_allocator_leaders();
    global->set_key("global");
    *global->mutable_value() = MakeMember(1);
    auto* dc = m.add_tso_allocator_leaders();
    dc->set_key("dc-1");
    *dc->mutable_value() = MakeMember(2);
    g.push_back({"pdpb_GetMembersResponse", Own(m),
                 Cat({L(1, RespHeaderBytes()), L(2, MemberBytes(1)), L(2, MemberBytes(2)),
                      L(3, MemberBytes(1)), L(4, MemberBytes(2)),
                      // Upstream's map<string, Member>: each entry is a
                      // message {1: key, 2: value}.
                      L(5, Cat({L(1, "global"), L(2, MemberBytes(1))})),
                      L(5, Cat({L(1, "dc-1"), L(2, MemberBytes(2))}))})});
  }
  {
    pdpb::GetMembersResponse::TsoAllocatorLeadersEntry m;
    m.set_key("global");
    *m.mutable_value() = MakeMember(1);
    g.push_back({"pdpb_GetMembersResponse_TsoAllocatorLeadersEntry", Own(m),
                 Cat({L(1, "global"), L(2, MemberBytes(1))})});
  }
  {
    pdpb::TsoRequest m;
    *m.mutable_header() = MakeReqHeader();
    m.set_count(10);
    m.set_dc_location("global");
    g.push_back(
        {"pdpb_TsoRequest", Own(m), Cat({L(1, ReqHeaderBytes()), V(2, 10), L(3, "global")})});
  }
  {
    pdpb::TsoResponse m;
    *m.mutable_header() = MakeRespHeader();
    m.set_count(10);
    *m.mutable_timestamp() = ts;
    g.push_back(
        {"pdpb_TsoResponse", Own(m), Cat({L(1, RespHeaderBytes()), V(2, 10), L(3, ts_bytes)})});
  }
}

void AddPdpbRegions(std::vector<Golden>& g) {
  g.push_back({"pdpb_PeerStats", Own(MakePeerStats()), PeerStatsBytes()});
  {
    pdpb::Region m = MakePdRegion(1001);
    *m.add_down_peers() = MakePeerStats();
    *m.add_pending_peers() = MakePeer(13, 3);
    m.mutable_buckets();
    g.push_back(
        {"pdpb_Region", Own(m),
         Cat({PdRegionBytes(1001), L(3, PeerStatsBytes()), L(4, PeerBytes(13, 3)), L(5, "")})});
  }
  {
    pdpb::GetRegionRequest m;
    *m.mutable_header() = MakeReqHeader();
    m.set_region_key(kComparableKey);
    m.set_need_buckets(true);
    g.push_back({"pdpb_GetRegionRequest", Own(m),
                 Cat({L(1, ReqHeaderBytes()), L(2, kComparableKey), V(3, 1)})});
  }
  {
    pdpb::GetRegionByIDRequest m;
    *m.mutable_header() = MakeReqHeader();
    m.set_region_id(1001);
    m.set_need_buckets(true);
    g.push_back(
        {"pdpb_GetRegionByIDRequest", Own(m), Cat({L(1, ReqHeaderBytes()), V(2, 1001), V(3, 1)})});
  }
  {
    // Field 4 is reserved: down_peers is 5.
    pdpb::GetRegionResponse m;
    *m.mutable_header() = MakeRespHeader();
    *m.mutable_region() = MakeRegion(1001);
    *m.mutable_leader() = MakePeer(10011, 1);
    *m.add_down_peers() = MakePeerStats();
    *m.add_pending_peers() = MakePeer(13, 3);
    m.mutable_buckets();
    g.push_back({"pdpb_GetRegionResponse", Own(m),
                 Cat({L(1, RespHeaderBytes()), L(2, RegionBytes(1001)), L(3, PeerBytes(10011, 1)),
                      L(5, PeerStatsBytes()), L(6, PeerBytes(13, 3)), L(7, "")})});
  }
  {
    pdpb::ScanRegionsRequest m;
    *m.mutable_header() = MakeReqHeader();
    m.set_start_key(kComparableKey);
    m.set_limit(-1);
    m.set_end_key("u");
    g.push_back({"pdpb_ScanRegionsRequest", Own(m),
                 Cat({L(1, ReqHeaderBytes()), L(2, kComparableKey), V(3, Signed(-1)), L(4, "u")})});
  }
  {
    pdpb::ScanRegionsResponse m;
    *m.mutable_header() = MakeRespHeader();
    *m.add_region_metas() = MakeRegion(1001);
    *m.add_leaders() = MakePeer(10011, 1);
    *m.add_regions() = MakePdRegion(1001);
    g.push_back({"pdpb_ScanRegionsResponse", Own(m),
                 Cat({L(1, RespHeaderBytes()), L(2, RegionBytes(1001)), L(3, PeerBytes(10011, 1)),
                      L(4, PdRegionBytes(1001))})});
  }
  {
    pdpb::KeyRange m;
    m.set_start_key("a");
    m.set_end_key("b");
    g.push_back({"pdpb_KeyRange", Own(m), Cat({L(1, "a"), L(2, "b")})});
  }
  {
    pdpb::BatchScanRegionsRequest m;
    *m.mutable_header() = MakeReqHeader();
    m.set_need_buckets(true);
    auto* r1 = m.add_ranges();
    r1->set_start_key("a");
    r1->set_end_key("b");
    m.add_ranges()->set_start_key("c");
    m.set_limit(1000);
    m.set_contain_all_key_range(true);
    g.push_back({"pdpb_BatchScanRegionsRequest", Own(m),
                 Cat({L(1, ReqHeaderBytes()), V(2, 1), L(3, Cat({L(1, "a"), L(2, "b")})),
                      L(3, L(1, "c")), V(4, 1000), V(5, 1)})});
  }
  {
    pdpb::BatchScanRegionsResponse m;
    *m.mutable_header() = MakeRespHeader();
    *m.add_regions() = MakePdRegion(1001);
    *m.add_regions() = MakePdRegion(1002);
    g.push_back(
        {"pdpb_BatchScanRegionsResponse", Own(m),
         Cat({L(1, RespHeaderBytes()), L(2, PdRegionBytes(1001)), L(2, PdRegionBytes(1002))})});
  }
}

void AddPdpbStoresAndGc(std::vector<Golden>& g) {
  {
    pdpb::GetStoreRequest m;
    *m.mutable_header() = MakeReqHeader();
    m.set_store_id(4);
    g.push_back({"pdpb_GetStoreRequest", Own(m), Cat({L(1, ReqHeaderBytes()), V(2, 4)})});
  }
  g.push_back(Opaque<pdpb::StoreStats>("pdpb_StoreStats"));
  {
    pdpb::GetStoreResponse m;
    *m.mutable_header() = MakeRespHeader();
    *m.mutable_store() = MakeStore(4);
    m.mutable_stats();
    g.push_back({"pdpb_GetStoreResponse", Own(m),
                 Cat({L(1, RespHeaderBytes()), L(2, StoreBytes(4)), L(3, "")})});
  }
  {
    pdpb::GetAllStoresRequest m;
    *m.mutable_header() = MakeReqHeader();
    m.set_exclude_tombstone_stores(true);
    g.push_back({"pdpb_GetAllStoresRequest", Own(m), Cat({L(1, ReqHeaderBytes()), V(2, 1)})});
  }
  {
    pdpb::GetAllStoresResponse m;
    *m.mutable_header() = MakeRespHeader();
    *m.add_stores() = MakeStore(1);
    *m.add_stores() = MakeStore(2);
    g.push_back({"pdpb_GetAllStoresResponse", Own(m),
                 Cat({L(1, RespHeaderBytes()), L(2, StoreBytes(1)), L(2, StoreBytes(2))})});
  }
  {
    // service_id is bytes; MaxUint64 removes the safe point.
    pdpb::UpdateServiceGCSafePointRequest m;
    *m.mutable_header() = MakeReqHeader();
    m.set_service_id("ticdc-default-\xFF"s);
    m.set_ttl(86400);
    m.set_safe_point(kMaxU64);
    g.push_back(
        {"pdpb_UpdateServiceGCSafePointRequest", Own(m),
         Cat({L(1, ReqHeaderBytes()), L(2, "ticdc-default-\xFF"s), V(3, 86400), V(4, kMaxU64)})});
  }
  {
    pdpb::UpdateServiceGCSafePointResponse m;
    *m.mutable_header() = MakeRespHeader();
    m.set_service_id("ticdc");
    m.set_ttl(86400);
    m.set_min_safe_point(kTso);
    g.push_back({"pdpb_UpdateServiceGCSafePointResponse", Own(m),
                 Cat({L(1, RespHeaderBytes()), L(2, "ticdc"), V(3, 86400), V(4, kTso)})});
  }
  {
    pdpb::GetGCSafePointRequest m;
    *m.mutable_header() = MakeReqHeader();
    g.push_back({"pdpb_GetGCSafePointRequest", Own(m), L(1, ReqHeaderBytes())});
  }
  {
    pdpb::GetGCSafePointResponse m;
    *m.mutable_header() = MakeRespHeader();
    m.set_safe_point(kTso);
    g.push_back(
        {"pdpb_GetGCSafePointResponse", Own(m), Cat({L(1, RespHeaderBytes()), V(2, kTso)})});
  }
}

SLUICE_GOLDEN_CASES(pdpb_common, AddPdpbCommon);
SLUICE_GOLDEN_CASES(pdpb_regions, AddPdpbRegions);
SLUICE_GOLDEN_CASES(pdpb_stores_and_gc, AddPdpbStoresAndGc);

}  // namespace
}  // namespace sluice::golden
