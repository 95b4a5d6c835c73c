// libFuzzer target: the event store's key and value decoders on arbitrary
// bytes (what a damaged disk could hand back). They must answer with a
// status, never crash; a key they accept re-encodes to the same bytes.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "eventstore/key_format.h"
#include "fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sluice;
  std::string_view in(reinterpret_cast<const char*>(data), size);
  // Split the input: the first byte says where the key ends.
  size_t cut = size == 0 ? 0 : std::min<size_t>(data[0], size - 1);
  std::string_view key = in.substr(size == 0 ? 0 : 1, cut);
  std::string_view value = in.substr(size == 0 ? 0 : 1 + cut);
  RawKvEntry entry;
  Status status = eventstore::DecodeEntry(key, value, &entry);
  if (status.ok()) {
    auto decoded = eventstore::DecodeStoreKey(key);
    Check(decoded.ok());
    std::string again;
    eventstore::AppendStoreKey(decoded->store_sub_id, decoded->table_id, entry, &again);
    Check(again == key);
    std::string value_again;
    eventstore::AppendStoreValue(entry, &value_again);
    RawKvEntry twice;
    Check(eventstore::DecodeEntry(key, value_again, &twice).ok());
    Check(twice == entry);
  }
  (void)eventstore::DecodeStoreKey(in).ok();
  return 0;
}
