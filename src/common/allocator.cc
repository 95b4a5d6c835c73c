#include "common/allocator.h"

#include <fmt/format.h>

#include <cstddef>

// jemalloc's control interface; null unless the binary is linked with it.
extern "C" int mallctl(const char* name, void* old, size_t* old_len, void* new_value,
                       size_t new_len) __attribute__((weak));

namespace sluice {
namespace {

std::optional<std::string> ReadString(const char* name) {
  const char* value = nullptr;
  size_t len = sizeof(value);
  if (mallctl(name, &value, &len, nullptr, 0) != 0 || value == nullptr) return std::nullopt;
  return std::string(value);
}

}  // namespace

bool UsingJemalloc() { return mallctl != nullptr; }

std::string AllocatorDescription() {
  if (!UsingJemalloc()) return "system malloc";
  return fmt::format("jemalloc {} (thp: {})", ReadString("version").value_or("?"),
                     ReadString("opt.thp").value_or("?"));
}

std::optional<int64_t> JemallocAllocatedBytes() {
  if (!UsingJemalloc()) return std::nullopt;
  uint64_t epoch = 1;
  size_t len = sizeof(epoch);
  mallctl("epoch", &epoch, &len, &epoch, len);  // Refreshes the statistics.
  size_t allocated = 0;
  len = sizeof(allocated);
  if (mallctl("stats.allocated", &allocated, &len, nullptr, 0) != 0) return std::nullopt;
  return static_cast<int64_t>(allocated);
}

}  // namespace sluice
