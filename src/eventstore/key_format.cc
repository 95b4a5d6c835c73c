#include "eventstore/key_format.h"

#include <limits>

#include "codec/endian.h"
#include "codec/number.h"
#include "codec/tablecodec.h"

namespace sluice::eventstore {
namespace {

using codec::internal::AppendBe64;
using codec::internal::LoadBe64;

constexpr uint64_t kSignBit = uint64_t{1} << 63;
constexpr uint64_t kMaxTs = std::numeric_limits<uint64_t>::max();

uint64_t FlipTable(TableId id) { return static_cast<uint64_t>(id.value()) ^ kSignBit; }

std::string TablePrefixOf(uint64_t store_sub_id, TableId table_id) {
  std::string out;
  out.reserve(kStoreKeyHeaderLength);
  AppendBe64(store_sub_id, &out);
  AppendBe64(FlipTable(table_id), &out);
  return out;
}

// The smallest key greater than every key starting with `prefix`; empty if
// `prefix` is all 0xFF (no such key).
std::string PrefixSuccessor(std::string prefix) {
  while (!prefix.empty()) {
    auto last = static_cast<uint8_t>(prefix.back());
    if (last != 0xFF) {
      prefix.back() = static_cast<char>(last + 1);
      return prefix;
    }
    prefix.pop_back();
  }
  return prefix;
}

Result<std::string_view> ReadLengthPrefixed(std::string_view* in, const char* what) {
  Result<uint64_t> n = codec::DecodeUvarint(in);
  if (!n.ok()) return n.status().WithContext(what);
  if (*n > in->size()) return Corruption(std::string(what) + ": length out of range");
  std::string_view bytes = in->substr(0, static_cast<size_t>(*n));
  in->remove_prefix(static_cast<size_t>(*n));
  return bytes;
}

}  // namespace

TableId EntryTableId(std::string_view raw_key, TableId fallback) {
  Result<TableId> id = codec::DecodeTableId(raw_key);
  return id.ok() ? *id : fallback;
}

void AppendStoreKey(uint64_t store_sub_id, TableId table_id, const RawKvEntry& entry,
                    std::string* out) {
  out->reserve(out->size() + kStoreKeyHeaderLength + entry.key.size());
  AppendBe64(store_sub_id, out);
  AppendBe64(FlipTable(table_id), out);
  AppendBe64(entry.commit_ts.value(), out);
  AppendBe64(entry.start_ts.value(), out);
  out->push_back(static_cast<char>(entry.dml_order()));
  out->append(entry.key);
}

void AppendStoreValue(const RawKvEntry& entry, std::string* out) {
  out->reserve(out->size() + 2 + 10 + 10 + entry.value.size() + 10 + entry.old_value.size());
  out->push_back(static_cast<char>(kValueFormatVersion));
  out->push_back(static_cast<char>(entry.op));
  codec::EncodeUvarint(entry.region_id.value(), out);
  codec::EncodeUvarint(entry.value.size(), out);
  out->append(entry.value);
  codec::EncodeUvarint(entry.old_value.size(), out);
  out->append(entry.old_value);
}

Result<StoreKey> DecodeStoreKey(std::string_view bytes) {
  if (bytes.size() < kStoreKeyHeaderLength) return Corruption("store key: too short");
  const char* p = bytes.data();
  StoreKey key;
  key.store_sub_id = LoadBe64(p);
  key.table_id = TableId(static_cast<int64_t>(LoadBe64(p + 8) ^ kSignBit));
  key.commit_ts = Ts(LoadBe64(p + 16));
  key.start_ts = Ts(LoadBe64(p + 24));
  auto order = static_cast<uint8_t>(p[32]);
  if (order < static_cast<uint8_t>(DmlOrder::kDelete) ||
      order > static_cast<uint8_t>(DmlOrder::kInsert)) {
    return Corruption("store key: bad dml order " + std::to_string(order));
  }
  key.dml_order = static_cast<DmlOrder>(order);
  key.raw_key = bytes.substr(kStoreKeyHeaderLength);
  return key;
}

Status DecodeEntry(std::string_view key_bytes, std::string_view value_bytes, RawKvEntry* out) {
  ASSIGN_OR_RETURN(StoreKey key, DecodeStoreKey(key_bytes));
  std::string_view in = value_bytes;
  if (in.size() < 2) return Corruption("store value: too short");
  if (static_cast<uint8_t>(in[0]) != kValueFormatVersion) {
    return Corruption("store value: unknown format version " +
                      std::to_string(static_cast<uint8_t>(in[0])));
  }
  auto op = static_cast<uint8_t>(in[1]);
  if (op != static_cast<uint8_t>(KvOp::kPut) && op != static_cast<uint8_t>(KvOp::kDelete)) {
    return Corruption("store value: bad op " + std::to_string(op));
  }
  in.remove_prefix(2);
  Result<uint64_t> region = codec::DecodeUvarint(&in);
  if (!region.ok()) return region.status().WithContext("store value: region id");
  ASSIGN_OR_RETURN(std::string_view value, ReadLengthPrefixed(&in, "store value: value"));
  ASSIGN_OR_RETURN(std::string_view old_value, ReadLengthPrefixed(&in, "store value: old value"));
  if (!in.empty()) return Corruption("store value: trailing bytes");

  out->op = static_cast<KvOp>(op);
  out->key.assign(key.raw_key);
  out->value.assign(value);
  out->old_value.assign(old_value);
  out->start_ts = key.start_ts;
  out->commit_ts = key.commit_ts;
  out->region_id = RegionId(*region);
  if (out->dml_order() != key.dml_order) {
    return Corruption("store value: op and old value disagree with the key's dml order");
  }
  return Status::Ok();
}

std::string SubscriptionPrefix(uint64_t store_sub_id) {
  std::string out;
  AppendBe64(store_sub_id, &out);
  return out;
}

std::string SubscriptionEnd(uint64_t store_sub_id) {
  return PrefixSuccessor(SubscriptionPrefix(store_sub_id));
}

std::string CommitTsBound(uint64_t store_sub_id, TableId table_id, Ts ts) {
  std::string out = TablePrefixOf(store_sub_id, table_id);
  AppendBe64(ts.value(), &out);
  return out;
}

std::string CommitTsUpperBound(uint64_t store_sub_id, TableId table_id, Ts ts) {
  if (ts.value() == kMaxTs) return TableEnd(store_sub_id, table_id);
  return CommitTsBound(store_sub_id, table_id, Ts(ts.value() + 1));
}

std::string TableEnd(uint64_t store_sub_id, TableId table_id) {
  return PrefixSuccessor(TablePrefixOf(store_sub_id, table_id));
}

std::string StartTsUpperBound(uint64_t store_sub_id, TableId table_id, Ts commit_ts, Ts start_ts) {
  if (start_ts.value() == kMaxTs) return CommitTsUpperBound(store_sub_id, table_id, commit_ts);
  std::string out = CommitTsBound(store_sub_id, table_id, commit_ts);
  AppendBe64(start_ts.value() + 1, &out);
  return out;
}

}  // namespace sluice::eventstore
