#include "simkv/region_fault_picker.h"

#include <algorithm>
#include <vector>

#include "common/memcomparable.h"

namespace sluice::simkv {

namespace {

// Extra random bytes appended to a start key when the region is unbounded.
constexpr size_t kMaxTailBytes = 8;
// Regions tried before giving up on a split.
constexpr int kSplitAttempts = 8;

// Big-endian unsigned arithmetic on equal-length byte strings (std::string
// compares bytes as unsigned, so `<` is numeric order here).
std::string Subtract(const std::string& a, const std::string& b) {
  std::string out(a.size(), '\0');
  int borrow = 0;
  for (size_t i = a.size(); i-- > 0;) {
    int v = static_cast<uint8_t>(a[i]) - static_cast<uint8_t>(b[i]) - borrow;
    borrow = v < 0 ? 1 : 0;
    out[i] = static_cast<char>(v + 256 * borrow);
  }
  return out;
}

std::string Add(const std::string& a, const std::string& b) {
  std::string out(a.size(), '\0');
  int carry = 0;
  for (size_t i = a.size(); i-- > 0;) {
    int v = static_cast<uint8_t>(a[i]) + static_cast<uint8_t>(b[i]) + carry;
    carry = v >> 8;
    out[i] = static_cast<char>(v & 0xFF);
  }
  return out;
}

std::string One(size_t len) {
  std::string out(len, '\0');
  out.back() = 1;
  return out;
}

std::optional<std::string> DecodeBoundary(const std::string& encoded) {
  if (encoded.empty()) return std::string();
  Result<std::string> raw = memcomparable::DecodeWhole(encoded);
  if (!raw.ok()) return std::nullopt;
  return std::move(raw).value();
}

}  // namespace

std::string RegionFaultPicker::RandomBytes(size_t len) {
  std::string out(len, '\0');
  for (char& c : out) c = static_cast<char>(rng_() & 0xFF);
  return out;
}

std::string RegionFaultPicker::RandomBelow(const std::string& bound) {
  size_t top = 0;
  while (bound[top] == '\0') ++top;
  uint8_t mask = static_cast<uint8_t>(bound[top]);
  for (int shift = 1; shift < 8; shift <<= 1) mask |= mask >> shift;
  for (;;) {  // Rejection sampling; accepts with probability > 1/2.
    std::string r(bound.size(), '\0');
    r[top] = static_cast<char>(rng_() & mask);
    for (size_t i = top + 1; i < r.size(); ++i) r[i] = static_cast<char>(rng_() & 0xFF);
    if (r < bound) return r;
  }
}

std::optional<std::string> RegionFaultPicker::PickSplitKey(const RegionInfo& region) {
  std::optional<std::string> lo = DecodeBoundary(region.start_key);
  std::optional<std::string> hi = DecodeBoundary(region.end_key);
  if (!lo.has_value() || !hi.has_value()) return std::nullopt;
  if (region.end_key.empty()) return *lo + RandomBytes(1 + Uniform(kMaxTailBytes));
  // Pad both to one more byte than the longer and pick uniformly strictly
  // between them as numbers: such a key sorts strictly inside the region.
  size_t len = std::max(lo->size(), hi->size()) + 1;
  std::string lo_raw = *lo;
  size_t zeros = hi->size() - std::min(hi->size(), lo->size());
  lo->resize(len, '\0');
  hi->resize(len, '\0');
  if (*hi <= *lo) {
    // Equal once padded: hi is lo plus `zeros` zero bytes, so only lo plus
    // fewer zero bytes lies between.
    if (zeros < 2) return std::nullopt;
    return lo_raw + std::string(1 + Uniform(zeros - 1), '\0');
  }
  std::string inner = Subtract(Subtract(*hi, *lo), One(len));  // Keys strictly between.
  if (inner == std::string(len, '\0')) return std::nullopt;
  return Add(Add(*lo, One(len)), RandomBelow(inner));
}

std::optional<std::pair<RegionId, std::string>> RegionFaultPicker::PickSplit(const RegionMap& map) {
  std::vector<RegionInfo> regions = map.Scan("", "", 0);
  for (int attempt = 0; attempt < kSplitAttempts && !regions.empty(); ++attempt) {
    const RegionInfo& region = regions[Uniform(regions.size())];
    if (std::optional<std::string> key = PickSplitKey(region)) {
      return std::make_pair(region.id, *std::move(key));
    }
  }
  return std::nullopt;
}

std::optional<std::pair<RegionId, RegionId>> RegionFaultPicker::PickMerge(const RegionMap& map) {
  std::vector<RegionInfo> regions = map.Scan("", "", 0);
  if (regions.size() < 2) return std::nullopt;
  size_t i = Uniform(regions.size() - 1);
  return std::make_pair(regions[i].id, regions[i + 1].id);
}

std::optional<std::pair<RegionId, StoreId>> RegionFaultPicker::PickLeaderTransfer(
    const RegionMap& map) {
  std::vector<RegionInfo> regions = map.Scan("", "", 0);
  if (regions.empty()) return std::nullopt;
  size_t first = Uniform(regions.size());
  for (size_t n = 0; n < regions.size(); ++n) {
    const RegionInfo& region = regions[(first + n) % regions.size()];
    std::vector<StoreId> others;
    for (const Peer& peer : region.peers) {
      if (peer.store_id != region.leader) others.push_back(peer.store_id);
    }
    if (!others.empty()) return std::make_pair(region.id, others[Uniform(others.size())]);
  }
  return std::nullopt;
}

}  // namespace sluice::simkv
