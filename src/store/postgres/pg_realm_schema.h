// The realm tables on PostgreSQL (pg_realm_store.h): realms, realm_log,
// realm_snapshots and realm_alarms, the same rows as SQLite's migrations 5
// and 6 (bigint for INTEGER, bytea for the patches), plus a
// tessera_schema row ('realms', version) for the migrations to come.
//
// EnsureRealmSchema creates what is missing and nothing else: every
// statement is CREATE ... IF NOT EXISTS, run in one transaction that first
// takes the transaction-scoped advisory lock kRealmSchemaLock, so two
// processes opening a fresh database at once do not race on the catalog
// (CREATE TABLE IF NOT EXISTS alone can fail with a unique violation when
// two sessions run it concurrently). The lock goes with the transaction,
// on error too.
#ifndef TESSERA_STORE_POSTGRES_PG_REALM_SCHEMA_H_
#define TESSERA_STORE_POSTGRES_PG_REALM_SCHEMA_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"
#include "store/postgres/pg_conn.h"

namespace tessera::store::pg {

// The advisory lock key ("tessera\x01"), shared by every process that
// creates tessera's tables: the realm tables and the store's
// (pg_store_schema.h) both take it, since both create tessera_schema.
inline constexpr int64_t kRealmSchemaLock = 0x7465737365726101;

// The version of the realm tables this build writes.
inline constexpr int64_t kRealmSchemaVersion = 1;

// The step every component's tables share: in one transaction under
// kRealmSchemaLock, runs `create_script` (CREATE ... IF NOT EXISTS only),
// then records `component` at `version` in tessera_schema, or refuses a
// newer version recorded there (kFailedPrecondition: "postgres: create the
// <tables> tables: the database has version N of the <tables> tables, this
// build knows up to V"). Errors: also kIo.
Status EnsureComponentSchema(PgConn& conn, std::string_view component,
                             std::string_view tables, int64_t version,
                             const std::string& create_script);

// Creates the realm tables if missing (idempotent, safe concurrently).
// Errors: kFailedPrecondition when the database holds a newer version of
// them; kIo.
Status EnsureRealmSchema(PgConn& conn);

}  // namespace tessera::store::pg

#endif  // TESSERA_STORE_POSTGRES_PG_REALM_SCHEMA_H_
