// The event store's on-disk format: the store key of one change and the
// value that carries the rest of it. Pure functions over bytes; thread-safe.
//
// Store key (every integer big-endian, so bytewise order is numeric order):
//   store subscription id 8B | table id 8B (sign bit flipped) |
//   commit ts 8B | start ts 8B | dml order 1B | raw TiKV key
// Store value (format version 1):
//   version u8 = 1 | op u8 (KvOp) | region id uvarint |
//   value length uvarint | value | old value length uvarint | old value
// The raw key, commit ts and start ts live only in the store key. Decoding
// never trusts the bytes: anything malformed is a kCorruption status.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/kv_entry.h"
#include "common/status.h"
#include "common/strong_id.h"

namespace sluice::eventstore {

// Length of the (subscription id, table id) prefix of a store key.
inline constexpr size_t kStoreKeyTablePrefixLength = 8 + 8;
// Length of the fixed part of a store key (everything before the raw key).
inline constexpr size_t kStoreKeyHeaderLength = kStoreKeyTablePrefixLength + 8 + 8 + 1;
inline constexpr uint8_t kValueFormatVersion = 1;

// The table id that keys an entry: the id in its raw TiDB table key
// ('t' + 8-byte id), or `fallback` for a key that is not a table key.
TableId EntryTableId(std::string_view raw_key, TableId fallback);

// Appends the store key of `entry` to `*out`.
void AppendStoreKey(uint64_t store_sub_id, TableId table_id, const RawKvEntry& entry,
                    std::string* out);
// Appends the store value of `entry` to `*out`.
void AppendStoreValue(const RawKvEntry& entry, std::string* out);

// The parts of a store key; `raw_key` is a view into the decoded bytes.
struct StoreKey {
  uint64_t store_sub_id = 0;
  TableId table_id;
  Ts commit_ts;
  Ts start_ts;
  DmlOrder dml_order = DmlOrder::kInsert;
  std::string_view raw_key;
};
Result<StoreKey> DecodeStoreKey(std::string_view bytes);

// Builds the whole entry from a store key and its value. Checks that the
// value's op and old value agree with the key's dml order.
Status DecodeEntry(std::string_view key_bytes, std::string_view value_bytes, RawKvEntry* out);

// Key-range bounds. Every key of a subscription starts with
// SubscriptionPrefix(); every key of (subscription, table) with commit ts
// >= ts is >= CommitTsBound(ts) and < TableEnd().
std::string SubscriptionPrefix(uint64_t store_sub_id);
// The first key after every key of the subscription (the prefix of the next
// id); empty for the largest id, meaning "no upper bound".
std::string SubscriptionEnd(uint64_t store_sub_id);
std::string CommitTsBound(uint64_t store_sub_id, TableId table_id, Ts ts);
// The exclusive upper bound of keys with commit ts <= ts.
std::string CommitTsUpperBound(uint64_t store_sub_id, TableId table_id, Ts ts);
// The first key after every key of (subscription, table); empty if none.
std::string TableEnd(uint64_t store_sub_id, TableId table_id);
// The exclusive lower bound just after every key of (commit ts, start ts),
// i.e. the first key of any later transaction.
std::string StartTsUpperBound(uint64_t store_sub_id, TableId table_id, Ts commit_ts, Ts start_ts);

}  // namespace sluice::eventstore
