// What the seeded interleaving tests share: the seed list they run
// (SLUICE_INTERLEAVING_SEEDS, e.g. "1-5000" or "7,12,40-50") and a scope
// that silences logging while thousands of seeds run, and their random
// source. Test-only;
// thread-compatible.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "common/logging.h"

namespace sluice::dispatchermanager::testing {

// Parses "N", "A-B" and comma-separated lists of them into *seeds; false
// for anything else or an empty list.
inline bool ParseSeeds(const std::string& spec, std::vector<uint64_t>* seeds) {
  std::istringstream in(spec);
  for (std::string item; std::getline(in, item, ',');) {
    if (item.empty()) return false;
    const size_t dash = item.find('-');
    char* end = nullptr;
    const uint64_t lo = std::strtoull(item.c_str(), &end, 10);
    uint64_t hi = lo;
    if (dash == std::string::npos) {
      if (*end != '\0') return false;
    } else {
      if (end != item.c_str() + dash) return false;
      hi = std::strtoull(item.c_str() + dash + 1, &end, 10);
      if (*end != '\0' || dash + 1 == item.size() || hi < lo) return false;
    }
    for (uint64_t s = lo; s <= hi; ++s) seeds->push_back(s);
  }
  return !seeds->empty();
}

// SLUICE_INTERLEAVING_SEEDS if set and not empty, else `fallback`.
inline std::string SeedSpec(const char* fallback) {
  const char* env = std::getenv("SLUICE_INTERLEAVING_SEEDS");
  return env != nullptr && *env != '\0' ? env : fallback;
}

// A seeded random source, deterministic across standard libraries (no
// std::*_distribution).
class Rng {
 public:
  explicit Rng(uint64_t seed) : engine_(seed) {}
  uint64_t Below(uint64_t n) { return engine_() % n; }
  int64_t Between(int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(Below(static_cast<uint64_t>(hi - lo + 1)));
  }
  bool Percent(int p) { return Below(100) < static_cast<uint64_t>(p); }

 private:
  std::mt19937_64 engine_;
};

// Logging off for the scope's life.
class QuietLogs {
 public:
  QuietLogs() : saved_(logging::GetLevel()) { logging::SetLevel(logging::Level::kOff); }
  ~QuietLogs() { logging::SetLevel(saved_); }
  QuietLogs(const QuietLogs&) = delete;
  QuietLogs& operator=(const QuietLogs&) = delete;

 private:
  const logging::Level saved_;
};

}  // namespace sluice::dispatchermanager::testing
