// Small statistics shared by the benchmarks. Pure functions.
#pragma once

#include <algorithm>
#include <vector>

namespace sluice::bench {

// The median of `v` (the upper one of an even count); 0 for an empty `v`.
inline double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace sluice::bench
