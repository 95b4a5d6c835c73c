// The state a downstream should hold at a ts, computed from simkv's ground
// truth and the upstream schema at that ts: every user table that exists at
// ts, with the rows visible at ts decoded and rendered as MySQL text.
// Generated columns are left out (downstreams compute them). Pure function.
#pragma once

#include "checker/table_state.h"
#include "common/status.h"
#include "common/strong_id.h"
#include "kvclient/meta_reader.h"
#include "simkv/ground_truth.h"

namespace sluice::checker {

// The table layout (columns, key, approximate/bit flags) the checker uses for
// a table with `info` (shared by the expected and the actual side).
Result<TableData> LayoutOf(const model::TableInfo& info);

// Corruption naming the table and ts when a truth row does not decode with
// the schema valid at ts.
Result<DatabaseState> ExpectedState(const simkv::GroundTruth& truth,
                                    const kvclient::MetaSnapshot& schema, Ts ts);

}  // namespace sluice::checker
