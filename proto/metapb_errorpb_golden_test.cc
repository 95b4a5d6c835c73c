// Golden cases of metapb, raft_cmdpb and errorpb (see golden_test.cc).

#include <cstdint>
#include <string>
#include <vector>

#include "errorpb.pb.h"
#include "golden_samples.h"
#include "golden_util.h"
#include "metapb.pb.h"
#include "raft_cmdpb.pb.h"

namespace sluice::golden {
namespace {

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
  {
    errorpb::KeyNotInRegion m;
    m.set_key(kRawKey);
    m.set_region_id(1001);
    m.set_start_key(kComparableKey);
    m.set_end_key("t\x80\x00\x00\x00\x00\x00\x00\xFF"s);
    g.push_back({"errorpb_KeyNotInRegion", Own(m),
                 Cat({L(1, kRawKey), V(2, 1001), L(3, kComparableKey),
                      L(4, "t\x80\x00\x00\x00\x00\x00\x00\xFF"s)})});
  }
  g.push_back(Opaque<errorpb::StaleCommand>("errorpb_StaleCommand"));
  {
    errorpb::StoreNotMatch m;
    m.set_request_store_id(2);
    m.set_actual_store_id(3);
    g.push_back({"errorpb_StoreNotMatch", Own(m), Cat({V(1, 2), V(2, 3)})});
  }
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
  {
    errorpb::MismatchPeerId m;
    m.set_request_peer_id(10011);
    m.set_store_peer_id(10014);
    g.push_back({"errorpb_MismatchPeerId", Own(m), Cat({V(1, 10011), V(2, 10014)})});
  }
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

SLUICE_GOLDEN_CASES(metapb, AddMetapb);
SLUICE_GOLDEN_CASES(raft_cmdpb, AddRaftCmdpb);
SLUICE_GOLDEN_CASES(errorpb, AddErrorpb);

}  // namespace
}  // namespace sluice::golden
