// The SQL of the SQLite data store (sqlite_data_store.h): connections with
// their statement cache, the entity tables' DDL and field values <->
// columns (what both data stores share is data_sql.h). Internal to
// tessera_store.
//
// Threading: none; a DataConn is used by one thread at a time.
#ifndef TESSERA_STORE_SQLITE_DATA_SQL_H_
#define TESSERA_STORE_SQLITE_DATA_SQL_H_

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/status.h"
#include "data/data_types.h"
#include "store/data_sql.h"
#include "store/sqlite_db.h"

namespace tessera::store {

// A statement from DataConn::Statement: cached (owned by the connection)
// or, when the cache is full, owned here. Reset on destruction.
class StatementRef {
 public:
  StatementRef(SqliteStatement* cached, std::unique_ptr<SqliteStatement> owned)
      : owned_(std::move(owned)), stmt_(cached ? cached : owned_.get()) {}
  ~StatementRef() { stmt_->Reset(); }
  StatementRef(StatementRef&&) = default;
  SqliteStatement& operator*() { return *stmt_; }
  SqliteStatement* operator->() { return stmt_; }

 private:
  std::unique_ptr<SqliteStatement> owned_;
  SqliteStatement* stmt_;
};

// One connection of the data store and its prepared statements by SQL text.
struct DataConn {
  std::unique_ptr<SqliteDb> db;
  // Declared after `db`, hence finalized before it closes.
  std::unordered_map<std::string, std::unique_ptr<SqliteStatement>> cache;

  // The statement for `sql` (prepared on first use). Errors: kIo.
  Result<StatementRef> Statement(const std::string& sql);
  // Runs `sql` (no rows, no parameters) through the cache. Errors: kIo.
  Status Run(const std::string& sql, std::string_view what);
  // SQLite's extended result code of the last failed call.
  int ExtendedErrorCode() const;
  bool autocommit() const { return db->autocommit(); }
};

// The writer: the store database opened as every tessera connection is
// (WAL, synchronous=FULL, migrated). A reader: the same file, without
// migrating (that takes the write lock) and query_only. Errors: as
// OpenStoreDatabase; kIo.
Result<std::unique_ptr<DataConn>> OpenWriterConn(const std::string& path,
                                                 int busy_timeout_ms,
                                                 int64_t now_ms);
Result<std::unique_ptr<DataConn>> OpenReaderConn(const std::string& path,
                                                 int busy_timeout_ms);

// --- names and DDL. Internal (kInternal) for a name the schema could not
// hold.
Result<std::string> TableName(const data::EntityType& type);  // "data_T"
std::string ColumnName(std::string_view field);  // "f_x" ("id" stays)
// ColumnName and ?N parameters.
extern const SqlDialect kSqliteDialect;
// id, created_ms, updated_ms, version, then each field's column.
std::string SelectList(const data::EntityType& type);
Result<std::vector<std::string>> CreateTypeSql(const data::EntityType& type);
Result<std::string> AddColumnSql(const data::EntityType& type,
                                 const data::FieldSpec& field);
// The index on `field` (unique or not), replacing one of the same name.
Result<std::vector<std::string>> CreateIndexSql(const data::EntityType& type,
                                                std::string_view field,
                                                bool unique);

// --- values, as SQLite binds and reads them (bool: INTEGER 0/1).
Status Bind(SqliteStatement& stmt, int index, const SqlValue& value);
SqlValue ReadColumn(SqliteStatement& stmt, int column, data::FieldType type);

// The row at the current step of a statement selecting SelectList(type)
// from column 0, and its field values by column.
RowValues ReadRow(const data::EntityType& type, SqliteStatement& stmt);

}  // namespace tessera::store

#endif  // TESSERA_STORE_SQLITE_DATA_SQL_H_
