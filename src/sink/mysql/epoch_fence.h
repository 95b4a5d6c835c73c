// The downstream half of the maintainer-epoch fence: the table
//   tidb_cdc.changefeed_epoch_v1 (ticdc_cluster_id, changefeed, epoch)
// with primary key (ticdc_cluster_id, changefeed). A sink of maintainer
// generation E claims the row when it opens: the row is raised to E, and the
// claim is refused (kStaleOwner) when a later generation holds it already.
// Every transaction the sink commits runs a guard in the same round trip as
// its COMMIT that fails the transaction (a duplicate key) once the row holds
// another epoch. So once a newer generation has opened its sink, no
// transaction of an older one commits downstream, whatever the older node's
// state: paused, cut off, or not yet aware that its session is gone.
//
// Epoch 0 disables the fence (sinks opened outside a changefeed). Used by
// one thread at a time; the connection is borrowed.
#pragma once

#include <cstdint>
#include <string>

#include "common/status.h"
#include "sink/mysql/mysql_conn.h"

namespace sluice::sink {

inline constexpr std::string_view kEpochFenceTable = "changefeed_epoch_v1";

class EpochFence {
 public:
  EpochFence(std::string_view cluster_id, std::string_view changefeed_id, uint64_t epoch);

  bool enabled() const { return epoch_ != 0; }
  uint64_t epoch() const { return epoch_; }

  // Creates the table if needed and raises the row to this epoch;
  // kStaleOwner when a later epoch holds it.
  Status Claim(MysqlConnection* conn) const;
  // A statement that fails the transaction it runs in (ER_DUP_ENTRY) once
  // the row holds another epoch. Empty when disabled.
  const std::string& guard_sql() const { return guard_sql_; }
  // After a failed transaction: kStaleOwner if the row holds another epoch
  // now, OK otherwise (or when it cannot tell: the caller's error stands).
  Status Check(MysqlConnection* conn) const;

 private:
  Result<uint64_t> Read(MysqlConnection* conn) const;

  const uint64_t epoch_;
  std::string key_where_;   // "ticdc_cluster_id = '..' AND changefeed = '..'"
  std::string key_values_;  // "'..', '..'"
  std::string guard_sql_;
};

}  // namespace sluice::sink
