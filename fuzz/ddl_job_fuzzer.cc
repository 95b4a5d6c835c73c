// libFuzzer target: the DDL job / table / database JSON parsers. Parsing must
// return a status, never crash or throw; whatever parses must emit JSON that
// parses again and emits identically (emit is a fixed point).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "codec/model/db_info.h"
#include "codec/model/job.h"
#include "codec/model/table_info.h"
#include "fuzz_check.h"

namespace {

template <typename T, typename ParseFn>
void RoundTrip(std::string_view in, ParseFn parse) {
  auto first = parse(in);
  if (!first.ok()) return;
  std::string emitted = sluice::model::ToJson(*first);
  auto second = parse(emitted);
  Check(second.ok());
  Check(sluice::model::ToJson(*second) == emitted);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  RoundTrip<sluice::model::Job>(in, sluice::model::ParseJob);
  RoundTrip<sluice::model::TableInfo>(in, sluice::model::ParseTableInfo);
  RoundTrip<sluice::model::DBInfo>(in, sluice::model::ParseDBInfo);
  return 0;
}
