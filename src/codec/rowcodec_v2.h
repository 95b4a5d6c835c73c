// Row format v2 (pkg/util/rowcodec):
//
//   VER=128 | FLAGS | not-null count u16 LE | null count u16 LE
//   | column ids (not-null ascending, then null ascending; u8 or u32 LE)
//   | end offsets of the not-null values (u16 or u32 LE)
//   | data | [checksum header, u32 LE checksum, optional u32 LE extra]
//
// FLAGS bit 0 = large (u32 ids and offsets), bit 1 = has checksum.
// Parsing checks every count, id order, offset and the exact total length;
// nothing is read outside the input. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "codec/datum.h"
#include "codec/row.h"
#include "codec/tablecodec.h"
#include "common/status.h"

namespace sluice::codec {

namespace row_v2_flag {
inline constexpr uint8_t kLarge = 0x01;
inline constexpr uint8_t kChecksum = 0x02;
}  // namespace row_v2_flag

inline constexpr uint8_t kRowV2ChecksumVersionMask = 0x07;
inline constexpr uint8_t kRowV2ChecksumExtraFlag = 0x08;

// A parsed, validated v2 row; views into the value it was parsed from.
class RowV2View {
 public:
  static Status Parse(std::string_view value, RowV2View* out);

  bool large() const { return large_; }
  size_t num_not_null() const { return num_not_null_; }
  size_t num_null() const { return num_null_; }
  // Ids of all stored columns: [0, num_not_null) not-null, then the nulls.
  int64_t column_id(size_t i) const;
  // Data of the i-th not-null column.
  std::string_view column_data(size_t i) const;
  // Index of `id` among the not-null columns, or -1. Sets *is_null when the
  // id is in the null list.
  int Find(int64_t id, bool* is_null) const;

  // Like Find for a sequence of lookups: cheap when ids come in ascending
  // order (a merge over the sorted id lists), still correct otherwise.
  class Finder {
   public:
    explicit Finder(const RowV2View& row) : row_(row), null_pos_(row.num_not_null_) {}
    int Find(int64_t id, bool* is_null);

   private:
    const RowV2View& row_;
    int64_t last_id_ = -1;
    size_t not_null_pos_ = 0;
    size_t null_pos_;
  };

  bool has_checksum() const { return has_checksum_; }
  uint8_t checksum_header() const { return checksum_header_; }
  int checksum_version() const { return checksum_header_ & kRowV2ChecksumVersionMask; }
  uint32_t checksum() const { return checksum_; }
  bool has_extra_checksum() const { return (checksum_header_ & kRowV2ChecksumExtraFlag) != 0; }
  uint32_t extra_checksum() const { return extra_checksum_; }
  // The row bytes the checksum covers (everything before the checksum).
  std::string_view raw_row() const { return raw_row_; }

 private:
  Status ParseLayout(std::string_view value);
  Status ValidateLayout() const;
  Status ParseChecksum(std::string_view tail);
  uint32_t EndOffset(size_t i) const;
  int Search(size_t lo, size_t hi, int64_t id) const;

  bool large_ = false;
  size_t num_not_null_ = 0;
  size_t num_null_ = 0;
  const char* ids_ = nullptr;
  const char* offsets_ = nullptr;
  std::string_view data_;
  bool has_checksum_ = false;
  uint8_t checksum_header_ = 0;
  uint32_t checksum_ = 0;
  uint32_t extra_checksum_ = 0;
  std::string_view raw_row_;
};

// Decodes one column's v2 bytes according to its type (the slice length
// gives the width of integers). Strings, JSON and vectors are views.
Status DecodeRowV2Value(const ColumnSpec& col, std::string_view data, Datum* out);

// Decodes a v2 row into one datum per column of `cols` (see DecodeRow).
Status DecodeRowV2(std::string_view value, std::span<const ColumnSpec> cols,
                   const RowHandle& handle, std::vector<Datum>* out);

// Appends the v2 bytes of a non-null datum (smallest integer width, floats
// order-preserving BE, decimals with precision and frac bytes, times packed).
Status EncodeRowV2Value(const Datum& d, std::string* out);

struct RowV2EncodeOptions {
  bool force_large = false;
  // 0 = no checksum; 1 = CRC32 over the row, header byte and row key;
  // 2 = the same with the encoded handle instead of the key.
  int checksum_version = 0;
  std::string_view checksum_key{};  // row key (v1) or encoded handle (v2)
  bool with_extra_checksum = false;
  uint32_t extra_checksum = 0;
};

// Encodes a row of (column id, datum) pairs; null datums go to the null
// list. InvalidArgument for duplicate or out-of-range ids, sentinel datums
// or a bad checksum version.
Status EncodeRowV2(std::span<const int64_t> col_ids, std::span<const Datum> values,
                   std::string* out, const RowV2EncodeOptions& options = {});

// CRC32 over the raw row bytes, the checksum header byte and `key_or_handle`
// (checksum versions 1 and 2).
uint32_t ComputeRowV2Checksum(std::string_view raw_row, uint8_t checksum_header,
                              std::string_view key_or_handle);

}  // namespace sluice::codec
