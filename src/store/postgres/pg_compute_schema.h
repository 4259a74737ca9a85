// The compute tables on PostgreSQL (pg_compute_store.h): the rows of
// SQLite's compute_* tables (schema migrations 3 and 4, schema.cc), plus
// the row ('compute', version) in tessera_schema (pg_store_schema.h has
// 'store', pg_realm_schema.h 'realms').
//
// As in the store's tables, every string is bytea (names, paths, files,
// logs and the enum names alike: any bytes, ordered byte by byte as
// SQLite's TEXT and BLOB), integers and flags are bigint, the three REAL
// columns double precision. AUTOINCREMENT ids are identity columns (never
// reused either), and compute_versions has an identity column `seq` for
// the insertion order SQLite reads from its rowid (ListUnfinishedVersions,
// FindCompiled).
//
// EnsureComputeSchema creates what is missing and nothing else, in one
// transaction under the advisory lock kRealmSchemaLock, like the other
// components' schemas (safe concurrently with them).
#ifndef TESSERA_STORE_POSTGRES_PG_COMPUTE_SCHEMA_H_
#define TESSERA_STORE_POSTGRES_PG_COMPUTE_SCHEMA_H_

#include <cstdint>

#include "common/status.h"
#include "store/postgres/pg_conn.h"

namespace tessera::store::pg {

// The version of the compute tables this build writes.
inline constexpr int64_t kComputeSchemaVersion = 1;

// Creates the compute tables if missing (idempotent, safe concurrently,
// with the store's and the realms' schemas too). Errors:
// kFailedPrecondition when the database holds a newer version of them;
// kIo.
Status EnsureComputeSchema(PgConn& conn);

}  // namespace tessera::store::pg

#endif  // TESSERA_STORE_POSTGRES_PG_COMPUTE_SCHEMA_H_
