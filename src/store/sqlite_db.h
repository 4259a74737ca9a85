// Thin RAII wrappers over one SQLite connection and its prepared statements,
// turning every SQLite error into a Status kIo that names the database path,
// the operation and SQLite's own message.
//
// Thread-safety: none. A SqliteDb and its statements must be used by one
// thread at a time (SqliteStore serialises them under its mutex); the error
// text is read from the connection right after the failing call, so a
// failing call and its Error() must happen under the same lock.
#ifndef TESSERA_STORE_SQLITE_DB_H_
#define TESSERA_STORE_SQLITE_DB_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "common/status.h"

struct sqlite3;
struct sqlite3_stmt;

namespace tessera::store {

class SqliteDb;

// A prepared statement, finalized on destruction. Prepare once, then for
// each use: Bind*, Step (until false), and Reset (or let a ScopedReset do
// it). Bound text and blobs are *not* copied: they must stay alive until
// the statement is reset.
class SqliteStatement {
 public:
  ~SqliteStatement();
  SqliteStatement(const SqliteStatement&) = delete;
  SqliteStatement& operator=(const SqliteStatement&) = delete;

  // Parameter indexes start at 1. Errors: kIo.
  Status BindText(int index, std::string_view text);
  Status BindBlob(int index, std::string_view bytes);
  Status BindInt64(int index, int64_t value);
  Status BindDouble(int index, double value);

  // true: a row is available; false: done. `what` names the operation in
  // error messages ("save shard 'x'"). Errors: kIo.
  Result<bool> Step(std::string_view what);
  // Steps a statement that returns no rows. Errors: kIo.
  Status Run(std::string_view what);

  // Columns of the current row, from 0. Text and blobs come back byte for
  // byte (a zero-length value is an empty string, never a null).
  std::string ColumnBytes(int column);
  int64_t ColumnInt64(int column);
  double ColumnDouble(int column);
  bool ColumnIsNull(int column);

  // Ends the current use: resets the statement (closing its implicit read
  // transaction) and clears its bindings.
  void Reset();

 private:
  friend class SqliteDb;
  SqliteStatement(SqliteDb* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}

  SqliteDb* db_;
  sqlite3_stmt* stmt_;
};

// Resets a statement when it goes out of scope, on every path.
class ScopedReset {
 public:
  explicit ScopedReset(SqliteStatement& stmt) : stmt_(stmt) {}
  ~ScopedReset() { stmt_.Reset(); }
  ScopedReset(const ScopedReset&) = delete;
  ScopedReset& operator=(const ScopedReset&) = delete;

 private:
  SqliteStatement& stmt_;
};

class SqliteDb {
 public:
  // Opens (creating if needed) the database file at `path` read-write.
  // SQLite's own mutexes are off: the caller serialises. Errors: kIo.
  static Result<std::unique_ptr<SqliteDb>> Open(const std::string& path);
  ~SqliteDb();
  SqliteDb(const SqliteDb&) = delete;
  SqliteDb& operator=(const SqliteDb&) = delete;

  const std::string& path() const { return path_; }
  sqlite3* raw() { return db_; }

  // Runs one or more statements that return no rows. Errors: kIo.
  Status Exec(std::string_view sql, std::string_view what);
  // Runs a statement returning one row of one text column (e.g. a PRAGMA
  // that reports its new value). Errors: kIo, also when it returns no row.
  Result<std::string> QueryText(std::string_view sql, std::string_view what);
  // A statement kept for reuse (SQLITE_PREPARE_PERSISTENT). Errors: kIo.
  Result<std::unique_ptr<SqliteStatement>> Prepare(std::string_view sql);

  // Runs `body` inside BEGIN IMMEDIATE ... COMMIT (waiting up to the busy
  // timeout for the write lock); rolls back when `body` or the commit
  // fails. `what` names the operation in error messages. Errors: kIo, or
  // what `body` returned.
  Status InTransaction(std::string_view what,
                       const std::function<Status()>& body);

  // Rows changed by the last INSERT/UPDATE/DELETE.
  int64_t changes() const;
  // True when no explicit transaction is open.
  bool autocommit() const;

  // kIo: "sqlite store PATH: WHAT: <SQLite's message>".
  Status Error(std::string_view what) const;

 private:
  SqliteDb(std::string path, sqlite3* db) : path_(std::move(path)), db_(db) {}

  std::string path_;
  sqlite3* db_;
  // InTransaction's statements, prepared on first use.
  std::unique_ptr<SqliteStatement> begin_, commit_, rollback_;
};

// Prepares `sql` into `out` (kept for reuse). Errors: kIo.
Status Prepare(SqliteDb& db, std::unique_ptr<SqliteStatement>& out,
               std::string_view sql);

}  // namespace tessera::store

#endif  // TESSERA_STORE_SQLITE_DB_H_
