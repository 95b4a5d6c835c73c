#include "codec/decimal.h"

#include <algorithm>
#include <array>
#include <cstdint>

namespace sluice::codec {

namespace {

constexpr int kDigitsPerWord = 9;
constexpr int kWordSize = 4;
constexpr std::array<int, 10> kDigitBytes = {0, 1, 1, 2, 2, 3, 3, 4, 4, 4};
constexpr std::array<uint32_t, 10> kPowers10 = {1,      10,      100,      1000,      10000,
                                                100000, 1000000, 10000000, 100000000, 1000000000};
constexpr int kMaxBinSize = 40;

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

uint32_t DigitsValue(std::string_view digits) {
  uint32_t v = 0;
  for (char c : digits) v = v * 10 + static_cast<uint32_t>(c - '0');
  return v;
}

void AppendGroup(uint32_t value, int nbytes, std::string* out) {
  for (int i = nbytes - 1; i >= 0; --i)
    out->push_back(static_cast<char>((value >> (8 * i)) & 0xFF));
}

// Adds one unit in the last place of a digit string; returns the carry out.
bool IncrementDigits(std::string* digits) {
  for (auto it = digits->rbegin(); it != digits->rend(); ++it) {
    if (*it != '9') {
      ++*it;
      return false;
    }
    *it = '0';
  }
  return true;
}

// Rounds half up (away from zero) or pads the fraction to `frac` digits.
void FitFraction(DecimalParts* parts, int frac) {
  std::string& f = parts->frac_digits;
  if (static_cast<int>(f.size()) <= frac) {
    f.append(static_cast<size_t>(frac) - f.size(), '0');
    return;
  }
  bool round_up = f[static_cast<size_t>(frac)] >= '5';
  f.resize(static_cast<size_t>(frac));
  if (!round_up) return;
  std::string all = parts->int_digits + f;
  if (IncrementDigits(&all)) all.insert(all.begin(), '1');
  parts->int_digits = all.substr(0, all.size() - f.size());
  f = all.substr(all.size() - f.size());
}

bool AllZero(std::string_view digits) {
  return digits.find_first_not_of('0') == std::string_view::npos;
}

// Reads `nbytes` big-endian bytes of a group, XORed with `mask`.
uint32_t ReadGroup(const uint8_t* p, int nbytes, uint8_t mask) {
  uint32_t v = 0;
  for (int i = 0; i < nbytes; ++i) v = (v << 8) | static_cast<uint8_t>(p[i] ^ mask);
  return v;
}

// Fixed-capacity digit buffer so decoding does not allocate.
struct DigitBuf {
  std::array<char, kMaxDecimalBinPrecision + kDigitsPerWord> data;
  size_t len = 0;

  // Appends `value` as exactly `width` digits (leading zeros kept).
  void AppendPadded(uint32_t value, int width) {
    for (int i = width - 1; i >= 0; --i, value /= 10) {
      data[len + static_cast<size_t>(i)] = static_cast<char>('0' + value % 10);
    }
    len += static_cast<size_t>(width);
  }
  std::string_view view() const { return std::string_view(data.data(), len); }
};

}  // namespace

Result<int> DecimalBinSize(int precision, int frac) {
  if (precision < 1 || precision > kMaxDecimalBinPrecision || frac < 0 || frac > kMaxDecimalScale ||
      frac > precision) {
    return InvalidArgument("decimal: precision " + std::to_string(precision) + " / frac " +
                           std::to_string(frac) + " out of range");
  }
  int intg = precision - frac;
  return (intg / kDigitsPerWord) * kWordSize + kDigitBytes[intg % kDigitsPerWord] +
         (frac / kDigitsPerWord) * kWordSize + kDigitBytes[frac % kDigitsPerWord];
}

Result<DecimalParts> ParseDecimal(std::string_view text) {
  DecimalParts parts;
  size_t i = 0;
  if (i < text.size() && (text[i] == '-' || text[i] == '+')) parts.negative = text[i++] == '-';
  size_t int_begin = i;
  while (i < text.size() && IsDigit(text[i])) ++i;
  std::string_view int_part = text.substr(int_begin, i - int_begin);
  std::string_view frac_part;
  if (i < text.size() && text[i] == '.') {
    size_t frac_begin = ++i;
    while (i < text.size() && IsDigit(text[i])) ++i;
    frac_part = text.substr(frac_begin, i - frac_begin);
  }
  if (i != text.size() || int_part.size() + frac_part.size() == 0) {
    return InvalidArgument("decimal: malformed text '" + std::string(text) + "'");
  }
  size_t nz = int_part.find_first_not_of('0');
  parts.int_digits = nz == std::string_view::npos ? "" : std::string(int_part.substr(nz));
  parts.frac_digits = std::string(frac_part);
  return parts;
}

Status DecimalPrecisionAndFrac(std::string_view text, int* precision, int* frac) {
  ASSIGN_OR_RETURN(DecimalParts parts, ParseDecimal(text));
  *frac = static_cast<int>(parts.frac_digits.size());
  *precision = std::max(1, static_cast<int>(parts.int_digits.size()) + *frac);
  return Status::Ok();
}

Status EncodeDecimalBin(std::string_view text, int precision, int frac, std::string* out) {
  ASSIGN_OR_RETURN(int size, DecimalBinSize(precision, frac));
  ASSIGN_OR_RETURN(DecimalParts parts, ParseDecimal(text));
  FitFraction(&parts, frac);
  int intg = precision - frac;
  if (static_cast<int>(parts.int_digits.size()) > intg) {
    return InvalidArgument("decimal: '" + std::string(text) + "' overflows DECIMAL(" +
                           std::to_string(precision) + "," + std::to_string(frac) + ")");
  }
  bool negative = parts.negative && !(AllZero(parts.int_digits) && AllZero(parts.frac_digits));
  std::string digits(static_cast<size_t>(intg) - parts.int_digits.size(), '0');
  digits += parts.int_digits;
  std::string bin;
  bin.reserve(static_cast<size_t>(size));
  std::string_view int_view(digits);
  int lead = intg % kDigitsPerWord;
  AppendGroup(DigitsValue(int_view.substr(0, lead)), kDigitBytes[lead], &bin);
  for (size_t p = lead; p < int_view.size(); p += kDigitsPerWord) {
    AppendGroup(DigitsValue(int_view.substr(p, kDigitsPerWord)), kWordSize, &bin);
  }
  std::string_view frac_view(parts.frac_digits);
  int full = (frac / kDigitsPerWord) * kDigitsPerWord;
  for (int p = 0; p < full; p += kDigitsPerWord) {
    AppendGroup(DigitsValue(frac_view.substr(p, kDigitsPerWord)), kWordSize, &bin);
  }
  int trail = frac % kDigitsPerWord;
  AppendGroup(DigitsValue(frac_view.substr(full, trail)), kDigitBytes[trail], &bin);
  if (negative) {
    for (char& c : bin) c = static_cast<char>(~c);
  }
  bin[0] = static_cast<char>(bin[0] ^ 0x80);
  out->append(bin);
  return Status::Ok();
}

namespace {

// Decodes the integer groups of a bin into digits without leading zeros.
Status DecodeIntPart(const uint8_t* p, int intg, uint8_t mask, DigitBuf* digits) {
  int lead = intg % kDigitsPerWord;
  if (lead > 0) {
    uint32_t v = ReadGroup(p, kDigitBytes[lead], mask);
    if (v >= kPowers10[lead]) return Corruption("decimal: leading group out of range");
    digits->AppendPadded(v, lead);
    p += kDigitBytes[lead];
  }
  for (int w = 0; w < intg / kDigitsPerWord; ++w, p += kWordSize) {
    uint32_t v = ReadGroup(p, kWordSize, mask);
    if (v >= kPowers10[kDigitsPerWord]) return Corruption("decimal: word out of range");
    digits->AppendPadded(v, kDigitsPerWord);
  }
  return Status::Ok();
}

Status DecodeFracPart(const uint8_t* p, int frac, uint8_t mask, DigitBuf* digits) {
  for (int w = 0; w < frac / kDigitsPerWord; ++w, p += kWordSize) {
    uint32_t v = ReadGroup(p, kWordSize, mask);
    if (v >= kPowers10[kDigitsPerWord]) return Corruption("decimal: word out of range");
    digits->AppendPadded(v, kDigitsPerWord);
  }
  int trail = frac % kDigitsPerWord;
  if (trail > 0) {
    uint32_t v = ReadGroup(p, kDigitBytes[trail], mask);
    if (v >= kPowers10[trail]) return Corruption("decimal: trailing group out of range");
    digits->AppendPadded(v, trail);
  }
  return Status::Ok();
}

}  // namespace

Status DecodeDecimalBin(std::string_view* in, int precision, int frac, std::string* out) {
  Result<int> size = DecimalBinSize(precision, frac);
  if (!size.ok()) return Corruption(std::string(size.status().message()));
  if (in->size() < static_cast<size_t>(*size)) return Corruption("decimal: truncated bin");
  std::array<uint8_t, kMaxBinSize> bin{};
  for (int i = 0; i < *size; ++i) bin[i] = static_cast<uint8_t>((*in)[i]);
  uint8_t mask = (bin[0] & 0x80) != 0 ? 0x00 : 0xFF;
  bin[0] ^= 0x80;
  int intg = precision - frac;
  DigitBuf int_buf;
  DigitBuf frac_buf;
  RETURN_IF_ERROR(DecodeIntPart(bin.data(), intg, mask, &int_buf));
  int int_bytes = (intg / kDigitsPerWord) * kWordSize + kDigitBytes[intg % kDigitsPerWord];
  RETURN_IF_ERROR(DecodeFracPart(bin.data() + int_bytes, frac, mask, &frac_buf));
  std::string_view int_digits = int_buf.view();
  int_digits.remove_prefix(std::min(int_digits.size(), int_digits.find_first_not_of('0')));
  std::string_view frac_digits = frac_buf.view();
  bool negative = mask != 0 && !(int_digits.empty() && AllZero(frac_digits));
  if (negative) out->push_back('-');
  out->append(int_digits.empty() ? "0" : int_digits);
  if (frac > 0) {
    out->push_back('.');
    out->append(frac_digits);
  }
  in->remove_prefix(static_cast<size_t>(*size));
  return Status::Ok();
}

}  // namespace sluice::codec
