// Fixed-width byte-order helpers shared by the codecs. Callers check bounds
// before calling the Load* functions; these never validate.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace sluice::codec::internal {

inline uint64_t LoadBe64(const char* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | static_cast<uint8_t>(p[i]);
  return v;
}

inline uint32_t LoadBe32(const char* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v = (v << 8) | static_cast<uint8_t>(p[i]);
  return v;
}

inline uint16_t LoadLe16(const char* p) {
  return static_cast<uint16_t>(static_cast<uint8_t>(p[0]) | (static_cast<uint8_t>(p[1]) << 8));
}

inline uint32_t LoadLe32(const char* p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(p[i]);
  return v;
}

inline uint64_t LoadLe64(const char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(p[i]);
  return v;
}

inline void AppendBe64(uint64_t v, std::string* out) {
  char buf[8];
  for (int i = 7; i >= 0; --i, v >>= 8) buf[i] = static_cast<char>(v & 0xFF);
  out->append(buf, 8);
}

// Appends the low `n` bytes of `v` little-endian (n <= 8).
inline void AppendLe(uint64_t v, int n, std::string* out) {
  char buf[8];
  for (int i = 0; i < n; ++i, v >>= 8) buf[i] = static_cast<char>(v & 0xFF);
  out->append(buf, static_cast<size_t>(n));
}

inline void AppendLe16(uint16_t v, std::string* out) { AppendLe(v, 2, out); }
inline void AppendLe32(uint32_t v, std::string* out) { AppendLe(v, 4, out); }
inline void AppendLe64(uint64_t v, std::string* out) { AppendLe(v, 8, out); }

inline void StoreLe32(uint32_t v, char* p) {
  for (int i = 0; i < 4; ++i, v >>= 8) p[i] = static_cast<char>(v & 0xFF);
}

inline void StoreLe16(uint16_t v, char* p) {
  p[0] = static_cast<char>(v & 0xFF);
  p[1] = static_cast<char>(v >> 8);
}

}  // namespace sluice::codec::internal
