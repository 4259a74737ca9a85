// Plain values of the app's data (docs/data.md): entity types declared in
// tessera.json, rows, filters, change events and stored keyed calls. Shared
// by the data layer's pure logic (schema.h, filter.h), the DataStore port
// (data_store.h) and its adapters, the compute host API, the server's
// runners and the admin API. No behaviour here.
//
// JSON-valued fields hold compact JSON text exactly as validated where it
// entered. Times are unix milliseconds.
#ifndef TESSERA_DATA_DATA_TYPES_H_
#define TESSERA_DATA_DATA_TYPES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tessera::data {

// A field's type. JSON: "string" | "int" | "float" | "bool" | "json".
// int is a signed 64-bit integer (JSON numbers without a fraction, |v| <=
// 2^53 so JavaScript reads them exactly); float a finite double; json any
// JSON value (stored as text).
enum class FieldType { kString, kInt, kFloat, kBool, kJson };
const char* FieldTypeName(FieldType type);

struct FieldSpec {
  std::string name;  // [a-z][A-Za-z0-9_]{0,63}, not a reserved name
  FieldType type = FieldType::kString;
  // Insert fails (BAD_VALUE) without a value when required and there is no
  // default; a missing optional field without a default reads as null.
  bool required = false;
  std::string default_json;  // "" = none; else a JSON value of `type`
};

// An index over one field (composite indexes are not supported). Lookups
// (DataTxn::Lookup) and filters on equality use it; `unique` refuses a
// second row with the same value (UNIQUE_VIOLATION). nulls never collide.
struct IndexSpec {
  std::string field;
  bool unique = false;
};

struct EntityType {
  std::string name;                // [A-Z][A-Za-z0-9_]{0,63}
  std::vector<FieldSpec> fields;   // in declaration order, names unique
  std::vector<IndexSpec> indexes;  // one per field at most
  // The string field holding the owning player's user id ("" = none). It is
  // indexed (non-unique) without being listed in `indexes`; the admin API
  // filters by it with ?owner=<userId>.
  std::string owner;

  const FieldSpec* FindField(std::string_view field) const;
  const IndexSpec* FindIndex(std::string_view field) const;  // owner too
};

// Every entity type of the app (tessera.json "data": {"types": [...]}).
struct DataSchema {
  std::vector<EntityType> types;  // names unique
  const EntityType* Find(std::string_view type) const;
  bool empty() const { return types.empty(); }
};

// Names every row has besides its declared fields; a field may not use
// them: "id" (string, 1..128 bytes, [A-Za-z0-9_.:-]; generated when an
// insert gives none), "createdAt", "updatedAt" (unix ms, set by the store),
// "version" (1 on insert, +1 per update that changed something).
inline constexpr const char* kReservedFields[] = {"id", "createdAt",
                                                  "updatedAt", "version"};

// One row. `fields_json` is a JSON object of the declared fields that have
// a value (nulls left out); RowJson (schema.h) gives the API shape.
struct Row {
  std::string type;
  std::string id;
  int64_t created_ms = 0;
  int64_t updated_ms = 0;
  int64_t version = 0;
  std::string fields_json = "{}";
};

// A filter: a conjunction of per-field conditions. JSON shape (ParseFilter):
//   {"hp": 3}                      equality (also "id")
//   {"hp": {"gt": 3, "le": 10}}    eq ne lt le gt ge
//   {"name": {"in": ["a", "b"]}}   at most 100 values
//   {"x": null}                    is null
// Comparison ops on string compare bytes; on bool/json only eq/ne/in.
enum class FilterOp { kEq, kNe, kLt, kLe, kGt, kGe, kIn, kIsNull };
struct Condition {
  std::string field;
  FilterOp op = FilterOp::kEq;
  std::vector<std::string> values_json;  // one (kIn: 1..100; kIsNull: 0)
};
struct Filter {
  std::vector<Condition> conditions;
};

// A page of a list, ordered by id ascending. `next_cursor` is the last id
// of the page when more rows may follow, "" at the end.
struct Page {
  std::vector<Row> rows;
  std::string next_cursor;
};
inline constexpr int64_t kMaxPageLimit = 1000;
inline constexpr int64_t kDefaultPageLimit = 100;

// One committed change of a row. Every insert, update (that changed at
// least one value) and delete records one, in the transaction that made it,
// with a sequence number increasing by commit order.
enum class ChangeOp { kCreated, kUpdated, kDeleted };
const char* ChangeOpName(ChangeOp op);  // "created" | "updated" | "deleted"
struct FieldChange {
  std::string field;
  std::string old_json = "null";
  std::string new_json = "null";
};
struct ChangeEvent {
  int64_t seq = 0;  // 0 until committed (assigned by the store)
  int64_t ts_ms = 0;
  ChangeOp op = ChangeOp::kCreated;
  std::string type;
  std::string id;
  // kCreated: the new row's RowJson; kDeleted: the old row's; kUpdated: "".
  std::string row_json;
  std::vector<FieldChange> fields;  // kUpdated: each changed field
  // Who made it: "admin", "module:<name>", "shard:<id>" (entity writes),
  // "call:<key>" is not used (a keyed call's writes are "module:<name>").
  std::string origin;
};

// A keyed call's stored outcome (idempotency), written in the same
// transaction as the function's writes (a refusal after the function's
// writes were rolled back). Kept kCallRetentionMs.
struct StoredCall {
  std::string key;        // 1..kMaxCallKeyBytes
  std::string function;   // "module.export" as resolved
  std::string args_hash;  // hex SHA-256 of the canonical args JSON
  bool ok = true;
  std::string result_json;  // ok: the result (JSON; "null" when none)
  std::string error;        // !ok: "CODE: message"
  int64_t created_ms = 0;
};
inline constexpr int64_t kCallRetentionMs = 7LL * 24 * 3600 * 1000;

}  // namespace tessera::data

#endif  // TESSERA_DATA_DATA_TYPES_H_
