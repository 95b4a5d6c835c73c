#include "common/memcomparable.h"

#include <cstdint>

namespace sluice::memcomparable {

namespace {
constexpr size_t kGroupSize = 8;
constexpr uint8_t kMarker = 0xFF;
constexpr uint8_t kPad = 0x00;
}  // namespace

void EncodeBytes(std::string_view raw, std::string* out) {
  out->reserve(out->size() + EncodedLength(raw.size()));
  size_t i = 0;
  for (;;) {
    size_t remain = raw.size() - i;
    if (remain >= kGroupSize) {
      out->append(raw.substr(i, kGroupSize));
      out->push_back(static_cast<char>(kMarker));
      i += kGroupSize;
      continue;
    }
    size_t pad = kGroupSize - remain;
    out->append(raw.substr(i, remain));
    out->append(pad, static_cast<char>(kPad));
    out->push_back(static_cast<char>(kMarker - pad));
    return;
  }
}

Status DecodeBytes(std::string_view* in, std::string* out) {
  std::string_view data = *in;
  for (;;) {
    if (data.size() < kGroupSize + 1) {
      return Corruption("memcomparable bytes: truncated group");
    }
    uint8_t marker = static_cast<uint8_t>(data[kGroupSize]);
    size_t pad = kMarker - marker;
    if (pad > kGroupSize) {
      return Corruption("memcomparable bytes: invalid marker");
    }
    size_t real = kGroupSize - pad;
    for (size_t j = real; j < kGroupSize; ++j) {
      if (static_cast<uint8_t>(data[j]) != kPad) {
        return Corruption("memcomparable bytes: non-zero padding");
      }
    }
    out->append(data.substr(0, real));
    data.remove_prefix(kGroupSize + 1);
    if (pad != 0) break;
  }
  *in = data;
  return Status::Ok();
}

Result<std::string> DecodeWhole(std::string_view encoded) {
  std::string out;
  RETURN_IF_ERROR(DecodeBytes(&encoded, &out));
  if (!encoded.empty()) return Corruption("memcomparable bytes: trailing data");
  return out;
}

}  // namespace sluice::memcomparable
