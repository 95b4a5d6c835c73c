// The embedded store's on-disk layout (one RocksDB key space) and the binary
// encoding of its records. Pure functions; decoding untrusted bytes returns
// kCorruption, never asserts. Format version 1; a new format gets a new
// version byte.
//
//   "m" "revision"      -> u64 store revision
//   "m" "lease_next"    -> u64 next lease id to grant
//   "k" <user key>      -> key record
//   "l" <lease id u64>  -> lease record
//   "e" <revision u64>  -> the events of that revision (watch history)
//
// Integers are fixed-width big-endian. Key record: version u8 = 1 |
// create_revision | mod_revision | version | lease (each 8 bytes) | value.
// Lease record: version u8 = 1 | ttl in milliseconds (8 bytes). Event
// record: version u8 = 1 | count u32 | per event: type u8 (1 put, 2 delete) |
// key length u32 | key | value length u32 | value | create_revision |
// mod_revision | version | lease.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "meta/types.h"

namespace sluice::meta::format {

inline constexpr uint8_t kFormatVersion = 1;

std::string RevisionKey();
std::string LeaseNextKey();
std::string UserKey(std::string_view key);
std::string LeaseKey(LeaseId lease);
std::string EventKey(Revision revision);
inline constexpr char kUserPrefix = 'k';
inline constexpr char kLeasePrefix = 'l';
inline constexpr char kEventPrefix = 'e';

std::string EncodeU64(uint64_t v);
Result<uint64_t> DecodeU64(std::string_view bytes);

// Key record: `kv.key` is not stored (it is in the store key).
std::string EncodeKeyRecord(const KeyValue& kv);
Result<KeyValue> DecodeKeyRecord(std::string_view user_key, std::string_view bytes);

std::string EncodeLeaseRecord(int64_t ttl_ms);
Result<int64_t> DecodeLeaseRecord(std::string_view bytes);
// The lease id of a lease store key ("l" + 8 bytes).
Result<LeaseId> DecodeLeaseKey(std::string_view store_key);

std::string EncodeEvents(const std::vector<WatchEvent>& events);
Result<std::vector<WatchEvent>> DecodeEvents(std::string_view bytes);

}  // namespace sluice::meta::format
