// The SQL of the PostgreSQL data store (pg_data_store.h): the system
// tables, identifiers, the entity tables' DDL and field values <->
// parameters and result columns (what it shares with SQLite is
// store/data_sql.h). Internal to tessera_store_postgres.
//
// Entity tables: "data_<Type>"(id text, created_ms, updated_ms, version
// bigint, then "f_<field>": string text, int bigint, float double
// precision, bool boolean, json text holding compact JSON). Every text
// column of an entity table is COLLATE "C", so comparisons and ORDER BY
// go byte by byte as SQLite's. An identifier longer than PostgreSQL's 63
// bytes (a 59-byte type name makes one) is cut to 46 bytes and ends in
// "~" and the FNV-1a hash of the whole name, so long names never collide.
//
// The system tables data_schema, data_changes and data_calls hold the
// rows of SQLite's, with bytea for the strings a caller chooses (keys,
// origins, errors: any bytes, as in SQLite's TEXT) and an identity column
// data_changes.seq. EnsureDataSchema creates what is missing, under the
// advisory lock every tessera component's tables take
// (EnsureComponentSchema), as tessera_schema row ('data', version).
#ifndef TESSERA_STORE_POSTGRES_PG_DATA_SQL_H_
#define TESSERA_STORE_POSTGRES_PG_DATA_SQL_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "data/data_types.h"
#include "store/data_sql.h"
#include "store/postgres/pg_conn.h"

namespace tessera::store::pg {

inline constexpr int64_t kDataSchemaVersion = 1;

// The advisory lock a write transaction holds ("tessera\x02"): one writer
// per database, across every connection and process.
inline constexpr int64_t kDataWriterLock = 0x7465737365726102;

// Creates the data's system tables if missing. Errors: kFailedPrecondition
// (a newer version), kIo.
Status EnsureDataSchema(PgConn& conn);

// A quoted identifier for `name` (at most 63 bytes, see above).
std::string Identifier(std::string_view name);
Result<std::string> TableName(const data::EntityType& type);  // "data_T"
std::string ColumnName(std::string_view field);  // "f_x" ("id" stays)
// ColumnName and $N parameters.
extern const SqlDialect kPgDialect;

Result<std::vector<std::string>> CreateTypeSql(const data::EntityType& type);
Result<std::string> AddColumnSql(const data::EntityType& type,
                                 const data::FieldSpec& field);
Result<std::vector<std::string>> CreateIndexSql(const data::EntityType& type,
                                                std::string_view field,
                                                bool unique);

// A value as a parameter (bool: true/false; null: NULL).
PgParam ParamOf(const SqlValue& value);
// Result column `col` of `row` holding a field of `type`. Errors: kIo.
Result<SqlValue> ReadValue(const PgResult& result, int row, int col,
                           data::FieldType type);
// Row `row` of a result selecting SelectList(kPgDialect, type).
Result<RowValues> ReadRow(const data::EntityType& type, const PgResult& result,
                          int row);

// A List cursor as text PostgreSQL takes that orders against every row id
// exactly as the cursor's bytes do: ids are CheckId's bytes only, so the
// first byte outside them decides and what follows it never matters. It
// is kept (an ASCII byte) or replaced by one that orders the same against
// id bytes (\x01 for a NUL, \x7f for a byte >= 0x80), and the rest cut.
std::string CursorText(std::string_view cursor);

}  // namespace tessera::store::pg

#endif  // TESSERA_STORE_POSTGRES_PG_DATA_SQL_H_
