#include "event/events.h"

namespace sluice::event {

std::string_view RowKindName(RowKind kind) {
  switch (kind) {
    case RowKind::kInsert:
      return "insert";
    case RowKind::kUpdate:
      return "update";
    case RowKind::kDelete:
      return "delete";
  }
  return "unknown";
}

namespace {

size_t RowBytes(const std::vector<codec::Datum>& row) {
  size_t n = 0;
  for (const codec::Datum& d : row) {
    switch (d.kind()) {
      case codec::DatumKind::kNull:
        break;
      case codec::DatumKind::kBytes:
      case codec::DatumKind::kJson:
      case codec::DatumKind::kDecimal:
      case codec::DatumKind::kVectorFloat32:
        n += d.bytes().size();
        break;
      default:
        n += 8;
    }
  }
  return n;
}

}  // namespace

size_t RowChange::ApproximateBytes() const { return RowBytes(row) + RowBytes(pre_row); }

size_t DmlEvent::ApproximateBytes() const {
  size_t n = 0;
  for (const RowChange& r : rows) n += r.ApproximateBytes();
  return n;
}

void DmlEvent::PostFlush() {
  if (flushed_.exchange(true)) return;
  for (auto& fn : post_flush_) fn();
  post_flush_.clear();
}

}  // namespace sluice::event
