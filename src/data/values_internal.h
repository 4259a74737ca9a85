// Helpers shared by the data layer's pure logic (schema.cc, values.cc,
// filter.cc): checking one JSON value against a field's type. Internal to
// tessera_data; not part of its interface.
#ifndef TESSERA_DATA_VALUES_INTERNAL_H_
#define TESSERA_DATA_VALUES_INTERNAL_H_

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "common/status.h"
#include "data/data_types.h"

namespace tessera::data::internal {

// A short quote of `value` for messages ("got \"x\"").
std::string Quote(const nlohmann::json& value);

// Checks `value` (not null) against `type`; on success returns it in its
// stored form (an int given to a float field becomes a double). On failure
// the text (without code) says what is wrong: "expected int, got \"x\"".
Result<nlohmann::json> CheckValue(FieldType type, const nlohmann::json& value);

// Whether `name` matches [first][A-Za-z0-9_]{0,63} where `first` is
// `upper` ? [A-Z] : [a-z].
bool ValidName(std::string_view name, bool upper);
bool IsReserved(std::string_view name);

}  // namespace tessera::data::internal

#endif  // TESSERA_DATA_VALUES_INTERNAL_H_
