// The SQL of the SQLite realm store (sqlite_realm_store.h): its prepared
// statements over the tables of schema migration 5, shared by the write
// calls (sqlite_realm_store.cc) and the reads (sqlite_realm_store_read.cc).
#ifndef TESSERA_STORE_SQLITE_REALM_SQL_H_
#define TESSERA_STORE_SQLITE_REALM_SQL_H_

#include <memory>
#include <string>
#include <string_view>

#include "common/status.h"
#include "store/sqlite_db.h"

namespace tessera::store {

// Every statement, prepared once at Open and reused; used under the
// store's mutex only.
struct RealmStatements {
  // realms
  std::unique_ptr<SqliteStatement> read_head, insert_realm, set_head,
      delete_realm, list_all, list_kind;
  // realm_log
  std::unique_ptr<SqliteStatement> insert_log, read_log, first_log, compact_log,
      delete_log;
  // realm_snapshots
  std::unique_ptr<SqliteStatement> insert_snapshot, newest_snapshot,
      newest_snapshot_version, drop_older_snapshots, delete_snapshots;
  // realm_alarms
  std::unique_ptr<SqliteStatement> put_alarm, delete_alarm, delete_alarms,
      list_alarms;
};

// Prepares every statement of `s` on `db`. Errors: kIo.
Status PrepareRealmStatements(SqliteDb& db, RealmStatements& s);

// "realm '<key>'", for messages.
std::string RealmName(std::string_view key);

}  // namespace tessera::store

#endif  // TESSERA_STORE_SQLITE_REALM_SQL_H_
