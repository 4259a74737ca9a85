#include "store/sqlite_data_sql.h"

#include <sqlite3.h>

#include <cmath>
#include <utility>

#include "data/schema.h"
#include "store/schema.h"

namespace tessera::store {

using data::EntityType;
using data::FieldSpec;
using data::FieldType;
using nlohmann::json;

namespace {

// Statements kept per connection; filters with other shapes beyond this
// are prepared for one use.
constexpr size_t kMaxCachedStatements = 256;

bool SafeName(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name) {
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
          (c >= '0' && c <= '9') || c == '_')) {
      return false;
    }
  }
  return true;
}

Status BadName(std::string_view what, std::string_view name) {
  return Internal("data store: " + std::string(what) + " name \"" +
                  std::string(name) + "\" cannot be an SQL identifier");
}

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

const char* OpSql(data::FilterOp op) {
  switch (op) {
    case data::FilterOp::kEq:
      return " = ";
    case data::FilterOp::kNe:
      return " <> ";
    case data::FilterOp::kLt:
      return " < ";
    case data::FilterOp::kLe:
      return " <= ";
    case data::FilterOp::kGt:
      return " > ";
    case data::FilterOp::kGe:
      return " >= ";
    default:
      return " = ";
  }
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

std::string SelectList(const EntityType& type) {
  std::string out = "id, created_ms, updated_ms, version";
  for (const FieldSpec& f : type.fields) out += ", " + ColumnName(f.name);
  return out;
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
  for (const data::IndexSpec& index : type.indexes) {
    Result<std::vector<std::string>> sql =
        CreateIndexSql(type, index.field, index.unique);
    if (!sql.ok()) return sql.status();
    out.insert(out.end(), sql->begin(), sql->end());
  }
  bool owner_indexed = false;
  for (const data::IndexSpec& index : type.indexes) {
    owner_indexed = owner_indexed || index.field == type.owner;
  }
  if (!type.owner.empty() && !owner_indexed) {
    Result<std::vector<std::string>> sql =
        CreateIndexSql(type, type.owner, false);
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

bool SqlValue::operator==(const SqlValue& o) const {
  if (kind != o.kind) return false;
  switch (kind) {
    case Kind::kNull:
      return true;
    case Kind::kText:
      return text == o.text;
    case Kind::kInt:
      return i == o.i;
    case Kind::kReal:
      return d == o.d;
  }
  return false;
}

Result<SqlValue> ToSql(FieldType type, const json& value) {
  SqlValue out;
  if (value.is_null()) return out;
  auto wrong = [&](const char* expected) {
    return InvalidArgument(
        std::string("expected ") + expected + ", got " +
        value.dump(-1, ' ', false, json::error_handler_t::replace));
  };
  switch (type) {
    case FieldType::kString:
      if (!value.is_string()) return wrong("a string");
      out.kind = SqlValue::Kind::kText;
      out.text = value.get<std::string>();
      return out;
    case FieldType::kInt:
      if (value.is_number_unsigned()) {
        if (value.get<uint64_t>() > uint64_t{INT64_MAX}) return wrong("an int");
      } else if (!value.is_number_integer()) {
        return wrong("an int");
      }
      out.kind = SqlValue::Kind::kInt;
      out.i = value.get<int64_t>();
      return out;
    case FieldType::kFloat:
      if (!value.is_number() || !std::isfinite(value.get<double>())) {
        return wrong("a finite float");
      }
      out.kind = SqlValue::Kind::kReal;
      out.d = value.get<double>();
      return out;
    case FieldType::kBool:
      if (!value.is_boolean()) return wrong("a bool");
      out.kind = SqlValue::Kind::kInt;
      out.i = value.get<bool>() ? 1 : 0;
      return out;
    case FieldType::kJson:
      // Keys sorted (nlohmann's object), as the filters' values are: equal
      // JSON values are equal text.
      out.kind = SqlValue::Kind::kText;
      out.text = value.dump(-1, ' ', false, json::error_handler_t::replace);
      return out;
  }
  return wrong("a value");
}

json FromSql(FieldType type, const SqlValue& value) {
  if (value.kind == SqlValue::Kind::kNull) return nullptr;
  switch (type) {
    case FieldType::kString:
      return value.text;
    case FieldType::kInt:
      return value.i;
    case FieldType::kFloat:
      return value.d;
    case FieldType::kBool:
      return value.i != 0;
    case FieldType::kJson: {
      json parsed = json::parse(value.text, nullptr, false);
      return parsed.is_discarded() ? json(nullptr) : parsed;
    }
  }
  return nullptr;
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

std::string FieldsJson(const EntityType& type,
                       const std::vector<SqlValue>& values) {
  json out = json::object();
  for (size_t i = 0; i < type.fields.size() && i < values.size(); ++i) {
    if (values[i].kind == SqlValue::Kind::kNull) continue;
    out[type.fields[i].name] = FromSql(type.fields[i].type, values[i]);
  }
  return out.dump(-1, ' ', false, json::error_handler_t::replace);
}

Result<CompiledFilter> CompileFilter(const EntityType& type,
                                     const data::Filter& filter,
                                     int first_param) {
  CompiledFilter out;
  int next = first_param;
  for (const data::Condition& c : filter.conditions) {
    FieldType ftype = FieldType::kString;
    if (c.field != "id") {
      const FieldSpec* field = type.FindField(c.field);
      if (field == nullptr) {
        return data::DataError(data::codes::kUnknownField,
                               type.name + " has no field \"" + c.field + "\"");
      }
      ftype = field->type;
    }
    const std::string column = ColumnName(c.field);
    const std::string where = type.name + "." + c.field;
    if (c.op == data::FilterOp::kIsNull) {
      out.sql += " AND " + column + " IS NULL";
      continue;
    }
    const bool ordered =
        c.op == data::FilterOp::kLt || c.op == data::FilterOp::kLe ||
        c.op == data::FilterOp::kGt || c.op == data::FilterOp::kGe;
    if (ordered && (ftype == FieldType::kBool || ftype == FieldType::kJson)) {
      return data::DataError(data::codes::kBadFilter,
                             where +
                                 ": an ordered comparison does not apply "
                                 "to a " +
                                 data::FieldTypeName(ftype) + " field");
    }
    const size_t want = c.values_json.size();
    if (c.op == data::FilterOp::kIn ? (want < 1 || want > 100) : want != 1) {
      return data::DataError(data::codes::kBadFilter,
                             where + ": wrong number of values");
    }
    std::string params;
    for (const std::string& text : c.values_json) {
      json value = json::parse(text, nullptr, false);
      Result<SqlValue> v = value.is_discarded() || value.is_null()
                               ? Result<SqlValue>(InvalidArgument(
                                     "a value that is not null JSON"))
                               : ToSql(ftype, value);
      if (!v.ok()) {
        return data::DataError(data::codes::kBadFilter,
                               where + ": " + v.status().message());
      }
      out.params.push_back(std::move(v).value());
      if (!params.empty()) params += ", ";
      params += "?" + std::to_string(next++);
    }
    if (c.op == data::FilterOp::kIn) {
      out.sql += " AND " + column + " IN (" + params + ")";
    } else {
      out.sql += " AND " + column + OpSql(c.op) + params;
    }
  }
  return out;
}

}  // namespace tessera::store
