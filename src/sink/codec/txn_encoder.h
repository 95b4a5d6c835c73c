// TxnEncoder: turns the rows of a DML event into the records of one data
// file protocol (TiCDC's TxnEventEncoder: csv, canal-json). Encoders are
// immutable after construction and may be shared by threads.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "common/status.h"
#include "event/events.h"
#include "event/table_schema.h"

namespace sluice::sink::codec {

class TxnEncoder {
 public:
  virtual ~TxnEncoder() = default;

  // Appends one record per row (csv with output-old-value: two for an
  // update), each closed by the terminator. On error *out is unchanged.
  virtual Status Append(const event::DmlEvent& event, std::string* out) const = 0;

  // Bytes that open every data file (the csv header); empty when none.
  virtual std::string FileHeader(const event::TableSchema& schema) const = 0;

  // File extension with its dot: ".csv" or ".json".
  virtual std::string_view extension() const = 0;
};

}  // namespace sluice::sink::codec
