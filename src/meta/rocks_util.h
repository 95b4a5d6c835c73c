// Conversion of RocksDB statuses into Sluice statuses (internal to src/meta).
#pragma once

#include <rocksdb/status.h>

#include <string>
#include <string_view>

#include "common/status.h"

namespace sluice::meta {

// OK, kCorruption for corrupt files, else kIoError; the message names `what`.
inline Status FromRocks(const rocksdb::Status& status, std::string_view what) {
  if (status.ok()) return Status::Ok();
  std::string msg = std::string(what) + ": " + status.ToString();
  if (status.IsCorruption()) return Corruption(std::move(msg));
  return IoError(std::move(msg));
}

}  // namespace sluice::meta
