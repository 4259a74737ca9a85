#include "store/sqlite_db.h"

#include <sqlite3.h>

#include <utility>

namespace tessera::store {
namespace {

// sqlite3_bind_{text,blob}64 turn a null pointer into SQL NULL; a
// zero-length value must still be a (zero-length) value.
const char* NonNull(std::string_view s) {
  static const char kEmpty[1] = {0};
  return s.data() != nullptr ? s.data() : kEmpty;
}

}  // namespace

SqliteStatement::~SqliteStatement() { sqlite3_finalize(stmt_); }

Status SqliteStatement::BindText(int index, std::string_view text) {
  if (sqlite3_bind_text64(stmt_, index, NonNull(text), text.size(),
                          SQLITE_STATIC, SQLITE_UTF8) != SQLITE_OK) {
    return db_->Error("bind text parameter");
  }
  return Status::Ok();
}

Status SqliteStatement::BindBlob(int index, std::string_view bytes) {
  if (sqlite3_bind_blob64(stmt_, index, NonNull(bytes), bytes.size(),
                          SQLITE_STATIC) != SQLITE_OK) {
    return db_->Error("bind blob parameter");
  }
  return Status::Ok();
}

Status SqliteStatement::BindInt64(int index, int64_t value) {
  if (sqlite3_bind_int64(stmt_, index, value) != SQLITE_OK) {
    return db_->Error("bind integer parameter");
  }
  return Status::Ok();
}

Status SqliteStatement::BindDouble(int index, double value) {
  if (sqlite3_bind_double(stmt_, index, value) != SQLITE_OK) {
    return db_->Error("bind real parameter");
  }
  return Status::Ok();
}

Result<bool> SqliteStatement::Step(std::string_view what) {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return db_->Error(what);
}

Status SqliteStatement::Run(std::string_view what) {
  Result<bool> row = Step(what);
  if (!row.ok()) return row.status();
  if (*row) {
    return Internal("sqlite store " + db_->path() + ": " + std::string(what) +
                    ": the statement returned a row");
  }
  return Status::Ok();
}

std::string SqliteStatement::ColumnBytes(int column) {
  // sqlite3_column_blob returns the stored bytes of TEXT values unconverted,
  // and null for zero-length values; the length must be read after it.
  const void* data = sqlite3_column_blob(stmt_, column);
  int size = sqlite3_column_bytes(stmt_, column);
  if (data == nullptr || size <= 0) return std::string();
  return std::string(static_cast<const char*>(data), static_cast<size_t>(size));
}

int64_t SqliteStatement::ColumnInt64(int column) {
  return sqlite3_column_int64(stmt_, column);
}

double SqliteStatement::ColumnDouble(int column) {
  return sqlite3_column_double(stmt_, column);
}

bool SqliteStatement::ColumnIsNull(int column) {
  return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
}

void SqliteStatement::Reset() {
  // The return value repeats the last Step's error, already reported.
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

Result<std::unique_ptr<SqliteDb>> SqliteDb::Open(const std::string& path) {
  sqlite3* raw = nullptr;
  int rc = sqlite3_open_v2(
      path.c_str(), &raw,
      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
      nullptr);
  // Even on failure `raw` usually holds a handle carrying the message.
  std::unique_ptr<SqliteDb> db(new SqliteDb(path, raw));
  if (rc != SQLITE_OK) {
    if (raw == nullptr) {
      return IoError("sqlite store " + path + ": open: " + sqlite3_errstr(rc));
    }
    return db->Error("open");
  }
  sqlite3_extended_result_codes(raw, 1);
  return db;
}

SqliteDb::~SqliteDb() {
  // close_v2 defers the close until every statement is finalized.
  sqlite3_close_v2(db_);
}

Status SqliteDb::Exec(std::string_view sql, std::string_view what) {
  std::string text(sql);
  if (sqlite3_exec(db_, text.c_str(), nullptr, nullptr, nullptr) != SQLITE_OK) {
    return Error(what);
  }
  return Status::Ok();
}

Result<std::string> SqliteDb::QueryText(std::string_view sql,
                                        std::string_view what) {
  Result<std::unique_ptr<SqliteStatement>> stmt = Prepare(sql);
  if (!stmt.ok()) return Error(what);  // the connection keeps the message
  ScopedReset reset(**stmt);
  Result<bool> row = (*stmt)->Step(what);
  if (!row.ok()) return row.status();
  if (!*row) {
    return IoError("sqlite store " + path_ + ": " + std::string(what) +
                   ": no result");
  }
  return (*stmt)->ColumnBytes(0);
}

Result<std::unique_ptr<SqliteStatement>> SqliteDb::Prepare(
    std::string_view sql) {
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()),
                         SQLITE_PREPARE_PERSISTENT, &stmt,
                         nullptr) != SQLITE_OK) {
    return Error("prepare \"" + std::string(sql) + "\"");
  }
  return std::unique_ptr<SqliteStatement>(new SqliteStatement(this, stmt));
}

Status SqliteDb::InTransaction(std::string_view what,
                               const std::function<Status()>& body) {
  if (begin_ == nullptr) {
    TESSERA_RETURN_IF_ERROR(store::Prepare(*this, begin_, "BEGIN IMMEDIATE"));
    TESSERA_RETURN_IF_ERROR(store::Prepare(*this, commit_, "COMMIT"));
    TESSERA_RETURN_IF_ERROR(store::Prepare(*this, rollback_, "ROLLBACK"));
  }
  {
    ScopedReset reset(*begin_);
    TESSERA_RETURN_IF_ERROR(begin_->Run(what));
  }
  Status st = body();
  if (st.ok()) {
    ScopedReset reset(*commit_);
    st = commit_->Run(what);
  }
  if (!st.ok() && !autocommit()) {
    ScopedReset reset(*rollback_);
    (void)rollback_->Run(what);
  }
  return st;
}

int64_t SqliteDb::changes() const { return sqlite3_changes64(db_); }

bool SqliteDb::autocommit() const { return sqlite3_get_autocommit(db_) != 0; }

Status SqliteDb::Error(std::string_view what) const {
  return IoError("sqlite store " + path_ + ": " + std::string(what) + ": " +
                 sqlite3_errmsg(db_));
}

Status Prepare(SqliteDb& db, std::unique_ptr<SqliteStatement>& out,
               std::string_view sql) {
  Result<std::unique_ptr<SqliteStatement>> stmt = db.Prepare(sql);
  if (!stmt.ok()) return stmt.status();
  out = std::move(stmt).value();
  return Status::Ok();
}

}  // namespace tessera::store
