// Row identities for the MySQL sink: which rows two transactions share.
// UniqueKeys lists the column sets that identify a row downstream (the
// primary key, then every public unique index without generated columns);
// the hashes built from them drive the conflict detector (transactions with a
// common hash are written in order) and the batch builder (rows with a common
// hash never share one multi-row statement). A hash collision only costs
// parallelism, never correctness. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <vector>

#include "codec/datum.h"
#include "event/events.h"
#include "event/table_schema.h"

namespace sluice::sink {

// One row-identifying column set: offsets into TableSchema::columns().
struct UniqueKey {
  int64_t index_id = 0;  // 0 for an integer primary key that is the handle.
  std::vector<int> columns;
};

// The primary key (or TableSchema::key_columns()) first, then the other
// public unique indexes whose columns are all present and not generated.
std::vector<UniqueKey> UniqueKeys(const event::TableSchema& schema);

// Appends one hash per unique key whose values are all non-NULL in `row`
// (strings compared as the collation would: trailing spaces ignored, ASCII
// case folded for _ci collations). For a table without unique keys, or when
// every key has a NULL, appends a hash of all non-generated values instead
// (`whole_row_fallback`), or nothing.
void AppendRowHashes(const event::TableSchema& schema, const std::vector<UniqueKey>& keys,
                     const std::vector<::sluice::codec::Datum>& row, bool whole_row_fallback,
                     std::vector<uint64_t>* out);

// The conflict keys of a transaction (TiCDC causality ConflictKeys): the
// unique-key hashes of every before and after image, scoped to the logical
// table (so rows moving between partitions or split spans still conflict);
// a row without any identity adds a key for its dispatcher, which
// serialises that dispatcher's keyless rows. Sorted, deduplicated.
std::vector<uint64_t> ConflictKeys(const event::DmlEvent& event);

}  // namespace sluice::sink
