#include "filter/text.h"

#include <array>
#include <cstdint>

namespace sluice::filter::text {
namespace {

enum class MapKind : uint8_t {
  kDelta,    // upper + delta = lower for every rune of [lo, hi].
  kAltEven,  // pairs (even upper, odd lower) over [lo, hi].
  kAltOdd,   // pairs (odd upper, even lower) over [lo, hi].
};

struct CaseRange {
  char32_t lo;
  char32_t hi;
  int32_t delta;
  MapKind kind;
};

// Upper-to-lower ranges (Unicode simple lowercase mappings). Order matters for
// ToUpperRune: where two upper runes lower to the same rune ('K' and KELVIN
// SIGN), the first range wins.
constexpr std::array kCaseRanges = {
    CaseRange{0x41, 0x5A, 32, MapKind::kDelta},
    CaseRange{0xC0, 0xD6, 32, MapKind::kDelta},
    CaseRange{0xD8, 0xDE, 32, MapKind::kDelta},
    CaseRange{0x100, 0x12F, 0, MapKind::kAltEven},
    CaseRange{0x132, 0x137, 0, MapKind::kAltEven},
    CaseRange{0x139, 0x148, 0, MapKind::kAltOdd},
    CaseRange{0x14A, 0x177, 0, MapKind::kAltEven},
    CaseRange{0x178, 0x178, 0xFF - 0x178, MapKind::kDelta},
    CaseRange{0x179, 0x17E, 0, MapKind::kAltOdd},
    CaseRange{0x386, 0x386, 38, MapKind::kDelta},
    CaseRange{0x388, 0x38A, 37, MapKind::kDelta},
    CaseRange{0x38C, 0x38C, 64, MapKind::kDelta},
    CaseRange{0x38E, 0x38F, 63, MapKind::kDelta},
    CaseRange{0x391, 0x3A1, 32, MapKind::kDelta},
    CaseRange{0x3A3, 0x3AB, 32, MapKind::kDelta},
    CaseRange{0x400, 0x40F, 80, MapKind::kDelta},
    CaseRange{0x410, 0x42F, 32, MapKind::kDelta},
    CaseRange{0x460, 0x481, 0, MapKind::kAltEven},
    CaseRange{0x48A, 0x4BF, 0, MapKind::kAltEven},
    CaseRange{0x4C0, 0x4C0, 15, MapKind::kDelta},
    CaseRange{0x4C1, 0x4CE, 0, MapKind::kAltOdd},
    CaseRange{0x4D0, 0x52F, 0, MapKind::kAltEven},
    CaseRange{0x531, 0x556, 48, MapKind::kDelta},
    CaseRange{0x1E00, 0x1E95, 0, MapKind::kAltEven},
    CaseRange{0x1EA0, 0x1EFF, 0, MapKind::kAltEven},
    CaseRange{0x2160, 0x216F, 16, MapKind::kDelta},
    CaseRange{0x24B6, 0x24CF, 26, MapKind::kDelta},
    CaseRange{0xFF21, 0xFF3A, 32, MapKind::kDelta},
    // Runes whose lower case is also the lower case of an earlier range.
    CaseRange{0x130, 0x130, 0x69 - 0x130, MapKind::kDelta},
    CaseRange{0x1E9E, 0x1E9E, 0xDF - 0x1E9E, MapKind::kDelta},
    CaseRange{0x2126, 0x2126, 0x3C9 - 0x2126, MapKind::kDelta},
    CaseRange{0x212A, 0x212A, 0x6B - 0x212A, MapKind::kDelta},
    CaseRange{0x212B, 0x212B, 0xE5 - 0x212B, MapKind::kDelta},
};

struct RunePair {
  char32_t from;
  char32_t to;
};

// Lower-case runes whose upper case is not the inverse of a range above.
constexpr std::array kExtraUpper = {
    RunePair{0xB5, 0x39C},   // MICRO SIGN
    RunePair{0xFF, 0x178},   // y WITH DIAERESIS
    RunePair{0x131, 0x49},   // DOTLESS i
    RunePair{0x17F, 0x53},   // LONG s
    RunePair{0x3C2, 0x3A3},  // FINAL SIGMA
};

// Third members of Go's case-folding orbits, keyed by the lower-case rune.
constexpr std::array kExtraFold = {
    RunePair{0x6B, 0x212A},   // k, KELVIN SIGN
    RunePair{0x73, 0x17F},    // s, LONG s
    RunePair{0xE5, 0x212B},   // a WITH RING, ANGSTROM SIGN
    RunePair{0x3C9, 0x2126},  // omega, OHM SIGN
    RunePair{0x3C3, 0x3C2},   // sigma, FINAL SIGMA
    RunePair{0x3BC, 0xB5},    // mu, MICRO SIGN
};

bool IsContinuation(unsigned char b) { return (b & 0xC0) == 0x80; }

}  // namespace

char32_t DecodeRune(std::string_view s, size_t* pos) {
  const size_t i = *pos;
  const auto b0 = static_cast<unsigned char>(s[i]);
  if (b0 < 0x80) {
    *pos = i + 1;
    return b0;
  }
  size_t len = 0;
  char32_t rune = 0;
  char32_t min = 0;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    len = 2, rune = b0 & 0x1F, min = 0x80;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    len = 3, rune = b0 & 0x0F, min = 0x800;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    len = 4, rune = b0 & 0x07, min = 0x10000;
  }
  if (len == 0 || i + len > s.size()) {
    *pos = i + 1;
    return kReplacementRune;
  }
  for (size_t k = 1; k < len; ++k) {
    const auto b = static_cast<unsigned char>(s[i + k]);
    if (!IsContinuation(b)) {
      *pos = i + 1;
      return kReplacementRune;
    }
    rune = (rune << 6) | (b & 0x3F);
  }
  if (rune < min || rune > 0x10FFFF || (rune >= 0xD800 && rune <= 0xDFFF)) {
    *pos = i + 1;
    return kReplacementRune;
  }
  *pos = i + len;
  return rune;
}

void AppendRune(char32_t rune, std::string* out) {
  if (rune > 0x10FFFF || (rune >= 0xD800 && rune <= 0xDFFF)) rune = kReplacementRune;
  if (rune < 0x80) {
    out->push_back(static_cast<char>(rune));
  } else if (rune < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (rune >> 6)));
    out->push_back(static_cast<char>(0x80 | (rune & 0x3F)));
  } else if (rune < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (rune >> 12)));
    out->push_back(static_cast<char>(0x80 | ((rune >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (rune & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (rune >> 18)));
    out->push_back(static_cast<char>(0x80 | ((rune >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((rune >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (rune & 0x3F)));
  }
}

bool IsValidUtf8(std::string_view s) {
  size_t pos = 0;
  while (pos < s.size()) {
    const size_t start = pos;
    if (DecodeRune(s, &pos) == kReplacementRune) {
      // A literal U+FFFD is three bytes; a decoding error advances by one.
      if (pos - start == 1) return false;
    }
  }
  return true;
}

char32_t ToLowerRune(char32_t rune) {
  if (rune < 0x80) return (rune >= 'A' && rune <= 'Z') ? rune + 32 : rune;
  for (const CaseRange& r : kCaseRanges) {
    if (rune < r.lo || rune > r.hi) continue;
    switch (r.kind) {
      case MapKind::kDelta:
        return static_cast<char32_t>(static_cast<int32_t>(rune) + r.delta);
      case MapKind::kAltEven:
        return (rune % 2 == 0) ? rune + 1 : rune;
      case MapKind::kAltOdd:
        return (rune % 2 == 1) ? rune + 1 : rune;
    }
  }
  return rune;
}

char32_t ToUpperRune(char32_t rune) {
  if (rune < 0x80) return (rune >= 'a' && rune <= 'z') ? rune - 32 : rune;
  for (const RunePair& p : kExtraUpper) {
    if (p.from == rune) return p.to;
  }
  for (const CaseRange& r : kCaseRanges) {
    if (r.kind == MapKind::kDelta) {
      const auto lo = static_cast<char32_t>(static_cast<int32_t>(r.lo) + r.delta);
      const auto hi = static_cast<char32_t>(static_cast<int32_t>(r.hi) + r.delta);
      if (rune >= lo && rune <= hi) {
        return static_cast<char32_t>(static_cast<int32_t>(rune) - r.delta);
      }
      continue;
    }
    if (rune < r.lo || rune > r.hi) continue;
    const bool lower = r.kind == MapKind::kAltEven ? rune % 2 == 1 : rune % 2 == 0;
    return lower ? rune - 1 : rune;
  }
  return rune;
}

char32_t ExtraFoldRune(char32_t lower) {
  for (const RunePair& p : kExtraFold) {
    if (p.from == lower) return p.to;
  }
  return 0;
}

std::string_view FoldCase(std::string_view s, std::string* buf) {
  bool ascii = true;
  bool has_upper = false;
  for (char c : s) {
    if (static_cast<unsigned char>(c) >= 0x80) {
      ascii = false;
      break;
    }
    has_upper = has_upper || (c >= 'A' && c <= 'Z');
  }
  if (ascii) {
    if (!has_upper) return s;
    buf->assign(s);
    for (char& c : *buf) {
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
    }
    return *buf;
  }
  buf->clear();
  buf->reserve(s.size());
  size_t pos = 0;
  while (pos < s.size()) AppendRune(ToLowerRune(DecodeRune(s, &pos)), buf);
  return *buf;
}

std::string ToLower(std::string_view s) {
  std::string buf;
  std::string_view folded = FoldCase(s, &buf);
  if (folded.data() == buf.data()) return buf;
  return std::string(folded);
}

}  // namespace sluice::filter::text
