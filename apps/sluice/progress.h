// The playground's live status line: how much of a phase is done, the
// upstream write rate and the changefeed's checkpoint lag. Header-only so
// that apps/sluice/progress_test.cc checks the same code the binary prints.
// Pure functions: callable from any thread.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>

#include "common/strong_id.h"
#include "common/tso.h"

namespace sluice::playground {

// How much of the lag at the start of a catch-up (checkpoint `first`, all
// writes done by `target`) the checkpoint has closed, in [0, 1] by the TSO's
// physical time.
inline double CatchUpFraction(Ts first, Ts target, Ts checkpoint) {
  if (checkpoint >= target) return 1.0;
  if (first >= target || checkpoint <= first) return 0.0;
  const double total = static_cast<double>(tso::Physical(target) - tso::Physical(first));
  const double closed = static_cast<double>(tso::Physical(checkpoint) - tso::Physical(first));
  return total > 0 ? std::clamp(closed / total, 0.0, 1.0) : 0.0;
}

// `fraction` is clamped to [0, 1]; `rows_per_s` is the upstream rate while
// a workload writes (nullopt while nothing is written upstream).
inline std::string ProgressLine(std::string_view phase, double fraction,
                                std::optional<double> rows_per_s, double lag_s) {
  constexpr int kWidth = 30;
  fraction = std::clamp(fraction, 0.0, 1.0);
  const int done = static_cast<int>(fraction * kWidth);
  const std::string rate = rows_per_s.has_value()
                               ? fmt::format("{:8.0f} rows/s upstream", *rows_per_s)
                               : std::string("upstream idle          ");
  return fmt::format("  {:<10} [{}{}] {:3d}%  {}  checkpoint lag {:6.2f}s", phase,
                     std::string(done, '#'), std::string(kWidth - done, '.'),
                     static_cast<int>(fraction * 100), rate, lag_s);
}

}  // namespace sluice::playground
