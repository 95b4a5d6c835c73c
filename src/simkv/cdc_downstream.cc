#include "simkv/cdc_downstream.h"

#include <algorithm>

#include "common/logging.h"
#include "common/memcomparable.h"

namespace sluice::simkv {

namespace {

// Decodes the memcomparable prefix of `encoded` (empty stays empty).
bool DecodePrefix(std::string_view encoded, std::string* raw) {
  raw->clear();
  if (encoded.empty()) return true;
  return memcomparable::DecodeBytes(&encoded, raw).ok();
}

// The smaller of two end keys where empty means +inf.
std::string MinEnd(const std::string& a, const std::string& b) {
  if (a.empty()) return b;
  if (b.empty()) return a;
  return std::min(a, b);
}

}  // namespace

RawRange RegionRawRange(const RegionInfo& region) {
  RawRange range;
  // Region boundaries are built by EncodeBytes and always decode.
  DecodePrefix(region.start_key, &range.start);
  DecodePrefix(region.end_key, &range.end);
  return range;
}

RawRange ObservedRange(const DownstreamSpec& spec, const RegionInfo& region) {
  RawRange region_range = RegionRawRange(region);
  RawRange requested;
  if (!DecodePrefix(spec.start_key, &requested.start) ||
      !DecodePrefix(spec.end_key, &requested.end)) {
    LOG_WARN("cdc: region {} request {} has undecodable keys [{}, {}), observing the region",
             spec.region_id.value(), spec.request_id, Redact(spec.start_key), Redact(spec.end_key));
    return region_range;
  }
  RawRange out;
  out.start = std::max(region_range.start, requested.start);
  out.end = MinEnd(region_range.end, requested.end);
  return out;
}

}  // namespace sluice::simkv
