// libFuzzer target: every key decoder on arbitrary bytes. Decoders must
// return a status, never crash; whatever they accept must re-encode to the
// same bytes (the encodings are canonical).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "codec/datum_codec.h"
#include "codec/metakey.h"
#include "codec/tablecodec.h"
#include "common/memcomparable.h"
#include "common/span.h"
#include "fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace sluice;
  std::string_view in(reinterpret_cast<const char*>(data), size);

  auto raw = memcomparable::DecodeWhole(in);
  if (raw.ok()) Check(memcomparable::EncodeBytes(*raw) == in);

  auto row = codec::DecodeRowKey(in);
  if (row.ok()) {
    std::string again =
        row->handle.is_int ? codec::EncodeRowKey(row->table_id, row->handle.int_value)
                           : codec::EncodeRowKeyWithCommonHandle(row->table_id, row->handle.common);
    Check(again == in);
  }
  auto index = codec::DecodeIndexKey(in);
  (void)index.ok();
  auto meta = codec::DecodeMetaKey(in);
  (void)meta.ok();
  auto datums = codec::DecodeDatums(in);
  (void)datums.ok();
  auto span = FromComparable(Span{std::string(in), std::string(in)});
  // An empty raw key means "unbounded" and maps back to an empty key, so only
  // non-empty keys round-trip byte for byte.
  if (span.ok() && !span->start.empty()) Check(ToComparable(*span).start == in);
  return 0;
}
