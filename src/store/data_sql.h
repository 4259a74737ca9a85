// What the SQL of both data stores shares (sqlite_data_store.h,
// postgres/pg_data_store.h): field values as the columns hold them, the
// JSON of a row's fields, the select list and filters compiled to WHERE
// clauses with bound parameters. Each backend names its own columns and
// numbers its own placeholders (a SqlDialect). Internal to the stores.
//
// Identifiers are built only from names of the applied schema (type and
// field names ParseDataSchema checked; checked again by SafeName, and
// quoted); values are always bound parameters.
#ifndef TESSERA_STORE_DATA_SQL_H_
#define TESSERA_STORE_DATA_SQL_H_

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"
#include "data/data_types.h"

namespace tessera::store {

// How a backend writes what the shared SQL needs: the quoted column of a
// field ("id" stays id) and the prefix of numbered parameters ("?" for
// SQLite's ?1, "$" for PostgreSQL's $1).
struct SqlDialect {
  std::string (*column)(std::string_view field);
  const char* placeholder;
};

// A type or field name that can be part of an identifier: 1..64 of
// [A-Za-z0-9_] (ParseDataSchema allows no other).
bool SafeName(std::string_view name);
// kInternal: `name` cannot be an identifier.
Status BadName(std::string_view what, std::string_view name);

// id, created_ms, updated_ms, version, then each field's column.
std::string SelectList(const SqlDialect& dialect, const data::EntityType& type);

// --- values. A field's value as a column holds it (null: SQL NULL).
struct SqlValue {
  enum class Kind { kNull, kText, kInt, kReal };
  Kind kind = Kind::kNull;
  std::string text;
  int64_t i = 0;
  double d = 0;
  bool operator==(const SqlValue& o) const;
};
// A JSON value (not checked beyond its JSON kind) as the column of a
// field of `type` holds it (bool: kInt 0/1). Errors: kInvalidArgument
// (text without code) for a value of the wrong kind, and for a string
// holding U+0000 (no backend keeps it in text: PostgreSQL refuses it).
Result<SqlValue> ToSql(data::FieldType type, const nlohmann::json& value);
nlohmann::json FromSql(data::FieldType type, const SqlValue& value);

// A row as read, and its field values by column.
struct RowValues {
  data::Row row;
  std::vector<SqlValue> values;  // one per type.fields
};
// The fields_json of a row with these values (nulls left out).
std::string FieldsJson(const data::EntityType& type,
                       const std::vector<SqlValue>& values);

// --- filters. A WHERE clause (" AND ..." terms, "" for none) with its
// parameters, numbered from `first_param`. Errors: UNKNOWN_FIELD,
// BAD_FILTER.
struct CompiledFilter {
  std::string sql;
  std::vector<SqlValue> params;
};
Result<CompiledFilter> CompileFilter(const SqlDialect& dialect,
                                     const data::EntityType& type,
                                     const data::Filter& filter,
                                     int first_param);

// --- what both transactions check and record the same way.
// A JSON string of `s` for messages.
std::string QuotedName(std::string_view s);
// The value of a Lookup as the field's column holds it, checked as the
// field's values are (UNKNOWN_FIELD, NO_INDEX, BAD_VALUE); nullopt for a
// JSON null (which equals no row).
Result<std::optional<SqlValue>> LookupValue(const data::EntityType& type,
                                            std::string_view field,
                                            std::string_view value_json);
// The JSON array data_changes.fields_json holds for an update's fields.
std::string ChangedFieldsJson(const std::vector<data::FieldChange>& fields);
// And back (entries that are not objects are skipped).
std::vector<data::FieldChange> ParseChangedFields(std::string_view text);
data::ChangeOp ChangeOpFromName(std::string_view name);

// An insert's values, one per field of `type` (CheckFields' codes,
// BAD_VALUE).
Result<std::vector<SqlValue>> InsertValues(const data::EntityType& type,
                                           std::string_view fields_json);
// An update of a row with `current` values by `set_json`: the values
// after, the fields whose value changes (with old and new JSON) and their
// indexes into type.fields. Errors: CheckFields' codes, BAD_VALUE.
struct UpdatePlan {
  std::vector<SqlValue> after;
  std::vector<data::FieldChange> changed;
  std::vector<size_t> fields;
};
Result<UpdatePlan> PlanUpdate(const data::EntityType& type,
                              const std::vector<SqlValue>& current,
                              std::string_view set_json);
// The change events of an insert (the new row), an update (its changed
// fields) and a delete (the old row).
data::ChangeEvent CreatedEvent(const data::EntityType& type,
                               const data::Row& row, std::string_view origin);
data::ChangeEvent UpdatedEvent(const data::Row& row,
                               std::vector<data::FieldChange> changed,
                               std::string_view origin);
data::ChangeEvent DeletedEvent(const data::EntityType& type,
                               const data::Row& row, int64_t now_ms,
                               std::string_view origin);

// The indexes (field, unique) a new type's table gets: the declared ones,
// then the owner field's (non-unique) unless it is declared.
std::vector<std::pair<std::string, bool>> TypeIndexes(
    const data::EntityType& type);

// --- schema changes. What ApplySchema asks of a backend, in its open
// transaction: the table of a new type (with its indexes and the owner's),
// a new column (and, when the field has a default, every existing row
// set to it), a new index (a unique one over equal values: kAlreadyExists).
struct SchemaSteps {
  std::function<Status(const data::EntityType& type)> create_type;
  std::function<Status(const data::EntityType& type,
                       const data::FieldSpec& field,
                       const std::optional<SqlValue>& fill)>
      add_field;
  std::function<Status(const data::EntityType& type, std::string_view field,
                       bool unique)>
      add_index;
};
// Brings the tables from `applied` to `next` (data::DiffSchemas) with
// `steps`. Errors: DiffSchemas' kFailedPrecondition; kFailedPrecondition
// "UNIQUE_VIOLATION: ..." for a new unique index over equal values; the
// steps' errors.
Status ApplySchemaChanges(const data::DataSchema& applied,
                          const data::DataSchema& next,
                          const SchemaSteps& steps);

}  // namespace tessera::store

#endif  // TESSERA_STORE_DATA_SQL_H_
