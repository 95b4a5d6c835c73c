// Golden cases of cdcpb: errors, events and requests (see golden_test.cc).

#include <cstdint>
#include <string>
#include <vector>

#include "cdcpb.pb.h"
#include "golden_samples.h"
#include "golden_util.h"
#include "kvrpcpb.pb.h"
#include "metapb.pb.h"

namespace sluice::golden {
namespace {

cdcpb::Header MakeCdcHeader() {
  cdcpb::Header h;
  h.set_cluster_id(kClusterId);
  h.set_ticdc_version("v8.5.0");
  return h;
}
std::string CdcHeaderBytes() { return Cat({V(1, kClusterId), L(2, "v8.5.0")}); }

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

SLUICE_GOLDEN_CASES(cdcpb_errors, AddCdcpbErrors);
SLUICE_GOLDEN_CASES(cdcpb_events, AddCdcpbEvents);
SLUICE_GOLDEN_CASES(cdcpb_requests, AddCdcpbRequests);

}  // namespace
}  // namespace sluice::golden
