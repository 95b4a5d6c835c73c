// WorkloadRng: the workload's deterministic random source. The same seed gives
// the same sequence on every platform and standard library (unlike the
// <random> distributions, whose algorithms are implementation-defined), so a
// seeded workload replays bit for bit. Not thread-safe: one owner.
#pragma once

#include <cstdint>
#include <string>

namespace sluice::simkv {

class WorkloadRng {
 public:
  explicit WorkloadRng(uint64_t seed) {
    // xoshiro256** seeded through SplitMix64, as its authors recommend.
    uint64_t x = seed;
    for (uint64_t& s : s_) s = SplitMix64(&x);
  }

  uint64_t Next() {
    uint64_t result = Rotl(s_[1] * 5, 7) * 9;
    uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = Rotl(s_[3], 45);
    return result;
  }

  // Uniform in [0, n); 0 when n is 0. Lemire's multiply-shift (the tiny bias
  // for huge n does not matter here).
  uint64_t Uniform(uint64_t n) {
    if (n == 0) return 0;
    return static_cast<uint64_t>((static_cast<unsigned __int128>(Next()) * n) >> 64);
  }

  // Uniform in [lo, hi] (inclusive); lo when hi < lo.
  int64_t Range(int64_t lo, int64_t hi) {
    if (hi <= lo) return lo;
    uint64_t span = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);
    uint64_t off = span == UINT64_MAX ? Next() : Uniform(span + 1);
    return static_cast<int64_t>(static_cast<uint64_t>(lo) + off);
  }

  // A double in [0, 1) with 53 random bits.
  double Unit() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }

  // True with probability p (p <= 0 never, p >= 1 always).
  bool Chance(double p) { return p > 0 && (p >= 1 || Unit() < p); }

  // `n` characters drawn from [a-z0-9].
  std::string Text(size_t n) {
    static constexpr char kAlphabet[] = "abcdefghijklmnopqrstuvwxyz0123456789";
    std::string out(n, 'a');
    for (char& c : out) c = kAlphabet[Uniform(sizeof(kAlphabet) - 1)];
    return out;
  }

  // `n` arbitrary bytes.
  std::string Bytes(size_t n) {
    std::string out(n, '\0');
    for (char& c : out) c = static_cast<char>(Next() & 0xFF);
    return out;
  }

 private:
  static uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  static uint64_t SplitMix64(uint64_t* x) {
    uint64_t z = (*x += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }

  uint64_t s_[4];
};

}  // namespace sluice::simkv
