// Private to PgComputeStore: the column lists of its SELECTs (and
// RETURNING clauses) and the decoding of their rows, the PostgreSQL twin
// of sqlite_compute_sql.h's readers. A value that does not decode (an
// unknown enum name, a column that is not a number or not bytea) is kIo.
#ifndef TESSERA_STORE_POSTGRES_PG_COMPUTE_ROWS_H_
#define TESSERA_STORE_POSTGRES_PG_COMPUTE_ROWS_H_

#include "common/status.h"
#include "compute/compute_types.h"
#include "store/postgres/pg_conn.h"

namespace tessera::store::pg {

// Column lists (no SELECT / FROM), in the order the readers expect.
extern const char kModuleColumns[];
extern const char kVersionColumns[];
extern const char kTriggerColumns[];
extern const char kPolicyColumns[];
extern const char kRunColumns[];
extern const char kUsageColumns[];
extern const char kLogColumns[];

// Row `row` of `result`, read with the column list of its kind.
Result<compute::ModuleRecord> ReadModuleRow(const PgResult& result, int row);
Result<compute::VersionRecord> ReadVersionRow(const PgResult& result, int row);
Result<compute::TriggerRecord> ReadTriggerRow(const PgResult& result, int row);
Result<compute::Policy> ReadPolicyRow(const PgResult& result, int row);
Result<compute::RunRecord> ReadRunRow(const PgResult& result, int row);
Result<compute::UsageRow> ReadUsageRow(const PgResult& result, int row);
Result<compute::LogRecord> ReadLogRow(const PgResult& result, int row);

}  // namespace tessera::store::pg

#endif  // TESSERA_STORE_POSTGRES_PG_COMPUTE_ROWS_H_
