#include "sink/mysql/mysql_error.h"

#include <fmt/format.h>

namespace sluice::sink {

namespace {

// Client library errors (CR_*) and server errors that mean the session is
// gone: the server went away, the connection was killed or shut down.
bool IsConnectionErrno(unsigned e) {
  switch (e) {
    case 1053:  // ER_SERVER_SHUTDOWN
    case 1077:  // ER_NORMAL_SHUTDOWN
    case 1152:  // ER_ABORTING_CONNECTION
    case 1159:  // ER_NET_READ_INTERRUPTED
    case 1161:  // ER_NET_WRITE_INTERRUPTED
    case 1927:  // ER_CONNECTION_KILLED (MariaDB)
    case 4031:  // ER_CLIENT_INTERACTION_TIMEOUT (MySQL 8)
    case 2001:  // CR_SOCKET_CREATE_ERROR
    case 2002:  // CR_CONNECTION_ERROR
    case 2003:  // CR_CONN_HOST_ERROR
    case 2004:  // CR_IPSOCK_ERROR
    case 2005:  // CR_UNKNOWN_HOST
    case 2006:  // CR_SERVER_GONE_ERROR
    case 2011:  // CR_TCP_CONNECTION
    case 2012:  // CR_SERVER_HANDSHAKE_ERR
    case 2013:  // CR_SERVER_LOST
    case 2014:  // CR_COMMANDS_OUT_OF_SYNC
    case 2026:  // CR_SSL_CONNECTION_ERROR
    case 2048:  // CR_INVALID_CONN_HANDLE
    case 2055:  // CR_SERVER_LOST_EXTENDED
    case 5014:  // CR_ERR_NET_READ (MariaDB Connector/C)
    case 5015:  // CR_ERR_NET_WRITE
      return true;
    default:
      return false;
  }
}

Code CodeFor(unsigned e) {
  if (IsConnectionErrno(e)) return Code::kUnavailable;
  switch (e) {
    case mysql_errnum::kLockDeadlock:
    case 9007:  // TiDB write conflict
    case 8002:  // TiDB: select for update write conflict
    case 8022:  // TiDB: transaction retryable
    case 8028:  // TiDB: information schema changed
    case 1317:  // ER_QUERY_INTERRUPTED
      return Code::kAborted;
    case mysql_errnum::kLockWaitTimeout:
    case 1969:  // ER_STATEMENT_TIMEOUT (MariaDB)
    case 3024:  // ER_QUERY_TIMEOUT (MySQL)
    case 9001:  // TiDB: PD server timeout
    case 9002:  // TiDB: TiKV server timeout
    case 9004:  // TiDB: resolve lock timeout
      return Code::kTimeout;
    case 1040:  // ER_CON_COUNT_ERROR
    case 1203:  // ER_TOO_MANY_USER_CONNECTIONS
    case 9003:  // TiDB: TiKV server busy
    case 9005:  // TiDB: region unavailable
    case 9006:  // TiDB: GC too early
      return Code::kBusy;
    case mysql_errnum::kNoSuchTable:
    case mysql_errnum::kBadDb:
    case mysql_errnum::kBadTable:
    case 1046:  // ER_NO_DB_ERROR
    case 1176:  // ER_KEY_DOES_NOT_EXISTS
      return Code::kNotFound;
    case mysql_errnum::kDupEntry:
    case mysql_errnum::kTableExists:
    case mysql_errnum::kDbCreateExists:
    case 1586:  // ER_DUP_ENTRY_WITH_KEY_NAME
      return Code::kAlreadyExists;
    case mysql_errnum::kBadField:
    case 1048:  // ER_BAD_NULL_ERROR
    case 1136:  // ER_WRONG_VALUE_COUNT_ON_ROW
    case 1264:  // ER_WARN_DATA_OUT_OF_RANGE
    case 1265:  // WARN_DATA_TRUNCATED
    case 1292:  // ER_TRUNCATED_WRONG_VALUE
    case 1364:  // ER_NO_DEFAULT_FOR_FIELD
    case 1366:  // ER_TRUNCATED_WRONG_VALUE_FOR_FIELD
    case 1406:  // ER_DATA_TOO_LONG
    case 1451:  // ER_ROW_IS_REFERENCED_2
    case 1452:  // ER_NO_REFERENCED_ROW_2
    case 3140:  // ER_INVALID_JSON_TEXT
    case 4025:  // ER_CONSTRAINT_FAILED (MariaDB CHECK, e.g. json_valid)
      return Code::kIncompatible;
    case mysql_errnum::kParse:
    case 1149:  // ER_SYNTAX_ERROR
    case 1044:  // ER_DBACCESS_DENIED_ERROR
    case 1045:  // ER_ACCESS_DENIED_ERROR
    case 1142:  // ER_TABLEACCESS_DENIED_ERROR
    case 1143:  // ER_COLUMNACCESS_DENIED_ERROR
    case 1227:  // ER_SPECIFIC_ACCESS_DENIED_ERROR
    case 1066:  // ER_NONUNIQ_TABLE
    case 1072:  // ER_KEY_COLUMN_DOES_NOT_EXITS
    case 1166:  // ER_WRONG_COLUMN_NAME
    case 1505:  // ER_PARTITION_MGMT_ON_NONPARTITIONED
    case 1153:  // ER_NET_PACKET_TOO_LARGE
    case 2020:  // CR_NET_PACKET_TOO_LARGE
    case 8200:  // TiDB: table without primary key
      return Code::kInvalidArgument;
    default:
      return Code::kUnavailable;  // Unknown: retried, like TiCDC does.
  }
}

}  // namespace

Status MysqlErrorStatus(unsigned errnum, std::string_view message, std::string_view context) {
  std::string text = fmt::format("Error {}: {}", errnum, message);
  if (!context.empty()) text = fmt::format("{}: {}", context, text);
  return Status(CodeFor(errnum), std::move(text));
}

bool IsConnectionError(unsigned errnum) { return IsConnectionErrno(errnum); }

bool IsRetryableDmlError(unsigned errnum) {
  // TiCDC's isRetryableDMLError: everything but missing tables/databases and
  // duplicate keys; we also stop at errors that cannot heal by themselves.
  return IsRetryable(CodeFor(errnum));
}

bool IsRetryableDdlError(unsigned errnum) {
  if (IsConnectionErrno(errnum)) return true;
  switch (CodeFor(errnum)) {
    case Code::kInvalidArgument:
    case Code::kNotFound:
      return false;
    default:
      return IsRetryable(CodeFor(errnum));
  }
}

bool IsIgnorableDdlError(unsigned errnum) {
  switch (errnum) {
    case mysql_errnum::kDbCreateExists:
    case mysql_errnum::kDbDropExists:
    case mysql_errnum::kTableExists:
    case mysql_errnum::kBadTable:
    case mysql_errnum::kDupFieldName:
    case mysql_errnum::kDupKeyName:
    case mysql_errnum::kCantDropFieldOrKey:
    case mysql_errnum::kBadField:  // ErrColumnNotExists: the column is gone already.
    case 1176:                     // ErrKeyNotExists
    case 1517:                     // ER_SAME_NAME_PARTITION
    case 1507:                     // ER_DROP_PARTITION_NON_EXISTENT
    case 1068:                     // ER_MULTIPLE_PRI_KEY
      return true;
    default:
      return false;
  }
}

}  // namespace sluice::sink
