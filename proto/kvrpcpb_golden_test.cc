// Golden cases of kvrpcpb: the context, key errors and snapshot reads of the
// Tikv service (see golden_test.cc).

#include <cstdint>
#include <string>
#include <vector>

#include "golden_samples.h"
#include "golden_util.h"
#include "kvrpcpb.pb.h"

namespace sluice::golden {
namespace {

kvrpcpb::Context MakeContext() {
  kvrpcpb::Context c;
  c.set_region_id(1001);
  *c.mutable_region_epoch() = MakeEpoch();
  *c.mutable_peer() = MakePeer(10011, 1);
  return c;
}
std::string ContextBytes() {
  return Cat({V(1, 1001), L(2, EpochBytes()), L(3, PeerBytes(10011, 1))});
}

kvrpcpb::LockInfo MakeLock() {
  kvrpcpb::LockInfo l;
  l.set_primary_lock("pk");
  l.set_lock_version(kTso);
  l.set_key(kRawKey);
  l.set_lock_ttl(3000);
  return l;
}
std::string LockBytes() { return Cat({L(1, "pk"), V(2, kTso), L(3, kRawKey), V(4, 3000)}); }

void AddContextAndLocks(std::vector<Golden>& g) {
  {
    kvrpcpb::Context m = MakeContext();
    m.set_term(6);
    m.set_priority(kvrpcpb::High);
    m.set_isolation_level(kvrpcpb::RCCheckTS);
    m.set_not_fill_cache(true);
    m.add_resolved_locks(7);
    m.add_resolved_locks(300);
    m.set_max_execution_duration_ms(20000);
    m.set_is_retry_request(true);
    m.set_api_version(kvrpcpb::V2);
    m.add_committed_locks(9);
    m.set_request_source("external_cdc");
    m.set_txn_source(1);
    m.set_cluster_id(kClusterId);
    // Packed repeated varints: 300 takes two bytes.
    g.push_back({"kvrpcpb_Context", Own(m),
                 Cat({ContextBytes(), V(5, 6), V(6, 2), V(7, 2), V(8, 1),
                      L(13, Cat({Varint(7), Varint(300)})), V(14, 20000), V(20, 1), V(21, 2),
                      L(22, Varint(9)), L(24, "external_cdc"), V(25, 1), V(35, kClusterId)})});
  }
  {
    kvrpcpb::LockInfo m = MakeLock();
    m.set_txn_size(2);
    m.set_lock_type(kvrpcpb::Del);
    m.set_lock_for_update_ts(kTso + 1);
    m.set_use_async_commit(true);
    m.set_min_commit_ts(kTso + 2);
    m.add_secondaries("s1");
    m.add_secondaries("s2");
    m.set_duration_to_last_update_ms(15);
    *m.add_shared_lock_infos() = MakeLock();
    m.set_is_txn_file(true);
    // Field 100 needs a two-byte tag.
    g.push_back({"kvrpcpb_LockInfo", Own(m),
                 Cat({LockBytes(), V(5, 2), V(6, 1), V(7, kTso + 1), V(8, 1), V(9, kTso + 2),
                      L(10, "s1"), L(10, "s2"), V(11, 15), L(12, LockBytes()), V(100, 1)})});
  }
  {
    kvrpcpb::WriteConflict m;
    m.set_start_ts(kTso);
    m.set_conflict_ts(kTso + 1);
    m.set_key(kRawKey);
    m.set_primary("pk");
    m.set_conflict_commit_ts(kTso + 2);
    m.set_reason(kvrpcpb::WriteConflict::SelfRolledBack);
    g.push_back(
        {"kvrpcpb_WriteConflict", Own(m),
         Cat({V(1, kTso), V(2, kTso + 1), L(3, kRawKey), L(4, "pk"), V(5, kTso + 2), V(6, 3)})});
  }
  {
    kvrpcpb::AlreadyExist m;
    m.set_key(kRawKey);
    g.push_back({"kvrpcpb_AlreadyExist", Own(m), L(1, kRawKey)});
  }
  g.push_back(Opaque<kvrpcpb::Deadlock>("kvrpcpb_Deadlock"));
  g.push_back(Opaque<kvrpcpb::CommitTsExpired>("kvrpcpb_CommitTsExpired"));
  g.push_back(Opaque<kvrpcpb::TxnNotFound>("kvrpcpb_TxnNotFound"));
  g.push_back(Opaque<kvrpcpb::CommitTsTooLarge>("kvrpcpb_CommitTsTooLarge"));
  g.push_back(Opaque<kvrpcpb::AssertionFailed>("kvrpcpb_AssertionFailed"));
  g.push_back(Opaque<kvrpcpb::PrimaryMismatch>("kvrpcpb_PrimaryMismatch"));
  g.push_back(Opaque<kvrpcpb::TxnLockNotFound>("kvrpcpb_TxnLockNotFound"));
  g.push_back(Opaque<kvrpcpb::LockUpgradeConflict>("kvrpcpb_LockUpgradeConflict"));
  g.push_back(Opaque<kvrpcpb::SharedLockLost>("kvrpcpb_SharedLockLost"));
  g.push_back(Opaque<kvrpcpb::DebugInfo>("kvrpcpb_DebugInfo"));
  g.push_back(Opaque<kvrpcpb::ExecDetailsV2>("kvrpcpb_ExecDetailsV2"));
  {
    // Every member set; the unmodelled kinds are present but empty.
    kvrpcpb::KeyError m;
    *m.mutable_locked() = MakeLock();
    m.set_retryable("write conflict");
    m.set_abort("txn aborted");
    m.mutable_conflict()->set_start_ts(kTso);
    m.mutable_already_exist()->set_key("k");
    m.mutable_deadlock();
    m.mutable_commit_ts_expired();
    m.mutable_txn_not_found();
    m.mutable_commit_ts_too_large();
    m.mutable_assertion_failed();
    m.mutable_primary_mismatch();
    m.mutable_txn_lock_not_found();
    m.mutable_lock_upgrade_conflict();
    m.mutable_shared_lock_lost();
    m.mutable_debug_info();
    std::string expected = Cat({L(1, LockBytes()), L(2, "write conflict"), L(3, "txn aborted"),
                                L(4, V(1, kTso)), L(5, L(1, "k"))});
    for (int field = 6; field <= 14; ++field) expected += L(field, "");
    expected += L(100, "");
    g.push_back({"kvrpcpb_KeyError", Own(m), expected});
  }
}

void AddReads(std::vector<Golden>& g) {
  {
    kvrpcpb::KvPair m;
    m.mutable_error()->set_abort("x");
    m.set_key(kRawKey);
    m.set_value("v");
    m.set_commit_ts(kTso);
    g.push_back(
        {"kvrpcpb_KvPair", Own(m), Cat({L(1, L(3, "x")), L(2, kRawKey), L(3, "v"), V(4, kTso)})});
  }
  {
    kvrpcpb::GetRequest m;
    *m.mutable_context() = MakeContext();
    m.set_key(kRawKey);
    m.set_version(kTso);
    m.set_need_commit_ts(true);
    g.push_back({"kvrpcpb_GetRequest", Own(m),
                 Cat({L(1, ContextBytes()), L(2, kRawKey), V(3, kTso), V(4, 1)})});
  }
  {
    kvrpcpb::GetResponse m;
    m.mutable_region_error()->mutable_region_not_found()->set_region_id(1001);
    *m.mutable_error()->mutable_locked() = MakeLock();
    m.set_value("v");
    m.set_not_found(true);
    m.mutable_exec_details_v2();
    m.set_commit_ts(kTso);
    g.push_back({"kvrpcpb_GetResponse", Own(m),
                 Cat({L(1, L(3, V(1, 1001))), L(2, L(1, LockBytes())), L(3, "v"), V(4, 1), L(6, ""),
                      V(7, kTso)})});
  }
  {
    kvrpcpb::ScanRequest m;
    *m.mutable_context() = MakeContext();
    m.set_start_key(kRawKey);
    m.set_limit(256);
    m.set_version(kMaxU64);
    m.set_key_only(true);
    m.set_reverse(true);
    m.set_end_key("t\x81"s);
    m.set_sample_step(4);
    g.push_back({"kvrpcpb_ScanRequest", Own(m),
                 Cat({L(1, ContextBytes()), L(2, kRawKey), V(3, 256), V(4, kMaxU64), V(5, 1),
                      V(6, 1), L(7, "t\x81"s), V(8, 4)})});
  }
  {
    kvrpcpb::ScanResponse m;
    m.mutable_region_error()->mutable_store_not_match()->set_request_store_id(2);
    auto* a = m.add_pairs();
    a->set_key("a");
    a->set_value("1");
    auto* b = m.add_pairs();
    *b->mutable_error()->mutable_locked() = MakeLock();
    *m.mutable_error()->mutable_locked() = MakeLock();
    g.push_back({"kvrpcpb_ScanResponse", Own(m),
                 Cat({L(1, L(8, V(1, 2))), L(2, Cat({L(2, "a"), L(3, "1")})),
                      L(2, L(1, L(1, LockBytes()))), L(3, L(1, LockBytes()))})});
  }
}

void AddLockResolution(std::vector<Golden>& g) {
  {
    kvrpcpb::ScanLockRequest m;
    *m.mutable_context() = MakeContext();
    m.set_max_version(kTso);
    m.set_start_key(kRawKey);
    m.set_limit(1024);
    m.set_end_key("t\x81"s);
    g.push_back(
        {"kvrpcpb_ScanLockRequest", Own(m),
         Cat({L(1, ContextBytes()), V(2, kTso), L(3, kRawKey), V(4, 1024), L(5, "t\x81"s)})});
  }
  {
    kvrpcpb::ScanLockResponse m;
    m.mutable_region_error()->mutable_region_not_found()->set_region_id(1001);
    *m.mutable_error()->mutable_locked() = MakeLock();
    *m.add_locks() = MakeLock();
    m.mutable_exec_details_v2();
    g.push_back(
        {"kvrpcpb_ScanLockResponse", Own(m),
         Cat({L(1, L(3, V(1, 1001))), L(2, L(1, LockBytes())), L(3, LockBytes()), L(4, "")})});
  }
  {
    kvrpcpb::CheckTxnStatusRequest m;
    *m.mutable_context() = MakeContext();
    m.set_primary_key(kRawKey);
    m.set_lock_ts(kTso);
    m.set_caller_start_ts(7);
    m.set_current_ts(kMaxU64);
    m.set_rollback_if_not_exist(true);
    m.set_force_sync_commit(true);
    m.set_resolving_pessimistic_lock(true);
    m.set_verify_is_primary(true);
    m.set_is_txn_file(true);
    g.push_back({"kvrpcpb_CheckTxnStatusRequest", Own(m),
                 Cat({L(1, ContextBytes()), L(2, kRawKey), V(3, kTso), V(4, 7), V(5, kMaxU64),
                      V(6, 1), V(7, 1), V(8, 1), V(9, 1), V(100, 1)})});
  }
  {
    kvrpcpb::CheckTxnStatusResponse m;
    m.mutable_error()->mutable_txn_not_found()->set_start_ts(kTso);
    m.mutable_error()->mutable_txn_not_found()->set_primary_key(kRawKey);
    m.set_lock_ttl(3000);
    m.set_commit_version(kTso + 1);
    m.set_action(kvrpcpb::TTLExpireRollback);
    *m.mutable_lock_info() = MakeLock();
    g.push_back({"kvrpcpb_CheckTxnStatusResponse", Own(m),
                 Cat({L(2, L(8, Cat({V(1, kTso), L(2, kRawKey)}))), V(3, 3000), V(4, kTso + 1),
                      V(5, 1), L(6, LockBytes())})});
  }
  {
    kvrpcpb::ResolveLockRequest m;
    *m.mutable_context() = MakeContext();
    m.set_start_version(kTso);
    m.set_commit_version(kTso + 1);
    auto* info = m.add_txn_infos();
    info->set_txn(5);
    info->set_status(6);
    m.add_keys(kRawKey);
    m.set_is_async(true);
    g.push_back({"kvrpcpb_ResolveLockRequest", Own(m),
                 Cat({L(1, ContextBytes()), V(2, kTso), V(3, kTso + 1),
                      L(4, Cat({V(1, 5), V(2, 6)})), L(5, kRawKey), V(6, 1)})});
  }
  {
    kvrpcpb::TxnInfo m;
    m.set_txn(kTso);
    m.set_status(kTso + 1);
    m.set_is_txn_file(true);
    g.push_back({"kvrpcpb_TxnInfo", Own(m), Cat({V(1, kTso), V(2, kTso + 1), V(100, 1)})});
  }
  {
    kvrpcpb::ResolveLockResponse m;
    m.mutable_region_error()->mutable_region_not_found()->set_region_id(1001);
    m.mutable_error()->set_abort("x");
    g.push_back(
        {"kvrpcpb_ResolveLockResponse", Own(m), Cat({L(1, L(3, V(1, 1001))), L(2, L(3, "x"))})});
  }
}

SLUICE_GOLDEN_CASES(kvrpcpb_context_and_errors, AddContextAndLocks);
SLUICE_GOLDEN_CASES(kvrpcpb_reads, AddReads);
SLUICE_GOLDEN_CASES(kvrpcpb_lock_resolution, AddLockResolution);

}  // namespace
}  // namespace sluice::golden
