// TiDB meta ('m') structure keys (pkg/structure, tablecodec.EncodeMetaKey):
//   string     'm' + EncodeBytes(key) + EncodeUint('s')
//   hash field 'm' + EncodeBytes(key) + EncodeUint('h') + EncodeBytes(field)
//   hash meta  'm' + EncodeBytes(key) + EncodeUint('H')
//   list item  'm' + EncodeBytes(key) + EncodeUint('l') + EncodeInt(index)
//   list meta  'm' + EncodeBytes(key) + EncodeUint('L')
// EncodeBytes is the memcomparable encoding. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace sluice::codec {

inline constexpr char kMetaPrefix = 'm';

namespace meta_type {
inline constexpr char kStringMeta = 'S';
inline constexpr char kStringData = 's';
inline constexpr char kHashMeta = 'H';
inline constexpr char kHashData = 'h';
inline constexpr char kListMeta = 'L';
inline constexpr char kListData = 'l';
}  // namespace meta_type

std::string EncodeMetaStringKey(std::string_view key);
std::string EncodeMetaHashFieldKey(std::string_view key, std::string_view field);
std::string EncodeMetaHashMetaKey(std::string_view key);
std::string EncodeMetaListItemKey(std::string_view key, int64_t index);
std::string EncodeMetaListMetaKey(std::string_view key);

struct MetaKey {
  char type = 0;      // one of meta_type
  std::string key;    // the structure's key, e.g. "DBs" or "DB:2"
  std::string field;  // hash data only, e.g. "Table:100"
  int64_t index = 0;  // list data only

  friend bool operator==(const MetaKey&, const MetaKey&) = default;
};

bool IsMetaKey(std::string_view raw);

// Decodes any of the five key shapes above. Corruption on a missing 'm'
// prefix, an unknown type flag, bad memcomparable bytes or trailing bytes.
Result<MetaKey> DecodeMetaKey(std::string_view raw);

}  // namespace sluice::codec
