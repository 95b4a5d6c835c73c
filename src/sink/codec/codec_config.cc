#include "sink/codec/codec_config.h"

namespace sluice::sink::codec {

Status CsvConfig::Validate() const {
  if (quote.size() > 1) return InvalidArgument("csv quote must be at most one character");
  if (quote == "\r" || quote == "\n") {
    return InvalidArgument("csv quote cannot be a line break character");
  }
  if (delimiter.empty()) return InvalidArgument("csv delimiter cannot be empty");
  if (delimiter.size() > 3) return InvalidArgument("csv delimiter must be 1 to 3 characters");
  if (delimiter.find_first_of("\r\n") != std::string::npos) {
    return InvalidArgument("csv delimiter contains line break characters");
  }
  if (!quote.empty() && delimiter.find(quote[0]) != std::string::npos) {
    return InvalidArgument("csv quote and delimiter have common characters");
  }
  if (terminator.empty()) return InvalidArgument("terminator cannot be empty");
  return Status::Ok();
}

Result<BinaryEncoding> ParseBinaryEncoding(std::string_view name) {
  if (name == "base64") return BinaryEncoding::kBase64;
  if (name == "hex") return BinaryEncoding::kHex;
  return InvalidArgument("csv binary-encoding-method can only be hex or base64");
}

}  // namespace sluice::sink::codec
