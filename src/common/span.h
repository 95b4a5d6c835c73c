// Key spans: half-open ranges [start, end) over byte-string keys, and the
// table record span that TiCDC subscribes to for a table. Value types with
// no threading concerns; the free functions are pure.
#pragma once

#include <compare>
#include <string>
#include <string_view>

#include "common/status.h"
#include "common/strong_id.h"

namespace sluice {

// [start, end) over keys ordered bytewise. An empty `start` is the beginning
// of the key space; an empty `end` is +infinity. A span is empty (contains no
// key) when `end` is non-empty and not greater than `start`.
//
// A Span is either raw (TiDB key bytes) or comparable (memcomparable form, as
// PD region boundaries and CDC requests use); the type does not say which, so
// names of variables and functions do.
struct Span {
  std::string start;
  std::string end;

  bool IsEmpty() const { return !end.empty() && start >= end; }
  bool Contains(std::string_view key) const { return start <= key && (end.empty() || key < end); }
  // Whether the two spans share at least one key.
  bool Overlaps(const Span& other) const;
  // Whether every key of `other` is in this span (true for an empty `other`).
  bool Covers(const Span& other) const;

  // "[start, end)" with both keys passed through Redact(), so it is safe to
  // log; "-inf" / "+inf" stand for the open ends.
  std::string ToString() const;

  friend bool operator==(const Span&, const Span&) = default;
  // Orders by start, then by end with an empty end (+inf) greatest.
  friend std::strong_ordering operator<=>(const Span& a, const Span& b);
};

// The intersection of two spans. It IsEmpty() when they do not overlap.
Span Intersect(const Span& a, const Span& b);

// Compares two span end keys where an empty key is +infinity.
std::strong_ordering CompareEndKeys(std::string_view a, std::string_view b);

// 't' + the 8-byte big-endian of (uint64(id) XOR 1 << 63) (TiDB
// tablecodec.EncodeTablePrefix).
std::string TablePrefix(TableId id);

// The raw span TiCDC subscribes to for a table: [t{id}_r, t{id}_s), every
// record (row) key of the table and no index key.
Span TableRecordSpan(TableId id);

// Memcomparable-encodes both ends (memcomparable::EncodeBytes); an empty end
// stays empty, so open ends stay open and key order is preserved.
Span ToComparable(const Span& raw);

// The inverse of ToComparable. Returns Corruption if a non-empty end is not
// exactly one memcomparable byte string.
Result<Span> FromComparable(const Span& comparable);

}  // namespace sluice
