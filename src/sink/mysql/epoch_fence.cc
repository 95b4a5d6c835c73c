#include "sink/mysql/epoch_fence.h"

#include <fmt/format.h>

#include "sink/mysql/ddl_ts.h"
#include "sink/mysql/sql_value.h"

namespace sluice::sink {

namespace {

std::string FenceTableName() { return fmt::format("{}.{}", kDdlTsSchema, kEpochFenceTable); }

Status StaleEpoch(uint64_t mine, uint64_t held) {
  return StaleOwner(fmt::format(
      "mysql sink: the changefeed is written by another generation (epoch {} downstream, this "
      "one {}): this generation writes nothing more",
      held, mine));
}

}  // namespace

EpochFence::EpochFence(std::string_view cluster_id, std::string_view changefeed_id, uint64_t epoch)
    : epoch_(epoch) {
  std::string cluster;
  AppendQuotedString(cluster_id, &cluster);
  std::string changefeed;
  AppendQuotedString(changefeed_id, &changefeed);
  key_where_ = "ticdc_cluster_id = " + cluster + " AND changefeed = " + changefeed;
  key_values_ = cluster + ", " + changefeed;
  if (enabled()) {
    // INSERT .. SELECT of the row itself collides with it exactly when it
    // holds another epoch; the read locks the row until the COMMIT.
    guard_sql_ = fmt::format(
        "INSERT INTO {0} (ticdc_cluster_id, changefeed, epoch) SELECT ticdc_cluster_id, "
        "changefeed, epoch FROM {0} WHERE {1} AND epoch <> {2}",
        FenceTableName(), key_where_, epoch_);
  }
}

Status EpochFence::Claim(MysqlConnection* conn) const {
  if (!enabled()) return Status::Ok();
  RETURN_IF_ERROR(conn->Execute(fmt::format("CREATE DATABASE IF NOT EXISTS {}", kDdlTsSchema)));
  RETURN_IF_ERROR(conn->Execute(fmt::format(
      "CREATE TABLE IF NOT EXISTS {} (ticdc_cluster_id VARCHAR(255) NOT NULL, changefeed "
      "VARCHAR(255) NOT NULL, epoch BIGINT UNSIGNED NOT NULL, PRIMARY KEY (ticdc_cluster_id, "
      "changefeed))",
      FenceTableName())));
  RETURN_IF_ERROR(conn->Execute(fmt::format(
      "INSERT INTO {} (ticdc_cluster_id, changefeed, epoch) VALUES ({}, {}) ON DUPLICATE KEY "
      "UPDATE epoch = GREATEST(epoch, VALUES(epoch))",
      FenceTableName(), key_values_, epoch_)));
  ASSIGN_OR_RETURN(uint64_t held, Read(conn));
  if (held != epoch_) return StaleEpoch(epoch_, held);
  return Status::Ok();
}

Status EpochFence::Check(MysqlConnection* conn) const {
  if (!enabled()) return Status::Ok();
  Result<uint64_t> held = Read(conn);
  if (!held.ok() || *held == epoch_) return Status::Ok();
  return StaleEpoch(epoch_, *held);
}

Result<uint64_t> EpochFence::Read(MysqlConnection* conn) const {
  ASSIGN_OR_RETURN(
      std::vector<SqlRow> rows,
      conn->Query(fmt::format("SELECT epoch FROM {} WHERE {}", FenceTableName(), key_where_)));
  if (rows.empty() || rows[0].empty() || !rows[0][0].has_value()) return uint64_t{0};
  return std::strtoull(rows[0][0]->c_str(), nullptr, 10);
}

}  // namespace sluice::sink
