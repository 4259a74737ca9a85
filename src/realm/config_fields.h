// Shared by the realm kind's config parsers (kind.cc, rules.cc, limits.cc):
// how a refused field is described. Internal to tessera_realm_rules.
#ifndef TESSERA_REALM_CONFIG_FIELDS_H_
#define TESSERA_REALM_CONFIG_FIELDS_H_

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

#include "common/status.h"
#include "realm/patch.h"

namespace tessera::realm::internal {

// "an integer", "a string", ... for "expected X, got Y".
std::string Describe(const Json& value);

// `where` + "." + `field` ("where" alone when field is empty).
std::string FieldName(std::string_view where, std::string_view field);

// kInvalidArgument "<field>: <what>".
Status FieldError(std::string_view where, std::string_view field,
                  const std::string& what);

// Refuses the first key of object `obj` not in `known`, naming it and
// listing the known ones.
Status CheckKnownFields(const Json& obj, std::string_view where,
                        std::initializer_list<std::string_view> known);

// Reads optional integer `key` of `obj` into *out when present, checking
// min <= value <= max; `*present` says it was there.
Status ReadInt(const Json& obj, std::string_view where, std::string_view key,
               int64_t min, int64_t max, int64_t* out, bool* present);

}  // namespace tessera::realm::internal

#endif  // TESSERA_REALM_CONFIG_FIELDS_H_
