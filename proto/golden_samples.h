// Sample values shared by several golden test files, each as a builder of the
// generated message and the hand-encoded bytes of the same value.

#pragma once

#include <cstdint>
#include <limits>
#include <string>

#include "cdcpb.pb.h"
#include "errorpb.pb.h"
#include "golden_util.h"
#include "metapb.pb.h"

namespace sluice::golden {

inline constexpr uint64_t kClusterId = 6842931774112233445ULL;
// physical 1700000000000 ms, logical 5.
inline constexpr uint64_t kTso = 445644800000000005ULL;
inline constexpr uint64_t kMaxU64 = std::numeric_limits<uint64_t>::max();

// Comparable form of the row key of table 100, handle 1.
inline const std::string kComparableKey =
    "\x74\x80\x00\x00\x00\x00\x00\x00\xFF\x64\x5F\x72\x80\x00\x00\x00\x00\xFF\x00\x00\x01\x00\x00\x00\x00\x00\xFA"s;
// Raw row key of table 100, handle 1.
inline const std::string kRawKey =
    "\x74\x80\x00\x00\x00\x00\x00\x00\x64\x5F\x72\x80\x00\x00\x00\x00\x00\x00\x01"s;

// Not UTF-8: a truncated two-byte sequence, a lone continuation byte, an
// overlong '/', an encoded surrogate and a byte that never occurs in UTF-8.
inline const std::string kNotUtf8 = "\xC3\x28|\x80|\xC0\xAF|\xED\xA0\x80|\xFF"s;

inline metapb::Peer MakePeer(uint64_t id, uint64_t store_id) {
  metapb::Peer p;
  p.set_id(id);
  p.set_store_id(store_id);
  return p;
}
inline std::string PeerBytes(uint64_t id, uint64_t store_id) {
  return Cat({V(1, id), V(2, store_id)});
}

inline metapb::RegionEpoch MakeEpoch() {
  metapb::RegionEpoch e;
  e.set_conf_ver(5);
  e.set_version(300);
  return e;
}
inline std::string EpochBytes() { return Cat({V(1, 5), V(2, 300)}); }

inline metapb::Region MakeRegion(uint64_t id) {
  metapb::Region r;
  r.set_id(id);
  r.set_start_key(kComparableKey);
  *r.mutable_region_epoch() = MakeEpoch();
  *r.add_peers() = MakePeer(id * 10 + 1, 1);
  return r;
}
inline std::string RegionBytes(uint64_t id) {
  return Cat({V(1, id), L(2, kComparableKey), L(4, EpochBytes()), L(5, PeerBytes(id * 10 + 1, 1))});
}

inline errorpb::EpochNotMatch MakeEpochNotMatch() {
  errorpb::EpochNotMatch e;
  *e.add_current_regions() = MakeRegion(1001);
  *e.add_current_regions() = MakeRegion(1002);
  return e;
}
inline std::string EpochNotMatchBytes() {
  return Cat({L(1, RegionBytes(1001)), L(1, RegionBytes(1002))});
}

inline cdcpb::Event::Row MakePrewrite() {
  cdcpb::Event::Row r;
  r.set_start_ts(kTso);
  r.set_type(cdcpb::Event::PREWRITE);
  r.set_op_type(cdcpb::Event::Row::PUT);
  r.set_key(kRawKey);
  r.set_value("\x80\x00\x01\x00"s);
  return r;
}
inline std::string PrewriteBytes() {
  return Cat({V(1, kTso), V(3, 1), V(4, 1), L(5, kRawKey), L(6, "\x80\x00\x01\x00"s)});
}

}  // namespace sluice::golden
