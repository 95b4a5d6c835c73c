// Test fixtures shared by the sink tests: tables with every column type and
// helpers that build datums and DML events. Test-only.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "codec/datum.h"
#include "codec/model/column_info.h"
#include "event/events.h"
#include "event/table_schema.h"

namespace sluice::sink::testing {

// A public column; tp and flags from codec/mysql_type.h.
model::ColumnInfo Column(int64_t id, std::string_view name, uint8_t tp, uint64_t flag = 0,
                         std::string charset = "utf8mb4");

// `db`.`all_types` with one column of each type TiDB has (id INT primary
// key first), version `version`.
event::TableSchemaPtr AllTypesSchema(Ts version = Ts(100));
// One row of AllTypesSchema with a value in every column (id = `id`).
std::vector<::sluice::codec::Datum> AllTypesRow(int64_t id);
// A row of AllTypesSchema that is NULL everywhere but id.
std::vector<::sluice::codec::Datum> AllTypesNullRow(int64_t id);

// TiCDC's documentation table hr.employee (Id int NOT NULL, LastName
// varchar(20), FirstName varchar(30), HireDate date, OfficeLocation
// varchar(20)), without a primary key.
event::TableSchemaPtr EmployeeSchema(Ts version = Ts(100));
std::vector<::sluice::codec::Datum> EmployeeRow(int64_t id, std::string last, std::string first,
                                                std::string_view hire_date, std::string office);

// A small keyed table `db`.`name` (id BIGINT primary key, v VARCHAR(64)).
event::TableSchemaPtr KvSchema(std::string db, std::string name, int64_t table_id,
                               Ts version = Ts(100));
std::vector<::sluice::codec::Datum> KvRow(int64_t id, std::string v);

::sluice::codec::Datum Str(std::string s);
::sluice::codec::Datum DateTime(std::string_view text, uint8_t type, int fsp);

event::RowChange Insert(std::vector<::sluice::codec::Datum> row);
event::RowChange Update(std::vector<::sluice::codec::Datum> before,
                        std::vector<::sluice::codec::Datum> after);
event::RowChange Delete(std::vector<::sluice::codec::Datum> row);

event::DmlEventPtr Dml(event::TableSchemaPtr schema, Ts commit_ts,
                       std::vector<event::RowChange> rows, int64_t physical_table_id = 0);

}  // namespace sluice::sink::testing
