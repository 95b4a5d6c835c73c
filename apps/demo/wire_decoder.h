// The downstream half of sluice-demo: parses ChangeDataEvent wire bytes like a
// CDC client, pairs each COMMIT with its PREWRITE by (start ts, key), drops
// rolled-back prewrites, and releases committed changes in commit-ts order
// once a resolved ts covers them. Protocol violations (a COMMIT with no
// PREWRITE, a resolved ts going back, unknown row types) are errors, never
// crashes. Single-threaded.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"
#include "common/strong_id.h"

namespace sluice::demo {

struct CommittedChange {
  Ts commit_ts;
  Ts start_ts;
  std::string key;  // raw row key
  bool is_delete = false;
  std::string value;
  std::optional<std::string> old_value;
};

class WireDecoder {
 public:
  // Parses one ChangeDataEvent message.
  Status Consume(std::string_view wire);

  // Changes with commit ts <= the newest resolved ts, in (commit ts, key)
  // order, removed from the decoder.
  std::vector<CommittedChange> TakeResolved();

  Ts resolved_ts() const { return resolved_ts_; }
  size_t rows_seen() const { return rows_seen_; }
  size_t pending_prewrites() const { return prewrites_.size(); }

 private:
  struct Prewrite {
    bool is_delete = false;
    std::string value;
    std::optional<std::string> old_value;
  };
  using TxnKey = std::pair<uint64_t, std::string>;  // (start ts, key)

  Ts resolved_ts_;
  size_t rows_seen_ = 0;
  std::map<TxnKey, Prewrite> prewrites_;
  std::multimap<std::pair<uint64_t, std::string>, CommittedChange> committed_;
};

}  // namespace sluice::demo
