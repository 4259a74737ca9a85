#include "store/postgres/pg_data_sql.h"

#include "common/fnv.h"
#include "store/postgres/pg_realm_schema.h"

namespace tessera::store::pg {

using data::EntityType;
using data::FieldSpec;
using data::FieldType;

namespace {

constexpr size_t kMaxIdentifierBytes = 63;  // PostgreSQL's NAMEDATALEN - 1

constexpr const char* kCreateTables = R"sql(
  CREATE TABLE IF NOT EXISTS tessera_schema(
    component TEXT PRIMARY KEY NOT NULL,
    version BIGINT NOT NULL);
  CREATE TABLE IF NOT EXISTS data_schema(
    id INTEGER PRIMARY KEY CHECK(id = 1),
    schema_json TEXT NOT NULL,
    applied_ms BIGINT NOT NULL);
  CREATE TABLE IF NOT EXISTS data_changes(
    seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    ts_ms BIGINT NOT NULL,
    op TEXT NOT NULL,
    type TEXT NOT NULL,
    row_id TEXT NOT NULL,
    row_json BYTEA NOT NULL,
    fields_json BYTEA NOT NULL,
    origin BYTEA NOT NULL);
  CREATE INDEX IF NOT EXISTS data_changes_by_time ON data_changes(ts_ms);
  CREATE TABLE IF NOT EXISTS data_calls(
    key BYTEA PRIMARY KEY NOT NULL,
    function BYTEA NOT NULL,
    args_hash BYTEA NOT NULL,
    ok BOOLEAN NOT NULL,
    result_json BYTEA NOT NULL,
    error BYTEA NOT NULL,
    created_ms BIGINT NOT NULL);
  CREATE INDEX IF NOT EXISTS data_calls_by_time ON data_calls(created_ms);
)sql";

std::string ColumnType(FieldType type) {
  switch (type) {
    case FieldType::kString:
    case FieldType::kJson:
      return "TEXT COLLATE \"C\"";
    case FieldType::kInt:
      return "BIGINT";
    case FieldType::kBool:
      return "BOOLEAN";
    case FieldType::kFloat:
      return "DOUBLE PRECISION";
  }
  return "TEXT COLLATE \"C\"";
}

bool IdByte(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9') || c == '_' || c == '.' || c == ':' || c == '-';
}

}  // namespace

Status EnsureDataSchema(PgConn& conn) {
  return EnsureComponentSchema(conn, "data", "data", kDataSchemaVersion,
                               kCreateTables);
}

std::string Identifier(std::string_view name) {
  std::string out(name);
  if (out.size() > kMaxIdentifierBytes) {
    Fnv1a64 hash;
    hash.Add(name);
    out = out.substr(0, kMaxIdentifierBytes - 17) + "~" + hash.Hex();
  }
  return "\"" + out + "\"";
}

Result<std::string> TableName(const EntityType& type) {
  if (!SafeName(type.name)) return BadName("type", type.name);
  return Identifier("data_" + type.name);
}

std::string ColumnName(std::string_view field) {
  if (field == "id") return "id";
  return Identifier("f_" + std::string(field));
}

const SqlDialect kPgDialect = {&ColumnName, "$"};

Result<std::vector<std::string>> CreateTypeSql(const EntityType& type) {
  Result<std::string> table = TableName(type);
  if (!table.ok()) return table.status();
  std::string create = "CREATE TABLE " + *table +
                       "(id TEXT COLLATE \"C\" PRIMARY KEY NOT NULL, "
                       "created_ms BIGINT NOT NULL, "
                       "updated_ms BIGINT NOT NULL, "
                       "version BIGINT NOT NULL";
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
  const std::string name =
      Identifier("data_" + type.name + "." + std::string(field));
  return std::vector<std::string>{
      "DROP INDEX IF EXISTS " + name,
      std::string(unique ? "CREATE UNIQUE INDEX " : "CREATE INDEX ") + name +
          " ON " + *table + "(" + ColumnName(field) + ")"};
}

PgParam ParamOf(const SqlValue& value) {
  switch (value.kind) {
    case SqlValue::Kind::kNull:
      return PgParam::Null();
    case SqlValue::Kind::kText:
      return PgParam::Text(value.text);
    case SqlValue::Kind::kInt:
      return PgParam::Int(value.i);
    case SqlValue::Kind::kReal:
      return PgParam::Double(value.d);
  }
  return PgParam::Null();
}

Result<SqlValue> ReadValue(const PgResult& result, int row, int col,
                           FieldType type) {
  SqlValue out;
  if (result.IsNull(row, col)) return out;
  switch (type) {
    case FieldType::kString:
    case FieldType::kJson:
      out.kind = SqlValue::Kind::kText;
      out.text = std::string(result.Text(row, col));
      break;
    case FieldType::kInt: {
      Result<int64_t> i = result.Int64(row, col);
      if (!i.ok()) return i.status();
      out.kind = SqlValue::Kind::kInt;
      out.i = *i;
      break;
    }
    case FieldType::kBool:
      out.kind = SqlValue::Kind::kInt;
      out.i = result.Text(row, col) == "t" ? 1 : 0;
      break;
    case FieldType::kFloat: {
      Result<double> d = result.Double(row, col);
      if (!d.ok()) return d.status();
      out.kind = SqlValue::Kind::kReal;
      out.d = *d;
      break;
    }
  }
  return out;
}

Result<RowValues> ReadRow(const EntityType& type, const PgResult& result,
                          int row) {
  RowValues out;
  out.row.type = type.name;
  out.row.id = std::string(result.Text(row, 0));
  int64_t* times[] = {&out.row.created_ms, &out.row.updated_ms,
                      &out.row.version};
  for (int col = 1; col <= 3; ++col) {
    Result<int64_t> v = result.Int64(row, col);
    if (!v.ok()) return v.status();
    *times[col - 1] = *v;
  }
  out.values.reserve(type.fields.size());
  for (size_t i = 0; i < type.fields.size(); ++i) {
    Result<SqlValue> v =
        ReadValue(result, row, static_cast<int>(4 + i), type.fields[i].type);
    if (!v.ok()) return v.status();
    out.values.push_back(std::move(v).value());
  }
  out.row.fields_json = FieldsJson(type, out.values);
  return out;
}

std::string CursorText(std::string_view cursor) {
  std::string out;
  for (char ch : cursor) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if (IdByte(c)) {
      out.push_back(ch);
      continue;
    }
    out.push_back(c == 0 ? '\x01' : c >= 0x80 ? '\x7f' : ch);
    break;
  }
  return out;
}

}  // namespace tessera::store::pg
