// Golden wire tests for the protocol definitions in proto/.
//
// Every message is built through the generated C++ API and its serialized
// bytes are compared with bytes written by hand from the field numbers and
// wire types of the protocol facts. The hand encoder below does not use
// protobuf, so a wrong field number, type or packing in a .proto file shows up
// as a byte difference.

#include <gmock/gmock.h>
#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>
#include <google/protobuf/stubs/logging.h>
#include <google/protobuf/util/message_differencer.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/support/client_interceptor.h>
#include <grpcpp/support/server_interceptor.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <limits>
#include <memory>
#include <mutex>
#include <ostream>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "cdcpb.grpc.pb.h"
#include "cdcpb.pb.h"
#include "errorpb.pb.h"
#include "etcd/kv.pb.h"
#include "etcd/rpc.grpc.pb.h"
#include "etcd/rpc.pb.h"
#include "kvrpcpb.pb.h"
#include "metapb.pb.h"
#include "pdpb.grpc.pb.h"
#include "pdpb.pb.h"
#include "raft_cmdpb.pb.h"

namespace sluice {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::DescriptorPool;
using google::protobuf::Message;
using google::protobuf::util::MessageDifferencer;
using std::string_literals::operator""s;

// ---------------------------------------------------------------------------
// Hand encoder for the protobuf wire format, independent of libprotobuf.

enum WireType : int { kVarint = 0, kLen = 2 };

// LEB128 unsigned varint.
std::string Varint(uint64_t v) {
  std::string out;
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
  return out;
}

// One field: tag (number << 3 | wire type), then the payload. A
// length-delimited payload is prefixed with its length.
std::string Field(int number, WireType wire_type, std::string_view payload) {
  std::string out = Varint((static_cast<uint64_t>(number) << 3) | wire_type);
  if (wire_type == kLen) out += Varint(payload.size());
  out.append(payload);
  return out;
}

// Varint field (uint32/64, int32/64, bool, enum).
std::string V(int number, uint64_t value) { return Field(number, kVarint, Varint(value)); }

// Length-delimited field (bytes, string, message, packed repeated).
std::string L(int number, std::string_view payload) { return Field(number, kLen, payload); }

std::string Cat(std::initializer_list<std::string_view> parts) {
  std::string out;
  for (std::string_view p : parts) out.append(p);
  return out;
}

// Two's complement of a signed value, as int32/int64 fields put it on the wire.
uint64_t Signed(int64_t v) { return static_cast<uint64_t>(v); }

std::string Hex(std::string_view s) {
  static constexpr char kDigits[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (!out.empty()) out.push_back(' ');
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 15]);
  }
  return out;
}

TEST(HandEncoderTest, MatchesWireFormatSpecExamples) {
  EXPECT_EQ(Varint(0), "\x00"s);
  EXPECT_EQ(Varint(127), "\x7F");
  EXPECT_EQ(Varint(300), "\xAC\x02");
  EXPECT_EQ(Varint(std::numeric_limits<uint64_t>::max()),
            "\xFF\xFF\xFF\xFF\xFF\xFF\xFF\xFF\xFF\x01");
  // The examples of the protobuf encoding guide.
  EXPECT_EQ(V(1, 150), "\x08\x96\x01");
  EXPECT_EQ(L(2, "testing"), "\x12\x07testing");
  // Field 64 needs a two-byte tag.
  EXPECT_EQ(L(64, ""), "\x82\x04\x00"s);
}

// ---------------------------------------------------------------------------
// Shared sample values and their hand-encoded bytes.

constexpr uint64_t kClusterId = 6842931774112233445ULL;
// physical 1700000000000 ms, logical 5.
constexpr uint64_t kTso = 445644800000000005ULL;
constexpr uint64_t kMaxU64 = std::numeric_limits<uint64_t>::max();

// Comparable form of the row key of table 100, handle 1.
const std::string kComparableKey =
    "\x74\x80\x00\x00\x00\x00\x00\x00\xFF\x64\x5F\x72\x80\x00\x00\x00\x00\xFF\x00\x00\x01\x00\x00\x00\x00\x00\xFA"s;
// Raw row key of table 100, handle 1.
const std::string kRawKey =
    "\x74\x80\x00\x00\x00\x00\x00\x00\x64\x5F\x72\x80\x00\x00\x00\x00\x00\x00\x01"s;

// Fields that this project does not model: a varint, a nested message and a
// string. Messages declared without fields must keep them.
const std::string kForeign = Cat({V(1, 3), L(2, V(1, 1)), L(15, "opaque")});

metapb::Peer MakePeer(uint64_t id, uint64_t store_id) {
  metapb::Peer p;
  p.set_id(id);
  p.set_store_id(store_id);
  return p;
}
std::string PeerBytes(uint64_t id, uint64_t store_id) { return Cat({V(1, id), V(2, store_id)}); }

metapb::RegionEpoch MakeEpoch() {
  metapb::RegionEpoch e;
  e.set_conf_ver(5);
  e.set_version(300);
  return e;
}
std::string EpochBytes() { return Cat({V(1, 5), V(2, 300)}); }

metapb::Region MakeRegion(uint64_t id) {
  metapb::Region r;
  r.set_id(id);
  r.set_start_key(kComparableKey);
  *r.mutable_region_epoch() = MakeEpoch();
  *r.add_peers() = MakePeer(id * 10 + 1, 1);
  return r;
}
std::string RegionBytes(uint64_t id) {
  return Cat({V(1, id), L(2, kComparableKey), L(4, EpochBytes()), L(5, PeerBytes(id * 10 + 1, 1))});
}

metapb::Store MakeStore(uint64_t id) {
  metapb::Store s;
  s.set_id(id);
  s.set_address("tikv-" + std::to_string(id) + ":20160");
  return s;
}
std::string StoreBytes(uint64_t id) {
  return Cat({V(1, id), L(2, "tikv-" + std::to_string(id) + ":20160")});
}

cdcpb::Header MakeCdcHeader() {
  cdcpb::Header h;
  h.set_cluster_id(kClusterId);
  h.set_ticdc_version("v8.5.0");
  return h;
}
std::string CdcHeaderBytes() { return Cat({V(1, kClusterId), L(2, "v8.5.0")}); }

errorpb::EpochNotMatch MakeEpochNotMatch() {
  errorpb::EpochNotMatch e;
  *e.add_current_regions() = MakeRegion(1001);
  *e.add_current_regions() = MakeRegion(1002);
  return e;
}
std::string EpochNotMatchBytes() { return Cat({L(1, RegionBytes(1001)), L(1, RegionBytes(1002))}); }

cdcpb::TxnStatus MakeTxnStatus(uint64_t start_ts) {
  cdcpb::TxnStatus s;
  s.set_start_ts(start_ts);
  s.set_min_commit_ts(start_ts + 1);
  return s;
}
std::string TxnStatusBytes(uint64_t start_ts) { return Cat({V(1, start_ts), V(2, start_ts + 1)}); }

cdcpb::TxnInfo MakeTxnInfo(uint64_t start_ts) {
  cdcpb::TxnInfo t;
  t.set_start_ts(start_ts);
  t.set_primary(kRawKey);
  return t;
}
std::string TxnInfoBytes(uint64_t start_ts) { return Cat({V(1, start_ts), L(2, kRawKey)}); }

cdcpb::Event::Row MakePrewrite() {
  cdcpb::Event::Row r;
  r.set_start_ts(kTso);
  r.set_type(cdcpb::Event::PREWRITE);
  r.set_op_type(cdcpb::Event::Row::PUT);
  r.set_key(kRawKey);
  r.set_value("\x80\x00\x01\x00"s);
  return r;
}
std::string PrewriteBytes() {
  return Cat({V(1, kTso), V(3, 1), V(4, 1), L(5, kRawKey), L(6, "\x80\x00\x01\x00"s)});
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

// ---------------------------------------------------------------------------
// Golden cases.

struct Golden {
  std::string name;  // gtest parameter name
  std::shared_ptr<const Message> message;
  std::string expected;
};

void PrintTo(const Golden& g, std::ostream* os) { *os << g.name; }

template <typename T>
std::shared_ptr<const Message> Own(const T& m) {
  return std::make_shared<T>(m);
}

// A message without modelled fields, parsed from foreign bytes.
template <typename T>
Golden Opaque(std::string name) {
  auto m = std::make_shared<T>();
  if (!m->ParseFromString(kForeign)) m->Clear();  // a failed parse shows as a byte mismatch
  return {std::move(name), m, kForeign};
}

void AddMetapb(std::vector<Golden>& g) {
  {
    metapb::Cluster m;
    m.set_id(kClusterId);
    m.set_max_peer_count(3);
    g.push_back({"metapb_Cluster", Own(m), Cat({V(1, kClusterId), V(2, 3)})});
  }
  {
    metapb::StoreLabel m;
    m.set_key("zone");
    m.set_value("z1");
    g.push_back({"metapb_StoreLabel", Own(m), Cat({L(1, "zone"), L(2, "z1")})});
  }
  {
    metapb::Store m;
    m.set_id(4);
    m.set_address("10.0.0.4:20160");
    m.set_state(metapb::Offline);
    auto* zone = m.add_labels();
    zone->set_key("zone");
    zone->set_value("z1");
    auto* host = m.add_labels();
    host->set_key("host");
    host->set_value("h4");
    m.set_version("8.5.0");
    m.set_peer_address("10.0.0.4:20161");
    m.set_status_address("10.0.0.4:20180");
    m.set_git_hash("0123abcd");
    m.set_start_timestamp(1700000000);
    m.set_deploy_path("/deploy/tikv");
    m.set_last_heartbeat(1700000000123456789);
    m.set_physically_destroyed(true);
    m.set_node_state(metapb::Removing);
    g.push_back(
        {"metapb_Store", Own(m),
         Cat({V(1, 4), L(2, "10.0.0.4:20160"), V(3, 1), L(4, Cat({L(1, "zone"), L(2, "z1")})),
              L(4, Cat({L(1, "host"), L(2, "h4")})), L(5, "8.5.0"), L(6, "10.0.0.4:20161"),
              L(7, "10.0.0.4:20180"), L(8, "0123abcd"), V(9, 1700000000), L(10, "/deploy/tikv"),
              V(11, 1700000000123456789), V(12, 1), V(13, 2)})});
  }
  g.push_back({"metapb_RegionEpoch", Own(MakeEpoch()), EpochBytes()});
  g.push_back(Opaque<metapb::Buckets>("metapb_Buckets"));
  g.push_back(Opaque<metapb::EncryptionMeta>("metapb_EncryptionMeta"));
  {
    metapb::Region m;
    m.set_id(1001);
    m.set_start_key(kComparableKey);
    m.set_end_key("t\x80\x00\x00\x00\x00\x00\x00\xFF"s);
    *m.mutable_region_epoch() = MakeEpoch();
    *m.add_peers() = MakePeer(10011, 1);
    *m.add_peers() = MakePeer(10012, 2);
    m.mutable_encryption_meta();
    m.set_is_in_flashback(true);
    m.set_flashback_start_ts(kTso);
    g.push_back({"metapb_Region", Own(m),
                 Cat({V(1, 1001), L(2, kComparableKey), L(3, "t\x80\x00\x00\x00\x00\x00\x00\xFF"s),
                      L(4, EpochBytes()), L(5, PeerBytes(10011, 1)), L(5, PeerBytes(10012, 2)),
                      L(6, ""), V(7, 1), V(8, kTso)})});
  }
  {
    metapb::Peer m = MakePeer(10013, 3);
    m.set_role(metapb::DemotingVoter);
    m.set_is_witness(true);
    g.push_back({"metapb_Peer", Own(m), Cat({PeerBytes(10013, 3), V(3, 3), V(4, 1)})});
  }
}

void AddRaftCmdpb(std::vector<Golden>& g) {
  g.push_back(Opaque<raft_cmdpb::AdminRequest>("raft_cmdpb_AdminRequest"));
  g.push_back(Opaque<raft_cmdpb::AdminResponse>("raft_cmdpb_AdminResponse"));
}

void AddErrorpb(std::vector<Golden>& g) {
  {
    errorpb::NotLeader m;
    m.set_region_id(1001);
    *m.mutable_leader() = MakePeer(10012, 2);
    g.push_back({"errorpb_NotLeader", Own(m), Cat({V(1, 1001), L(2, PeerBytes(10012, 2))})});
  }
  {
    errorpb::RegionNotFound m;
    m.set_region_id(1001);
    g.push_back({"errorpb_RegionNotFound", Own(m), V(1, 1001)});
  }
  g.push_back({"errorpb_EpochNotMatch", Own(MakeEpochNotMatch()), EpochNotMatchBytes()});
  {
    errorpb::ServerIsBusy m;
    m.set_reason("scheduler is busy");
    m.set_backoff_ms(200);
    m.set_estimated_wait_ms(150);
    m.set_applied_index(77777);
    g.push_back({"errorpb_ServerIsBusy", Own(m),
                 Cat({L(1, "scheduler is busy"), V(2, 200), V(3, 150), V(4, 77777)})});
  }
  g.push_back(Opaque<errorpb::KeyNotInRegion>("errorpb_KeyNotInRegion"));
  g.push_back(Opaque<errorpb::StaleCommand>("errorpb_StaleCommand"));
  g.push_back(Opaque<errorpb::StoreNotMatch>("errorpb_StoreNotMatch"));
  g.push_back(Opaque<errorpb::RaftEntryTooLarge>("errorpb_RaftEntryTooLarge"));
  g.push_back(Opaque<errorpb::MaxTimestampNotSynced>("errorpb_MaxTimestampNotSynced"));
  g.push_back(Opaque<errorpb::ReadIndexNotReady>("errorpb_ReadIndexNotReady"));
  g.push_back(Opaque<errorpb::ProposalInMergingMode>("errorpb_ProposalInMergingMode"));
  g.push_back(Opaque<errorpb::DataIsNotReady>("errorpb_DataIsNotReady"));
  g.push_back(Opaque<errorpb::RegionNotInitialized>("errorpb_RegionNotInitialized"));
  g.push_back(Opaque<errorpb::DiskFull>("errorpb_DiskFull"));
  g.push_back(Opaque<errorpb::RecoveryInProgress>("errorpb_RecoveryInProgress"));
  g.push_back(Opaque<errorpb::FlashbackInProgress>("errorpb_FlashbackInProgress"));
  g.push_back(Opaque<errorpb::FlashbackNotPrepared>("errorpb_FlashbackNotPrepared"));
  g.push_back(Opaque<errorpb::IsWitness>("errorpb_IsWitness"));
  g.push_back(Opaque<errorpb::MismatchPeerId>("errorpb_MismatchPeerId"));
  g.push_back(Opaque<errorpb::BucketVersionNotMatch>("errorpb_BucketVersionNotMatch"));
  g.push_back(Opaque<errorpb::UndeterminedResult>("errorpb_UndeterminedResult"));
  {
    // Every member set; the unmodelled kinds are present but empty.
    errorpb::Error m;
    m.set_message("region error");
    m.mutable_not_leader()->set_region_id(1);
    m.mutable_region_not_found()->set_region_id(2);
    m.mutable_key_not_in_region();
    *m.mutable_epoch_not_match() = MakeEpochNotMatch();
    m.mutable_server_is_busy()->set_backoff_ms(20);
    m.mutable_stale_command();
    m.mutable_store_not_match();
    m.mutable_raft_entry_too_large();
    m.mutable_max_timestamp_not_synced();
    m.mutable_read_index_not_ready();
    m.mutable_proposal_in_merging_mode();
    m.mutable_data_is_not_ready();
    m.mutable_region_not_initialized();
    m.mutable_disk_full();
    m.mutable_recoveryinprogress();
    m.mutable_flashbackinprogress();
    m.mutable_flashbacknotprepared();
    m.mutable_is_witness();
    m.mutable_mismatch_peer_id();
    m.mutable_bucket_version_not_match();
    m.mutable_undetermined_result();
    std::string expected = Cat({L(1, "region error"), L(2, V(1, 1)), L(3, V(1, 2)), L(4, ""),
                                L(5, EpochNotMatchBytes()), L(6, V(2, 20))});
    for (int field = 7; field <= 22; ++field) expected += L(field, "");
    g.push_back({"errorpb_Error", Own(m), expected});
  }
}

void AddCdcpbErrors(std::vector<Golden>& g) {
  g.push_back({"cdcpb_Header", Own(MakeCdcHeader()), CdcHeaderBytes()});
  {
    cdcpb::DuplicateRequest m;
    m.set_region_id(1001);
    g.push_back({"cdcpb_DuplicateRequest", Own(m), V(1, 1001)});
  }
  {
    cdcpb::Compatibility m;
    m.set_required_version("v7.1.0");
    g.push_back({"cdcpb_Compatibility", Own(m), L(1, "v7.1.0")});
  }
  {
    cdcpb::ClusterIDMismatch m;
    m.set_current(kClusterId);
    m.set_request(7);
    g.push_back({"cdcpb_ClusterIDMismatch", Own(m), Cat({V(1, kClusterId), V(2, 7)})});
  }
  {
    cdcpb::Congested m;
    m.set_region_id(1001);
    g.push_back({"cdcpb_Congested", Own(m), V(1, 1001)});
  }
  {
    cdcpb::Error m;
    m.mutable_not_leader()->set_region_id(1);
    m.mutable_region_not_found()->set_region_id(2);
    *m.mutable_epoch_not_match() = MakeEpochNotMatch();
    m.mutable_duplicate_request()->set_region_id(4);
    m.mutable_compatibility()->set_required_version("v7.1.0");
    m.mutable_cluster_id_mismatch()->set_current(6);
    m.mutable_server_is_busy()->set_reason("busy");
    m.mutable_congested()->set_region_id(8);
    g.push_back({"cdcpb_Error", Own(m),
                 Cat({L(1, V(1, 1)), L(2, V(1, 2)), L(3, EpochNotMatchBytes()), L(4, V(1, 4)),
                      L(5, L(1, "v7.1.0")), L(6, V(1, 6)), L(7, L(1, "busy")), L(8, V(1, 8))})});
  }
}

void AddCdcpbEvents(std::vector<Golden>& g) {
  g.push_back({"cdcpb_TxnInfo", Own(MakeTxnInfo(kTso)), TxnInfoBytes(kTso)});
  {
    cdcpb::TxnStatus m = MakeTxnStatus(kTso);
    m.set_commit_ts(kTso + 10);
    m.set_is_rolled_back(true);
    g.push_back({"cdcpb_TxnStatus", Own(m), Cat({TxnStatusBytes(kTso), V(3, kTso + 10), V(4, 1)})});
  }
  {
    cdcpb::Event::Row m;
    m.set_start_ts(kTso);
    m.set_commit_ts(kTso + 10);
    m.set_type(cdcpb::Event::COMMIT);
    m.set_op_type(cdcpb::Event::Row::DELETE);
    m.set_key(kRawKey);
    m.set_value("new");
    m.set_old_value("old");
    m.set_expire_ts_unix_secs(1700003600);
    m.set_txn_source(1);
    m.set_generation(2);
    g.push_back({"cdcpb_Event_Row", Own(m),
                 Cat({V(1, kTso), V(2, kTso + 10), V(3, 2), V(4, 2), L(5, kRawKey), L(6, "new"),
                      L(7, "old"), V(8, 1700003600), V(9, 1), V(10, 2)})});
  }
  const std::string entries_bytes = Cat({L(1, PrewriteBytes()), L(1, Cat({V(3, 5)}))});
  cdcpb::Event::Entries entries;
  *entries.add_entries() = MakePrewrite();
  entries.add_entries()->set_type(cdcpb::Event::INITIALIZED);
  g.push_back({"cdcpb_Event_Entries", Own(entries), entries_bytes});
  {
    cdcpb::Event::Admin m;
    m.mutable_admin_request();
    m.mutable_admin_response();
    g.push_back({"cdcpb_Event_Admin", Own(m), Cat({L(1, ""), L(2, "")})});
  }
  {
    cdcpb::Event::LongTxn m;
    *m.add_txn_info() = MakeTxnInfo(kTso);
    *m.add_txn_info() = MakeTxnInfo(kTso + 1);
    g.push_back({"cdcpb_Event_LongTxn", Own(m),
                 Cat({L(1, TxnInfoBytes(kTso)), L(1, TxnInfoBytes(kTso + 1))})});
  }
  // Event: request_id (7) lies outside the oneof and is ordered by number.
  {
    cdcpb::Event m;
    m.set_region_id(1001);
    m.set_index(88);
    m.set_request_id(7);
    *m.mutable_entries() = entries;
    g.push_back(
        {"cdcpb_Event_entries", Own(m), Cat({V(1, 1001), V(2, 88), L(3, entries_bytes), V(7, 7)})});
  }
  {
    cdcpb::Event m;
    m.set_region_id(1001);
    m.set_request_id(7);
    m.mutable_admin()->mutable_admin_request();
    g.push_back({"cdcpb_Event_admin", Own(m), Cat({V(1, 1001), L(4, L(1, "")), V(7, 7)})});
  }
  {
    cdcpb::Event m;
    m.set_region_id(1001);
    m.set_request_id(7);
    *m.mutable_error()->mutable_epoch_not_match() = MakeEpochNotMatch();
    g.push_back({"cdcpb_Event_error", Own(m),
                 Cat({V(1, 1001), L(5, L(3, EpochNotMatchBytes())), V(7, 7)})});
  }
  {
    cdcpb::Event m;
    m.set_region_id(1001);
    m.set_request_id(7);
    m.set_resolved_ts(kTso);
    g.push_back({"cdcpb_Event_resolved_ts", Own(m), Cat({V(1, 1001), V(6, kTso), V(7, 7)})});
  }
  {
    cdcpb::Event m;
    m.set_region_id(1001);
    m.set_request_id(7);
    *m.mutable_long_txn()->add_txn_info() = MakeTxnInfo(kTso);
    g.push_back({"cdcpb_Event_long_txn", Own(m),
                 Cat({V(1, 1001), V(7, 7), L(8, L(1, TxnInfoBytes(kTso)))})});
  }
  // `regions` is packed.
  const std::string resolved_bytes =
      Cat({L(1, Cat({Varint(1001), Varint(1002), Varint(300000)})), V(2, kTso), V(3, 7)});
  cdcpb::ResolvedTs resolved;
  resolved.add_regions(1001);
  resolved.add_regions(1002);
  resolved.add_regions(300000);
  resolved.set_ts(kTso);
  resolved.set_request_id(7);
  g.push_back({"cdcpb_ResolvedTs", Own(resolved), resolved_bytes});
  {
    cdcpb::ChangeDataEvent m;
    auto* e1 = m.add_events();
    e1->set_region_id(1001);
    e1->set_resolved_ts(kTso);
    auto* e2 = m.add_events();
    e2->set_region_id(1002);
    *e2->mutable_entries() = entries;
    g.push_back(
        {"cdcpb_ChangeDataEvent_events", Own(m),
         Cat({L(1, Cat({V(1, 1001), V(6, kTso)})), L(1, Cat({V(1, 1002), L(3, entries_bytes)}))})});
  }
  {
    cdcpb::ChangeDataEvent m;
    *m.mutable_resolved_ts() = resolved;
    g.push_back({"cdcpb_ChangeDataEvent_resolved_ts", Own(m), L(2, resolved_bytes)});
  }
}

void AddCdcpbRequests(std::vector<Golden>& g) {
  g.push_back(Opaque<cdcpb::ChangeDataRequest::Register>("cdcpb_ChangeDataRequest_Register"));
  g.push_back(Opaque<cdcpb::ChangeDataRequest::Deregister>("cdcpb_ChangeDataRequest_Deregister"));
  const std::string notify_bytes =
      Cat({L(1, TxnStatusBytes(kTso)), L(1, TxnStatusBytes(kTso + 5))});
  cdcpb::ChangeDataRequest::NotifyTxnStatus notify;
  *notify.add_txn_status() = MakeTxnStatus(kTso);
  *notify.add_txn_status() = MakeTxnStatus(kTso + 5);
  g.push_back({"cdcpb_ChangeDataRequest_NotifyTxnStatus", Own(notify), notify_bytes});
  {
    // A register as TiCDC sends it: the request oneof left unset.
    cdcpb::ChangeDataRequest m;
    *m.mutable_header() = MakeCdcHeader();
    m.set_region_id(1001);
    *m.mutable_region_epoch() = MakeEpoch();
    m.set_checkpoint_ts(kTso);
    m.set_start_key(kComparableKey);
    m.set_end_key("t\x80\x00\x00\x00\x00\x00\x00\xFF"s);
    m.set_request_id(7);
    m.set_extra_op(kvrpcpb::ReadOldValue);
    m.set_filter_loop(true);
    m.set_scan_priority(cdcpb::SCAN_PRIORITY_HIGH);
    g.push_back({"cdcpb_ChangeDataRequest_implicit_register", Own(m),
                 Cat({L(1, CdcHeaderBytes()), V(2, 1001), L(3, EpochBytes()), V(4, kTso),
                      L(5, kComparableKey), L(6, "t\x80\x00\x00\x00\x00\x00\x00\xFF"s), V(7, 7),
                      V(8, 1), V(12, 1), V(14, 2)})});
  }
  {
    cdcpb::ChangeDataRequest m;
    *m.mutable_header() = MakeCdcHeader();
    m.set_region_id(1001);
    m.set_request_id(7);
    m.mutable_register_();
    m.set_kv_api(cdcpb::ChangeDataRequest::TxnKV);
    g.push_back({"cdcpb_ChangeDataRequest_register", Own(m),
                 Cat({L(1, CdcHeaderBytes()), V(2, 1001), V(7, 7), L(9, ""), V(11, 2)})});
  }
  {
    cdcpb::ChangeDataRequest m;
    *m.mutable_header() = MakeCdcHeader();
    m.set_region_id(1001);
    *m.mutable_notify_txn_status() = notify;
    m.set_kv_api(cdcpb::ChangeDataRequest::RawKV);
    g.push_back({"cdcpb_ChangeDataRequest_notify_txn_status", Own(m),
                 Cat({L(1, CdcHeaderBytes()), V(2, 1001), L(10, notify_bytes), V(11, 1)})});
  }
  {
    // A deregister as TiCDC sends it: region_id 0 removes the whole request id.
    cdcpb::ChangeDataRequest m;
    *m.mutable_header() = MakeCdcHeader();
    m.set_request_id(7);
    m.mutable_deregister();
    m.set_filter_loop(true);
    g.push_back({"cdcpb_ChangeDataRequest_deregister", Own(m),
                 Cat({L(1, CdcHeaderBytes()), V(7, 7), V(12, 1), L(13, "")})});
  }
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
    (*m.mutable_tso_allocator_leaders())["global"] = MakeMember(1);
    g.push_back({"pdpb_GetMembersResponse", Own(m),
                 Cat({L(1, RespHeaderBytes()), L(2, MemberBytes(1)), L(2, MemberBytes(2)),
                      L(3, MemberBytes(1)), L(4, MemberBytes(2)),
                      // A map entry is a message {1: key, 2: value}.
                      L(5, Cat({L(1, "global"), L(2, MemberBytes(1))}))})});
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

const std::vector<Golden>& AllGoldens() {
  static const std::vector<Golden>* goldens = [] {
    auto* g = new std::vector<Golden>;
    AddMetapb(*g);
    AddRaftCmdpb(*g);
    AddErrorpb(*g);
    AddCdcpbErrors(*g);
    AddCdcpbEvents(*g);
    AddCdcpbRequests(*g);
    AddPdpbCommon(*g);
    AddPdpbRegions(*g);
    AddPdpbStoresAndGc(*g);
    AddMvccpb(*g);
    AddEtcdKv(*g);
    AddEtcdTxn(*g);
    AddEtcdWatch(*g);
    AddEtcdLease(*g);
    return g;
  }();
  return *goldens;
}

class GoldenTest : public ::testing::TestWithParam<Golden> {};

TEST_P(GoldenTest, SerializesToHandEncodedBytes) {
  const Golden& g = GetParam();
  EXPECT_EQ(Hex(g.message->SerializeAsString()), Hex(g.expected));
}

TEST_P(GoldenTest, ParsesHandEncodedBytesBackToTheSameMessage) {
  const Golden& g = GetParam();
  std::unique_ptr<Message> parsed(g.message->New());
  ASSERT_TRUE(parsed->ParseFromString(g.expected));
  EXPECT_TRUE(MessageDifferencer::Equals(*parsed, *g.message))
      << "parsed:\n"
      << parsed->DebugString() << "built:\n"
      << g.message->DebugString();
  EXPECT_EQ(Hex(parsed->SerializeAsString()), Hex(g.expected));
}

INSTANTIATE_TEST_SUITE_P(Wire, GoldenTest, ::testing::ValuesIn(AllGoldens()),
                         [](const ::testing::TestParamInfo<Golden>& info) {
                           return info.param.name;
                         });

// Messages of a type, recursively, without synthesized map-entry types.
void CollectMessages(const Descriptor* d, std::set<std::string>* out) {
  if (d->options().map_entry()) return;
  out->insert(d->full_name());
  for (int i = 0; i < d->nested_type_count(); ++i) CollectMessages(d->nested_type(i), out);
}

constexpr const char* kProtoFiles[] = {"cdcpb.proto",   "errorpb.proto", "kvrpcpb.proto",
                                       "metapb.proto",  "pdpb.proto",    "raft_cmdpb.proto",
                                       "etcd/kv.proto", "etcd/rpc.proto"};

TEST(GoldenCoverageTest, EveryDefinedMessageHasAGoldenCase) {
  std::set<std::string> defined;
  for (const char* file : kProtoFiles) {
    const auto* fd = DescriptorPool::generated_pool()->FindFileByName(file);
    ASSERT_NE(fd, nullptr) << file;
    for (int i = 0; i < fd->message_type_count(); ++i)
      CollectMessages(fd->message_type(i), &defined);
  }
  std::set<std::string> covered;
  for (const Golden& g : AllGoldens()) covered.insert(g.message->GetDescriptor()->full_name());

  std::vector<std::string> missing;
  std::set_difference(defined.begin(), defined.end(), covered.begin(), covered.end(),
                      std::back_inserter(missing));
  EXPECT_THAT(missing, ::testing::IsEmpty());
  std::vector<std::string> foreign;
  std::set_difference(covered.begin(), covered.end(), defined.begin(), defined.end(),
                      std::back_inserter(foreign));
  EXPECT_THAT(foreign, ::testing::IsEmpty());
}

// ---------------------------------------------------------------------------
// Behaviour beyond the golden bytes.

template <typename T>
bool Parses(std::string_view bytes) {
  T m;
  return m.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()));
}

TEST(ParseTest, RejectsMalformedInput) {
  const std::string cases[] = {
      "\x08"s,                                    // tag without value
      "\x08\xFF"s,                                // truncated varint
      "\x08" + std::string(10, '\xFF') + "\x01",  // varint longer than ten bytes
      "\x1A\x0A\x01\x02"s,                        // length beyond the end of the input
      "\x1A\xFF\xFF\xFF\xFF\x0F"s,                // length near 4 GiB
      "\x00"s,                                    // field number 0
      "\x0F\x00"s,                                // wire type 7 does not exist
      "\x0C"s,                                    // end-group without start-group
      "\x0B\x08\x01"s,                            // start-group never closed
  };
  for (const std::string& bytes : cases) {
    SCOPED_TRACE(Hex(bytes));
    EXPECT_FALSE(Parses<cdcpb::Event>(bytes));
    EXPECT_FALSE(Parses<cdcpb::ChangeDataEvent>(bytes));
    EXPECT_FALSE(Parses<pdpb::TsoResponse>(bytes));
    EXPECT_FALSE(Parses<etcdserverpb::WatchResponse>(bytes));
  }
}

TEST(ParseTest, RejectsEveryTruncationInsideAField) {
  cdcpb::ChangeDataEvent m;
  auto* e = m.add_events();
  e->set_region_id(1001);
  *e->mutable_entries()->add_entries() = MakePrewrite();
  const std::string full = m.SerializeAsString();
  ASSERT_TRUE(Parses<cdcpb::ChangeDataEvent>(full));
  // The message is a single field 1, so every proper prefix cuts it.
  for (size_t n = 1; n < full.size(); ++n) {
    EXPECT_FALSE(Parses<cdcpb::ChangeDataEvent>(std::string_view(full).substr(0, n))) << n;
  }
}

TEST(ParseTest, StringFieldsRejectInvalidUtf8) {
  // proto3 `string` fields are validated; `bytes` fields are not.
  google::protobuf::LogSilencer quiet;
  EXPECT_FALSE(Parses<cdcpb::Header>(L(2, "\xC3\x28"s)));
  EXPECT_TRUE(Parses<pdpb::UpdateServiceGCSafePointRequest>(L(2, "\xC3\x28"s)));
}

TEST(ParseTest, RejectsNestingBeyondTheRecursionLimit) {
  // TxnRequest -> RequestOp -> TxnRequest -> ... far deeper than protobuf's
  // default limit of 100.
  std::string bytes;
  for (int depth = 0; depth < 300; ++depth) bytes = L(2, L(4, bytes));
  EXPECT_FALSE(Parses<etcdserverpb::TxnRequest>(bytes));
}

TEST(ParseTest, MutatedGoldenBytesNeverCrashAndReparseStably) {
  google::protobuf::LogSilencer quiet;  // rejected UTF-8 strings are logged
  std::mt19937_64 rng(20260820);
  int accepted = 0;
  int rejected = 0;
  for (const Golden& g : AllGoldens()) {
    SCOPED_TRACE(g.name);
    if (g.expected.empty()) continue;
    for (int i = 0; i < 200; ++i) {
      std::string bytes = g.expected;
      for (int flips = 1 + static_cast<int>(rng() % 3); flips > 0; --flips) {
        bytes[rng() % bytes.size()] = static_cast<char>(rng());
      }
      if (rng() % 4 == 0) bytes.resize(rng() % bytes.size());
      std::unique_ptr<Message> m(g.message->New());
      if (!m->ParseFromString(bytes)) {
        ++rejected;
        continue;
      }
      ++accepted;
      std::unique_ptr<Message> again(g.message->New());
      ASSERT_TRUE(again->ParseFromString(m->SerializeAsString())) << Hex(bytes);
      EXPECT_TRUE(MessageDifferencer::Equals(*m, *again)) << Hex(bytes);
    }
  }
  EXPECT_GT(accepted, 0);
  EXPECT_GT(rejected, 0);
}

TEST(CompatibilityTest, EventWithUnknownAdminPayloadRoundTrips) {
  // An admin event whose raft_cmdpb payloads carry fields we do not model.
  const std::string admin_request = Cat({V(1, 2), L(3, Cat({V(1, 1002), L(2, "split-key")}))});
  const std::string admin_response = Cat({L(1, V(2, 9)), V(5, 300)});
  const std::string wire =
      Cat({V(1, 1001), V(2, 88), L(4, Cat({L(1, admin_request), L(2, admin_response)})), V(7, 7)});
  cdcpb::Event event;
  ASSERT_TRUE(event.ParseFromString(wire));
  EXPECT_EQ(event.region_id(), 1001u);
  EXPECT_EQ(event.request_id(), 7u);
  ASSERT_EQ(event.event_case(), cdcpb::Event::kAdmin);
  ASSERT_TRUE(event.admin().has_admin_request());
  ASSERT_TRUE(event.admin().has_admin_response());
  EXPECT_EQ(event.admin()
                .admin_request()
                .GetReflection()
                ->GetUnknownFields(event.admin().admin_request())
                .field_count(),
            2);
  EXPECT_EQ(Hex(event.SerializeAsString()), Hex(wire));

  cdcpb::ChangeDataEvent batch;
  *batch.add_events() = event;
  EXPECT_EQ(Hex(batch.SerializeAsString()), Hex(L(1, wire)));
}

TEST(CompatibilityTest, UnknownFieldsFromNewerPeersAreKept) {
  // A newer TiKV may add fields; they must not break parsing or be dropped.
  const std::string wire = Cat({V(1, 1001), V(6, kTso), V(7, 7), L(99, "future"), V(100, 1)});
  cdcpb::Event event;
  ASSERT_TRUE(event.ParseFromString(wire));
  EXPECT_EQ(event.resolved_ts(), kTso);
  EXPECT_EQ(Hex(event.SerializeAsString()), Hex(wire));
}

TEST(CompatibilityTest, UnpackedRepeatedScalarsAreAccepted) {
  // Writers may emit repeated scalars unpacked; both forms must parse.
  cdcpb::ResolvedTs resolved;
  ASSERT_TRUE(resolved.ParseFromString(Cat({V(1, 1001), V(1, 1002), V(2, kTso)})));
  EXPECT_THAT(resolved.regions(), ::testing::ElementsAre(1001u, 1002u));
  etcdserverpb::WatchCreateRequest create;
  ASSERT_TRUE(create.ParseFromString(Cat({V(5, 1), V(5, 0)})));
  EXPECT_THAT(create.filters(), ::testing::ElementsAre(etcdserverpb::WatchCreateRequest::NODELETE,
                                                       etcdserverpb::WatchCreateRequest::NOPUT));
}

TEST(CompatibilityTest, UnknownEnumValuesArePreserved) {
  // proto3 enums are open: a LogType added by a newer TiKV reaches the caller
  // as its number instead of being dropped.
  cdcpb::Event::Row row;
  ASSERT_TRUE(row.ParseFromString(Cat({V(3, 9), V(4, 7)})));
  EXPECT_EQ(static_cast<int>(row.type()), 9);
  EXPECT_EQ(static_cast<int>(row.op_type()), 7);
  EXPECT_FALSE(cdcpb::Event::LogType_IsValid(row.type()));
  EXPECT_EQ(Hex(row.SerializeAsString()), Hex(Cat({V(3, 9), V(4, 7)})));
}

TEST(CompatibilityTest, LastOneofMemberOnTheWireWins) {
  cdcpb::Event event;
  ASSERT_TRUE(event.ParseFromString(Cat({L(3, ""), V(6, kTso)})));
  EXPECT_EQ(event.event_case(), cdcpb::Event::kResolvedTs);
  ASSERT_TRUE(event.ParseFromString(Cat({V(6, kTso), L(3, "")})));
  EXPECT_EQ(event.event_case(), cdcpb::Event::kEntries);
}

// ---------------------------------------------------------------------------
// gRPC method paths.

struct Rpc {
  const char* path;
  const char* input;
  const char* output;
  bool client_streaming;
  bool server_streaming;
};

constexpr Rpc kRpcs[] = {
    {"/cdcpb.ChangeData/EventFeed", "cdcpb.ChangeDataRequest", "cdcpb.ChangeDataEvent", true, true},
    {"/cdcpb.ChangeData/EventFeedV2", "cdcpb.ChangeDataRequest", "cdcpb.ChangeDataEvent", true,
     true},
    {"/pdpb.PD/GetMembers", "pdpb.GetMembersRequest", "pdpb.GetMembersResponse", false, false},
    {"/pdpb.PD/Tso", "pdpb.TsoRequest", "pdpb.TsoResponse", true, true},
    {"/pdpb.PD/GetRegion", "pdpb.GetRegionRequest", "pdpb.GetRegionResponse", false, false},
    {"/pdpb.PD/GetRegionByID", "pdpb.GetRegionByIDRequest", "pdpb.GetRegionResponse", false, false},
    {"/pdpb.PD/ScanRegions", "pdpb.ScanRegionsRequest", "pdpb.ScanRegionsResponse", false, false},
    {"/pdpb.PD/BatchScanRegions", "pdpb.BatchScanRegionsRequest", "pdpb.BatchScanRegionsResponse",
     false, false},
    {"/pdpb.PD/GetStore", "pdpb.GetStoreRequest", "pdpb.GetStoreResponse", false, false},
    {"/pdpb.PD/GetAllStores", "pdpb.GetAllStoresRequest", "pdpb.GetAllStoresResponse", false,
     false},
    {"/pdpb.PD/UpdateServiceGCSafePoint", "pdpb.UpdateServiceGCSafePointRequest",
     "pdpb.UpdateServiceGCSafePointResponse", false, false},
    {"/pdpb.PD/GetGCSafePoint", "pdpb.GetGCSafePointRequest", "pdpb.GetGCSafePointResponse", false,
     false},
    {"/etcdserverpb.KV/Range", "etcdserverpb.RangeRequest", "etcdserverpb.RangeResponse", false,
     false},
    {"/etcdserverpb.KV/Put", "etcdserverpb.PutRequest", "etcdserverpb.PutResponse", false, false},
    {"/etcdserverpb.KV/DeleteRange", "etcdserverpb.DeleteRangeRequest",
     "etcdserverpb.DeleteRangeResponse", false, false},
    {"/etcdserverpb.KV/Txn", "etcdserverpb.TxnRequest", "etcdserverpb.TxnResponse", false, false},
    {"/etcdserverpb.KV/Compact", "etcdserverpb.CompactionRequest",
     "etcdserverpb.CompactionResponse", false, false},
    {"/etcdserverpb.Watch/Watch", "etcdserverpb.WatchRequest", "etcdserverpb.WatchResponse", true,
     true},
    {"/etcdserverpb.Lease/LeaseGrant", "etcdserverpb.LeaseGrantRequest",
     "etcdserverpb.LeaseGrantResponse", false, false},
    {"/etcdserverpb.Lease/LeaseRevoke", "etcdserverpb.LeaseRevokeRequest",
     "etcdserverpb.LeaseRevokeResponse", false, false},
    {"/etcdserverpb.Lease/LeaseKeepAlive", "etcdserverpb.LeaseKeepAliveRequest",
     "etcdserverpb.LeaseKeepAliveResponse", true, true},
    {"/etcdserverpb.Lease/LeaseTimeToLive", "etcdserverpb.LeaseTimeToLiveRequest",
     "etcdserverpb.LeaseTimeToLiveResponse", false, false},
};

constexpr const char* kServices[] = {"cdcpb.ChangeData", "pdpb.PD", "etcdserverpb.KV",
                                     "etcdserverpb.Watch", "etcdserverpb.Lease"};

TEST(ServiceTest, DescriptorsMatchTheExpectedPathsAndShapes) {
  const DescriptorPool* pool = DescriptorPool::generated_pool();
  for (const Rpc& rpc : kRpcs) {
    SCOPED_TRACE(rpc.path);
    const std::string path = rpc.path;
    const size_t slash = path.rfind('/');
    ASSERT_NE(slash, 0u);
    const auto* service = pool->FindServiceByName(path.substr(1, slash - 1));
    ASSERT_NE(service, nullptr);
    const auto* method = service->FindMethodByName(path.substr(slash + 1));
    ASSERT_NE(method, nullptr);
    EXPECT_EQ("/" + service->full_name() + "/" + method->name(), path);
    EXPECT_EQ(method->input_type()->full_name(), rpc.input);
    EXPECT_EQ(method->output_type()->full_name(), rpc.output);
    EXPECT_EQ(method->client_streaming(), rpc.client_streaming);
    EXPECT_EQ(method->server_streaming(), rpc.server_streaming);
  }
}

TEST(ServiceTest, ServicesDeclareNoOtherMethods) {
  std::set<std::string> expected;
  for (const Rpc& rpc : kRpcs) expected.insert(rpc.path);
  std::set<std::string> declared;
  for (const char* name : kServices) {
    const auto* service = DescriptorPool::generated_pool()->FindServiceByName(name);
    ASSERT_NE(service, nullptr) << name;
    for (int i = 0; i < service->method_count(); ++i) {
      declared.insert("/" + service->full_name() + "/" + service->method(i)->name());
    }
  }
  EXPECT_EQ(declared, expected);
  EXPECT_STREQ(cdcpb::ChangeData::service_full_name(), "cdcpb.ChangeData");
  EXPECT_STREQ(pdpb::PD::service_full_name(), "pdpb.PD");
  EXPECT_STREQ(etcdserverpb::KV::service_full_name(), "etcdserverpb.KV");
  EXPECT_STREQ(etcdserverpb::Watch::service_full_name(), "etcdserverpb.Watch");
  EXPECT_STREQ(etcdserverpb::Lease::service_full_name(), "etcdserverpb.Lease");
}

// Records the path of every call made on a channel.
class PathRecorder : public grpc::experimental::ClientInterceptorFactoryInterface {
 public:
  explicit PathRecorder(std::vector<std::string>* paths) : paths_(paths) {}
  grpc::experimental::Interceptor* CreateClientInterceptor(
      grpc::experimental::ClientRpcInfo* info) override {
    std::lock_guard<std::mutex> lock(mu_);
    paths_->push_back(info->method());
    return nullptr;
  }

 private:
  std::mutex mu_;
  std::vector<std::string>* paths_;
};

// Records the path of every call a server dispatches.
class ServerPathRecorder : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  explicit ServerPathRecorder(std::vector<std::string>* paths) : paths_(paths) {}
  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override {
    std::lock_guard<std::mutex> lock(mu_);
    paths_->push_back(info->method() != nullptr ? info->method() : "<unknown>");
    return nullptr;
  }

 private:
  std::mutex mu_;
  std::vector<std::string>* paths_;
};

template <typename Stub, typename Req, typename Resp>
grpc::StatusCode CallUnary(Stub& stub,
                           grpc::Status (Stub::*rpc)(grpc::ClientContext*, const Req&, Resp*)) {
  grpc::ClientContext ctx;
  Req req;
  Resp resp;
  return (stub.*rpc)(&ctx, req, &resp).error_code();
}

template <typename Stub, typename Req, typename Resp>
grpc::StatusCode CallBidi(Stub& stub, std::unique_ptr<grpc::ClientReaderWriter<Req, Resp>> (
                                          Stub::*rpc)(grpc::ClientContext*)) {
  grpc::ClientContext ctx;
  auto stream = (stub.*rpc)(&ctx);
  stream->WritesDone();
  return stream->Finish().error_code();
}

TEST(ServiceTest, GeneratedStubsCallTheExpectedPaths) {
  // A server with the generated services, whose default handlers answer
  // UNIMPLEMENTED, reached over an in-process channel.
  cdcpb::ChangeData::Service change_data;
  pdpb::PD::Service pd;
  etcdserverpb::KV::Service kv;
  etcdserverpb::Watch::Service watch;
  etcdserverpb::Lease::Service lease;
  grpc::ServerBuilder builder;
  builder.RegisterService(&change_data).RegisterService(&pd).RegisterService(&kv);
  builder.RegisterService(&watch).RegisterService(&lease);
  std::vector<std::string> server_paths;
  std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>>
      server_recorders;
  server_recorders.push_back(std::make_unique<ServerPathRecorder>(&server_paths));
  builder.experimental().SetInterceptorCreators(std::move(server_recorders));
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  ASSERT_NE(server, nullptr);

  std::vector<std::string> paths;
  std::vector<std::unique_ptr<grpc::experimental::ClientInterceptorFactoryInterface>> recorders;
  recorders.push_back(std::make_unique<PathRecorder>(&paths));
  auto channel = server->experimental().InProcessChannelWithInterceptors(grpc::ChannelArguments(),
                                                                         std::move(recorders));
  auto cdc = cdcpb::ChangeData::NewStub(channel);
  auto pd_stub = pdpb::PD::NewStub(channel);
  auto kv_stub = etcdserverpb::KV::NewStub(channel);
  auto watch_stub = etcdserverpb::Watch::NewStub(channel);
  auto lease_stub = etcdserverpb::Lease::NewStub(channel);
  const std::vector<grpc::StatusCode> codes = {
      CallBidi(*cdc, &cdcpb::ChangeData::Stub::EventFeed),
      CallBidi(*cdc, &cdcpb::ChangeData::Stub::EventFeedV2),
      CallUnary(*pd_stub, &pdpb::PD::Stub::GetMembers),
      CallBidi(*pd_stub, &pdpb::PD::Stub::Tso),
      CallUnary(*pd_stub, &pdpb::PD::Stub::GetRegion),
      CallUnary(*pd_stub, &pdpb::PD::Stub::GetRegionByID),
      CallUnary(*pd_stub, &pdpb::PD::Stub::ScanRegions),
      CallUnary(*pd_stub, &pdpb::PD::Stub::BatchScanRegions),
      CallUnary(*pd_stub, &pdpb::PD::Stub::GetStore),
      CallUnary(*pd_stub, &pdpb::PD::Stub::GetAllStores),
      CallUnary(*pd_stub, &pdpb::PD::Stub::UpdateServiceGCSafePoint),
      CallUnary(*pd_stub, &pdpb::PD::Stub::GetGCSafePoint),
      CallUnary(*kv_stub, &etcdserverpb::KV::Stub::Range),
      CallUnary(*kv_stub, &etcdserverpb::KV::Stub::Put),
      CallUnary(*kv_stub, &etcdserverpb::KV::Stub::DeleteRange),
      CallUnary(*kv_stub, &etcdserverpb::KV::Stub::Txn),
      CallUnary(*kv_stub, &etcdserverpb::KV::Stub::Compact),
      CallBidi(*watch_stub, &etcdserverpb::Watch::Stub::Watch),
      CallUnary(*lease_stub, &etcdserverpb::Lease::Stub::LeaseGrant),
      CallUnary(*lease_stub, &etcdserverpb::Lease::Stub::LeaseRevoke),
      CallBidi(*lease_stub, &etcdserverpb::Lease::Stub::LeaseKeepAlive),
      CallUnary(*lease_stub, &etcdserverpb::Lease::Stub::LeaseTimeToLive),
  };
  server->Shutdown();

  // The default handlers answer UNIMPLEMENTED; the server saw the same path
  // as the client, so each call was dispatched to its registered method.
  EXPECT_THAT(codes, ::testing::Each(grpc::StatusCode::UNIMPLEMENTED));
  std::vector<std::string> expected;
  for (const Rpc& rpc : kRpcs) expected.push_back(rpc.path);
  EXPECT_EQ(paths, expected);
  EXPECT_EQ(server_paths, expected);
}

}  // namespace
}  // namespace sluice
