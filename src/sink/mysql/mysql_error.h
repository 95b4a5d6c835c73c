// How the MySQL sink treats an error number from the server (MySQL, MariaDB,
// TiDB) or from the client library: which Status code it becomes, whether the
// write is retried in place (with backoff, reconnecting after a lost
// connection) or fails the sink at once, and which DDL errors mean "already
// done" on a replay. Pure functions; thread-safe.
#pragma once

#include <string_view>

#include "common/status.h"

namespace sluice::sink {

// Error numbers the sink reacts to by name.
namespace mysql_errnum {
inline constexpr unsigned kDbCreateExists = 1007;
inline constexpr unsigned kDbDropExists = 1008;
inline constexpr unsigned kBadDb = 1049;
inline constexpr unsigned kTableExists = 1050;
inline constexpr unsigned kBadTable = 1051;
inline constexpr unsigned kBadField = 1054;
inline constexpr unsigned kDupFieldName = 1060;
inline constexpr unsigned kDupKeyName = 1061;
inline constexpr unsigned kDupEntry = 1062;
inline constexpr unsigned kParse = 1064;
inline constexpr unsigned kCantDropFieldOrKey = 1091;
inline constexpr unsigned kNoSuchTable = 1146;
inline constexpr unsigned kLockWaitTimeout = 1205;
inline constexpr unsigned kLockDeadlock = 1213;
inline constexpr unsigned kServerGoneAway = 2006;
inline constexpr unsigned kServerLost = 2013;
}  // namespace mysql_errnum

// The Status for error `errnum` with the server's `message`:
// "<context>: Error <errnum>: <message>". Connection losses, deadlocks, lock
// waits, TiDB write conflicts and unknown errors get retryable codes;
// missing tables/databases, schema mismatches, syntax errors, access denied,
// duplicate keys and oversized packets get fatal codes.
Status MysqlErrorStatus(unsigned errnum, std::string_view message, std::string_view context);

// The connection is gone or unusable (2002, 2003, 2006, 2013, 1927, 1053, ...):
// reconnect before the next attempt.
bool IsConnectionError(unsigned errnum);

// A DML write failing with `errnum` may be retried in place.
bool IsRetryableDmlError(unsigned errnum);
// A DDL failing with `errnum` may be retried in place (TiCDC's
// IsRetryableDDLError: everything except syntax, access and missing-object
// errors).
bool IsRetryableDdlError(unsigned errnum);
// A DDL failing with `errnum` has (most likely) run before: database/table/
// column/index exists or is already gone. TiCDC ignores these on replay.
bool IsIgnorableDdlError(unsigned errnum);

}  // namespace sluice::sink
