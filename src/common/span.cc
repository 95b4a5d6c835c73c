#include "common/span.h"

#include <algorithm>

#include "common/logging.h"
#include "common/memcomparable.h"

namespace sluice {

std::strong_ordering CompareEndKeys(std::string_view a, std::string_view b) {
  if (a.empty() || b.empty()) {
    // Empty is +inf; two empties are equal.
    return a.empty() <=> b.empty();
  }
  return a <=> b;
}

std::strong_ordering operator<=>(const Span& a, const Span& b) {
  if (auto c = a.start <=> b.start; c != 0) return c;
  return CompareEndKeys(a.end, b.end);
}

bool Span::Overlaps(const Span& other) const {
  if (IsEmpty() || other.IsEmpty()) return false;
  return (other.end.empty() || start < other.end) && (end.empty() || other.start < end);
}

bool Span::Covers(const Span& other) const {
  if (other.IsEmpty()) return true;
  return start <= other.start && CompareEndKeys(other.end, end) <= 0;
}

std::string Span::ToString() const {
  std::string out = "[";
  out += start.empty() ? std::string("-inf") : Redact(start);
  out += ", ";
  out += end.empty() ? std::string("+inf") : Redact(end);
  out += ")";
  return out;
}

Span Intersect(const Span& a, const Span& b) {
  Span out;
  out.start = std::max(a.start, b.start);
  out.end = CompareEndKeys(a.end, b.end) <= 0 ? a.end : b.end;
  if (out.IsEmpty()) out.end = out.start;  // One canonical empty form.
  return out;
}

std::string TablePrefix(TableId id) {
  uint64_t u = static_cast<uint64_t>(id.value()) ^ (uint64_t{1} << 63);
  std::string out(9, '\0');
  out[0] = 't';
  for (int i = 0; i < 8; ++i) {
    out[1 + i] = static_cast<char>(u >> (56 - 8 * i));
  }
  return out;
}

Span TableRecordSpan(TableId id) {
  std::string prefix = TablePrefix(id);
  return Span{prefix + "_r", prefix + "_s"};
}

Span ToComparable(const Span& raw) {
  Span out;
  if (!raw.start.empty()) memcomparable::EncodeBytes(raw.start, &out.start);
  if (!raw.end.empty()) memcomparable::EncodeBytes(raw.end, &out.end);
  return out;
}

Result<Span> FromComparable(const Span& comparable) {
  Span out;
  if (!comparable.start.empty()) {
    ASSIGN_OR_RETURN(out.start, memcomparable::DecodeWhole(comparable.start));
  }
  if (!comparable.end.empty()) {
    ASSIGN_OR_RETURN(out.end, memcomparable::DecodeWhole(comparable.end));
  }
  return out;
}

}  // namespace sluice
