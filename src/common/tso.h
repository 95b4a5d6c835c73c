// TSO helpers: a TSO is (physical_ms << 18) | logical, as PD composes it.
#pragma once

#include <chrono>
#include <cstdint>

#include "common/strong_id.h"

namespace sluice::tso {

inline constexpr int kLogicalBits = 18;
inline constexpr uint64_t kLogicalMask = (uint64_t{1} << kLogicalBits) - 1;

constexpr Ts Compose(int64_t physical_ms, int64_t logical) {
  return Ts((static_cast<uint64_t>(physical_ms) << kLogicalBits) |
            (static_cast<uint64_t>(logical) & kLogicalMask));
}
constexpr int64_t Physical(Ts ts) { return static_cast<int64_t>(ts.value() >> kLogicalBits); }
constexpr int64_t Logical(Ts ts) { return static_cast<int64_t>(ts.value() & kLogicalMask); }

// Whether a lock taken at `lock_ts` with a TTL of `ttl_ms` has expired by
// `now`, as TiKV judges it: its physical time plus the TTL is before now's.
constexpr bool TtlExpired(Ts lock_ts, uint64_t ttl_ms, Ts now) {
  return Physical(lock_ts) + static_cast<int64_t>(ttl_ms) < Physical(now);
}

// Wall time of the physical part.
inline std::chrono::system_clock::time_point ToWallTime(Ts ts) {
  return std::chrono::system_clock::time_point(std::chrono::milliseconds(Physical(ts)));
}
// The smallest TSO at a wall time (logical 0).
inline Ts FromWallTime(std::chrono::system_clock::time_point t) {
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
  return Compose(ms, 0);
}

// The i-th timestamp (0-based) of a batch of `count` whose response carried
// `last` as its largest logical value (pd tso_dispatcher semantics).
constexpr Ts BatchElement(Ts last, uint32_t count, uint32_t i, uint32_t suffix_bits = 0) {
  uint64_t first = last.value() - (static_cast<uint64_t>(count - 1) << suffix_bits);
  return Ts(first + (static_cast<uint64_t>(i) << suffix_bits));
}

}  // namespace sluice::tso
