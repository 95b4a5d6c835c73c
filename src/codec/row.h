// Row decoding shared by row formats v1 and v2: the description of the
// columns a caller wants, conversion of flattened datums to column kinds and
// the rules for columns missing from a row value. DecodeRow picks the format
// from the first byte (128 = v2, otherwise v1). Pure functions;
// thread-safe.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "codec/datum.h"
#include "codec/tablecodec.h"
#include "common/status.h"

namespace sluice::codec {

// One column a decoder should produce, in output order.
struct ColumnSpec {
  int64_t id = 0;
  uint8_t type = 0;          // mysql_type code
  bool is_unsigned = false;  // mysql_flag::kUnsigned
  int fsp = 0;               // TIME/DATETIME/TIMESTAMP fraction digits (0..6)
  int flen = 0;              // declared length (BIT width in bits)
  Datum default_value{};     // used when the row value lacks the column
  bool is_handle = false;    // the column is (part of) the primary-key handle
  int handle_offset = 0;     // its position among the common-handle datums
};

// Converts a datum decoded from the key or value form (times as kUint64,
// durations and years as integers, FLOAT as float64...) to the kind the
// column type implies. Null stays null. Corruption when the kind cannot hold
// a value of the column type; InvalidArgument for an unsupported type.
Status ConvertDatumForColumn(const ColumnSpec& col, Datum* d);

// Value of a column absent from the row value (or stored as null):
// a handle column takes the handle from the key (int handle; for a common
// handle the datum at handle_offset, except string columns whose key bytes
// are collation sort keys); otherwise null if `stored_null`, else the
// column default.
Status FillMissingColumn(const ColumnSpec& col, const RowHandle& handle, bool stored_null,
                         Datum* out);

// First byte of a row format v2 value.
inline constexpr uint8_t kRowV2Version = 128;

inline bool IsRowV2(std::string_view value) {
  return !value.empty() && static_cast<uint8_t>(value[0]) == kRowV2Version;
}

// Decodes a row value of either format into one datum per column of `cols`
// (resizing `out`). Byte payloads may be views into `value` (and into the
// handle's bytes). An empty value (a delete) is Corruption here.
Status DecodeRow(std::string_view value, std::span<const ColumnSpec> cols, const RowHandle& handle,
                 std::vector<Datum>* out);

}  // namespace sluice::codec
