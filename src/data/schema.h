// The pure logic of the app's data (docs/data.md): the manifest's "data"
// section, schema migrations (additive only), field values, filters and the
// rows' API shape. No I/O; every function is thread-safe.
//
// Errors are kInvalidArgument with a message that names what is wrong; the
// messages of values and filters start with a structured code ("BAD_VALUE:
// Character.hp: expected int, got \"x\"") so hosts can pass them on as
// {"code", "message"}. The codes (data_codes below) are the ones the host
// data API, the admin API and keyed calls report.
#ifndef TESSERA_DATA_SCHEMA_H_
#define TESSERA_DATA_SCHEMA_H_

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "data/data_types.h"

namespace tessera::data {

// Structured error codes: a Status message "<CODE>: <text>" carries one.
namespace codes {
inline constexpr char kUnknownType[] = "UNKNOWN_TYPE";
inline constexpr char kUnknownField[] = "UNKNOWN_FIELD";
inline constexpr char kBadValue[] = "BAD_VALUE";  // type, range, size
inline constexpr char kBadFilter[] = "BAD_FILTER";
inline constexpr char kNoIndex[] =
    "NO_INDEX";  // lookup on a field without an index
inline constexpr char kRowNotFound[] = "ROW_NOT_FOUND";
inline constexpr char kRowExists[] = "ROW_EXISTS";  // insert with a taken id
inline constexpr char kUniqueViolation[] = "UNIQUE_VIOLATION";
inline constexpr char kDataOps[] = "DATA_OPS";         // over the per-call cap
inline constexpr char kKeyReused[] = "KEY_REUSED";     // keyed call, other args
inline constexpr char kUnavailable[] = "UNAVAILABLE";  // store down, try again
}  // namespace codes

// "<code>: <text>" as kInvalidArgument (kNotFound for kRowNotFound and
// kUnknownType, kAlreadyExists for kRowExists/kUniqueViolation).
Status DataError(std::string_view code, std::string_view text);
// The code of a message "<CODE>: ..." ("" when it has none).
std::string_view ErrorCodeOf(std::string_view message);

// Limits.
inline constexpr size_t kMaxTypes = 64;
inline constexpr size_t kMaxFieldsPerType = 128;
inline constexpr size_t kMaxStringBytes = 64 * 1024;  // a string field
inline constexpr size_t kMaxJsonFieldBytes = 256 * 1024;
inline constexpr size_t kMaxRowBytes = 1024 * 1024;  // fields_json
inline constexpr size_t kMaxIdBytes = 128;

// Parses the manifest's "data" value ({"types": [...]}, docs/data.md "The
// manifest"). Strict: unknown keys are refused. `where` prefixes messages
// ("app/tessera.json: data.types[0].fields[2].type: ...").
Result<DataSchema> ParseDataSchema(std::string_view json_text,
                                   std::string_view where);
// Compact JSON of `schema` in the manifest's shape (what GET /api/data
// shows and what the store keeps as the applied schema); parses back equal.
std::string DataSchemaJson(const DataSchema& schema);

// What applying `next` over `applied` does. Allowed: new types, new fields
// (they must be optional or have a default), new indexes (a unique one is
// checked against the rows by the store), an owner set where there was
// none. Anything else (a removed or renamed type or field, a changed field
// type, required flag or default, a removed index, a changed owner) refuses
// with kFailedPrecondition naming each change:
//   "data schema change refused: Character.hp: type int -> float (only
//    new types, fields and indexes apply at boot)".
struct SchemaChange {
  enum class Kind { kAddType, kAddField, kAddIndex, kSetOwner };
  Kind kind = Kind::kAddType;
  std::string type;
  std::string field;  // kAddField / kAddIndex / kSetOwner
};
Result<std::vector<SchemaChange>> DiffSchemas(const DataSchema& applied,
                                              const DataSchema& next);

// Checks a JSON object of field values against `type`: every key a
// declared field, every value of the field's type (null clears an optional
// field), sizes within the limits. With `insert`, fills defaults and
// checks required fields. Returns the object compacted. Errors:
// UNKNOWN_FIELD, BAD_VALUE (reserved names too).
Result<std::string> CheckFields(const EntityType& type,
                                std::string_view fields_json, bool insert);
// An id given by a caller: 1..kMaxIdBytes of [A-Za-z0-9_.:-]. BAD_VALUE.
Status CheckId(std::string_view id);

// A filter's JSON (the shape in data_types.h) against `type`. Errors:
// BAD_FILTER, UNKNOWN_FIELD.
Result<Filter> ParseFilter(const EntityType& type, std::string_view json_text);
// Whether `row` matches `filter` (the reference semantics the stores
// implement in SQL; the conformance suite checks both agree).
bool Matches(const EntityType& type, const Row& row, const Filter& filter);

// The API shape of a row: {"id", "createdAt", "updatedAt", "version",
// ...fields} (compact JSON; optional fields without a value are null).
std::string RowJson(const EntityType& type, const Row& row);

// Hex SHA-256 of `json_text` in canonical form (object keys sorted, no
// spaces), so {"a":1,"b":2} and { "b": 2, "a": 1 } hash the same. Errors:
// kInvalidArgument for text that is not JSON.
Result<std::string> CanonicalJsonHash(std::string_view json_text);

// A new row id: 20 characters of [0-9a-z], time-ordered (the first 9 are
// the unix ms in base 36) then random.
std::string NewRowId(int64_t now_ms);

}  // namespace tessera::data

#endif  // TESSERA_DATA_SCHEMA_H_
