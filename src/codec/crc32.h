// CRC-32 (IEEE 802.3 polynomial, as Go's crc32.IEEETable), used by row
// format v2 checksums. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string_view>

namespace sluice::codec {

// Continues `crc` (0 to start) over `data`, like Go crc32.Update.
uint32_t Crc32Update(uint32_t crc, std::string_view data);
inline uint32_t Crc32(std::string_view data) { return Crc32Update(0, data); }

}  // namespace sluice::codec
