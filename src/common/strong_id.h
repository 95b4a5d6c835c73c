// StrongId<Tag, Rep>: a value type that cannot be mixed up with another id of
// the same representation (a RegionId is not a TableId). Plain value, no
// threading concerns.
#pragma once

#include <compare>
#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <utility>

namespace sluice {

template <typename Tag, typename Rep>
class StrongId {
 public:
  using rep_type = Rep;
  constexpr StrongId() = default;
  constexpr explicit StrongId(Rep v) : v_(v) {}
  constexpr Rep value() const { return v_; }
  constexpr auto operator<=>(const StrongId&) const = default;
  friend std::ostream& operator<<(std::ostream& os, const StrongId& id) { return os << id.v_; }

 private:
  Rep v_{};
};

// A TSO timestamp: physical_ms << 18 | logical. Ordered like the integer.
struct TsTag {};
using Ts = StrongId<TsTag, uint64_t>;

struct RegionIdTag {};
using RegionId = StrongId<RegionIdTag, uint64_t>;
struct StoreIdTag {};
using StoreId = StrongId<StoreIdTag, uint64_t>;
struct TableIdTag {};
using TableId = StrongId<TableIdTag, int64_t>;
struct SubscriptionIdTag {};
using SubscriptionId = StrongId<SubscriptionIdTag, uint64_t>;
struct MaintainerEpochTag {};
using MaintainerEpoch = StrongId<MaintainerEpochTag, uint64_t>;

// Node ids are TiCDC-style capture ids (UUID strings); NodeId wraps a string.
class NodeId {
 public:
  NodeId() = default;
  explicit NodeId(std::string v) : v_(std::move(v)) {}
  const std::string& value() const { return v_; }
  bool empty() const { return v_.empty(); }
  auto operator<=>(const NodeId&) const = default;
  friend std::ostream& operator<<(std::ostream& os, const NodeId& id) { return os << id.v_; }

 private:
  std::string v_;
};

// Dispatcher ids are 128-bit (TiCDC uses a GID of two uint64).
struct DispatcherId {
  uint64_t high = 0;
  uint64_t low = 0;
  auto operator<=>(const DispatcherId&) const = default;
  bool IsZero() const { return high == 0 && low == 0; }
  friend std::ostream& operator<<(std::ostream& os, const DispatcherId& id) {
    return os << id.high << "-" << id.low;
  }
};

}  // namespace sluice

template <typename Tag, typename Rep>
struct std::hash<sluice::StrongId<Tag, Rep>> {
  size_t operator()(const sluice::StrongId<Tag, Rep>& id) const noexcept {
    return std::hash<Rep>()(id.value());
  }
};
template <>
struct std::hash<sluice::NodeId> {
  size_t operator()(const sluice::NodeId& id) const noexcept {
    return std::hash<std::string>()(id.value());
  }
};
template <>
struct std::hash<sluice::DispatcherId> {
  size_t operator()(const sluice::DispatcherId& id) const noexcept {
    return std::hash<uint64_t>()(id.high * 0x9E3779B97F4A7C15ULL ^ id.low);
  }
};
