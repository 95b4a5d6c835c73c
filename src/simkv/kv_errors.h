// The errors of the simulated store's KV reads (tikvpb.Tikv): region errors
// (errorpb.Error, as TiKV fills them; the kinds CDC also answers are built
// by the cdc_errors.h constructors and carried over) and key errors
// (kvrpcpb.KeyError). Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "cdcpb.pb.h"
#include "errorpb.pb.h"
#include "kvrpcpb.pb.h"
#include "simkv/mvcc_types.h"
#include "simkv/region_map.h"

namespace sluice::simkv {

// The region-error members of a cdcpb.Error (not_leader, region_not_found,
// epoch_not_match, server_is_busy) as an errorpb.Error. CDC-only kinds
// (duplicate request, compatibility, cluster id, congested) become the
// message text.
errorpb::Error ToRegionError(const cdcpb::Error& error);

errorpb::Error StoreNotMatchError(uint64_t request_store_id, uint64_t actual_store_id);
errorpb::Error MismatchPeerIdError(uint64_t request_peer_id, uint64_t store_peer_id);
// `encoded_key` in memcomparable form, like the region's boundaries.
errorpb::Error KeyNotInRegionError(std::string_view encoded_key, const RegionInfo& region);

// `lock` as TiKV lists it (ScanLock, CheckTxnStatus, KeyError.locked).
kvrpcpb::LockInfo ToProtoLock(const LockInfo& lock);
// A read blocked by `lock` (KeyError.locked).
kvrpcpb::KeyError LockedError(const LockInfo& lock);
// A read that cannot be served (KeyError.abort).
kvrpcpb::KeyError AbortError(std::string text);
// The key error of a failed MVCC read: locked for kKeyIsLocked, abort with
// the error text otherwise.
kvrpcpb::KeyError KeyErrorOf(const TxnError& error);

}  // namespace sluice::simkv
