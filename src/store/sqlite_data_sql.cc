#include "store/sqlite_data_sql.h"

#include <sqlite3.h>

#include <utility>

#include "data/schema.h"
#include "store/schema.h"

namespace tessera::store {

using data::EntityType;
using data::FieldSpec;
using data::FieldType;

namespace {

// Statements kept per connection; filters with other shapes beyond this
// are prepared for one use.
constexpr size_t kMaxCachedStatements = 256;

std::string ColumnType(FieldType type) {
  switch (type) {
    case FieldType::kString:
    case FieldType::kJson:
      return "TEXT";
    case FieldType::kInt:
    case FieldType::kBool:
      return "INTEGER";
    case FieldType::kFloat:
      return "REAL";
  }
  return "TEXT";
}

}  // namespace

Result<StatementRef> DataConn::Statement(const std::string& sql) {
  auto it = cache.find(sql);
  if (it != cache.end()) return StatementRef(it->second.get(), nullptr);
  Result<std::unique_ptr<SqliteStatement>> stmt = db->Prepare(sql);
  if (!stmt.ok()) return stmt.status();
  if (cache.size() >= kMaxCachedStatements) {
    return StatementRef(nullptr, std::move(stmt).value());
  }
  SqliteStatement* raw = stmt->get();
  cache.emplace(sql, std::move(stmt).value());
  return StatementRef(raw, nullptr);
}

Status DataConn::Run(const std::string& sql, std::string_view what) {
  Result<StatementRef> stmt = Statement(sql);
  if (!stmt.ok()) return stmt.status();
  return (**stmt).Run(what);
}

int DataConn::ExtendedErrorCode() const {
  return sqlite3_extended_errcode(db->raw());
}

Result<std::unique_ptr<DataConn>> OpenWriterConn(const std::string& path,
                                                 int busy_timeout_ms,
                                                 int64_t now_ms) {
  Result<std::unique_ptr<SqliteDb>> db =
      OpenStoreDatabase(path, busy_timeout_ms, now_ms);
  if (!db.ok()) return db.status();
  auto conn = std::make_unique<DataConn>();
  conn->db = std::move(db).value();
  return conn;
}

Result<std::unique_ptr<DataConn>> OpenReaderConn(const std::string& path,
                                                 int busy_timeout_ms) {
  Result<std::unique_ptr<SqliteDb>> db = SqliteDb::Open(path);
  if (!db.ok()) return db.status();
  TESSERA_RETURN_IF_ERROR(
      (*db)->Exec("PRAGMA busy_timeout = " + std::to_string(busy_timeout_ms) +
                      "; PRAGMA query_only = ON",
                  "set up a reader"));
  auto conn = std::make_unique<DataConn>();
  conn->db = std::move(db).value();
  return conn;
}

Result<std::string> TableName(const EntityType& type) {
  if (!SafeName(type.name)) return BadName("type", type.name);
  return "\"data_" + type.name + "\"";
}

std::string ColumnName(std::string_view field) {
  if (field == "id") return "id";
  return "\"f_" + std::string(field) + "\"";
}

const SqlDialect kSqliteDialect = {&ColumnName, "?"};

std::string SelectList(const EntityType& type) {
  return store::SelectList(kSqliteDialect, type);
}

Result<std::vector<std::string>> CreateTypeSql(const EntityType& type) {
  Result<std::string> table = TableName(type);
  if (!table.ok()) return table.status();
  std::string create = "CREATE TABLE " + *table +
                       "(id TEXT PRIMARY KEY NOT NULL, "
                       "created_ms INTEGER NOT NULL, "
                       "updated_ms INTEGER NOT NULL, "
                       "version INTEGER NOT NULL";
  for (const FieldSpec& f : type.fields) {
    if (!SafeName(f.name)) return BadName("field", f.name);
    create += ", " + ColumnName(f.name) + " " + ColumnType(f.type);
  }
  create += ")";
  std::vector<std::string> out = {create};
  for (const auto& [field, unique] : TypeIndexes(type)) {
    Result<std::vector<std::string>> sql = CreateIndexSql(type, field, unique);
    if (!sql.ok()) return sql.status();
    out.insert(out.end(), sql->begin(), sql->end());
  }
  return out;
}

Result<std::string> AddColumnSql(const EntityType& type,
                                 const FieldSpec& field) {
  Result<std::string> table = TableName(type);
  if (!table.ok()) return table.status();
  if (!SafeName(field.name)) return BadName("field", field.name);
  return "ALTER TABLE " + *table + " ADD COLUMN " + ColumnName(field.name) +
         " " + ColumnType(field.type);
}

Result<std::vector<std::string>> CreateIndexSql(const EntityType& type,
                                                std::string_view field,
                                                bool unique) {
  Result<std::string> table = TableName(type);
  if (!table.ok()) return table.status();
  if (!SafeName(field)) return BadName("field", field);
  // "." cannot occur in type or field names: "data_A.b_c" and "data_A_b.c"
  // stay apart.
  std::string name = "\"data_" + type.name + "." + std::string(field) + "\"";
  return std::vector<std::string>{
      "DROP INDEX IF EXISTS " + name,
      std::string(unique ? "CREATE UNIQUE INDEX " : "CREATE INDEX ") + name +
          " ON " + *table + "(" + ColumnName(field) + ")"};
}

Status Bind(SqliteStatement& stmt, int index, const SqlValue& value) {
  switch (value.kind) {
    case SqlValue::Kind::kNull:
      return Status::Ok();  // unbound parameters are NULL
    case SqlValue::Kind::kText:
      return stmt.BindText(index, value.text);
    case SqlValue::Kind::kInt:
      return stmt.BindInt64(index, value.i);
    case SqlValue::Kind::kReal:
      return stmt.BindDouble(index, value.d);
  }
  return Status::Ok();
}

SqlValue ReadColumn(SqliteStatement& stmt, int column, FieldType type) {
  SqlValue out;
  if (stmt.ColumnIsNull(column)) return out;
  switch (type) {
    case FieldType::kString:
    case FieldType::kJson:
      out.kind = SqlValue::Kind::kText;
      out.text = stmt.ColumnBytes(column);
      break;
    case FieldType::kInt:
    case FieldType::kBool:
      out.kind = SqlValue::Kind::kInt;
      out.i = stmt.ColumnInt64(column);
      break;
    case FieldType::kFloat:
      out.kind = SqlValue::Kind::kReal;
      out.d = stmt.ColumnDouble(column);
      break;
  }
  return out;
}

RowValues ReadRow(const EntityType& type, SqliteStatement& stmt) {
  RowValues out;
  out.row.type = type.name;
  out.row.id = stmt.ColumnBytes(0);
  out.row.created_ms = stmt.ColumnInt64(1);
  out.row.updated_ms = stmt.ColumnInt64(2);
  out.row.version = stmt.ColumnInt64(3);
  out.values.reserve(type.fields.size());
  for (size_t i = 0; i < type.fields.size(); ++i) {
    out.values.push_back(
        ReadColumn(stmt, static_cast<int>(4 + i), type.fields[i].type));
  }
  out.row.fields_json = FieldsJson(type, out.values);
  return out;
}

}  // namespace tessera::store
