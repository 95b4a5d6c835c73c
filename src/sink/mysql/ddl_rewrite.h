// TiDB DDL text made acceptable to MySQL and MariaDB downstreams. TiDB
// records the DDL as the user typed it, so it may carry TiDB-only syntax:
// the sink drops /*T![feature] ... */ comments (CLUSTERED, AUTO_RANDOM,
// placement, TTL as TiDB prints them), and the bare forms AUTO_RANDOM[(n)],
// AUTO_RANDOM_BASE, SHARD_ROW_ID_BITS, PRE_SPLIT_REGIONS, AUTO_ID_CACHE,
// PLACEMENT POLICY, CLUSTERED / NONCLUSTERED, TTL = .. + INTERVAL .., TTL_ENABLE,
// TTL_JOB_INTERVAL; and turns VECTOR[<FLOAT>][(n)] columns into LONGTEXT.
// Quoted strings, quoted names and ordinary comments are left alone.
// Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "codec/model/types.h"

namespace sluice::sink {

// The query rewritten for a non-TiDB downstream (unchanged when there is
// nothing TiDB-only in it).
std::string RewriteDdlForMysql(std::string_view query);

// DDL kinds that only mean something to TiDB (placement, TiFlash, TTL,
// resource groups, cache tables, auto-id tuning, ...): a MySQL downstream
// skips them (TiCDC's TiDBOnly events and the actions it never replays).
bool IsTiDbOnlyDdl(model::ActionType type);

}  // namespace sluice::sink
