// Test-only: one finished TiDB job per action the CDC path handles, shaped
// as TiDB writes it into mysql.tidb_ddl_job.job_meta. Ids used throughout:
// schemas shop=100 and shop2=101; table orders=110 (120 after TRUNCATE);
// partitioned events=200 with partitions p0=201, p1=202 (p2=203 when added).
#pragma once

#include <string>

#include "codec/model/test_documents.h"

namespace sluice::model::testdocs {

// A small finished table with an int handle `id` and, if `with_note`, a
// `note` VARCHAR(32) DEFAULT 'x' column added later.
std::string SmallTable(int64_t id, std::string_view name, int state = 5, bool with_note = false);

JobDoc CreateSchemaJob();
JobDoc DropSchemaJob();  // Records every dropped physical id.
JobDoc CreateTableJob();
JobDoc DropTableJob();
JobDoc TruncateTableJob();  // orders 110 -> 120.
JobDoc RenameTableJob();    // shop.orders -> shop2.orders_v2.
JobDoc AddColumnJob();
JobDoc DropColumnJob();
JobDoc ModifyColumnJob();  // Version-2 arguments.
JobDoc AddIndexJob();      // Version 2, with reorg_meta.
JobDoc DropIndexJob();
JobDoc CreatePartitionedTableJob();
JobDoc AddPartitionJob();         // Adds p2 (203).
JobDoc DropPartitionJob();        // Drops p1 (202), version 2.
JobDoc TruncatePartitionJob();    // p0 201 -> 205.
JobDoc ExchangePartitionJob();    // shop2.t300 <-> events p0.
JobDoc ReorganizePartitionJob();  // p0, p1 -> 206, 207, version 2.
JobDoc CreateTablesJob();         // a=130, b=131.
JobDoc RenameTablesJob();         // shop.orders -> shop2.orders, shop.a -> shop2.a2.

}  // namespace sluice::model::testdocs
