#include "realm/config_fields.h"

namespace tessera::realm::internal {

std::string Describe(const Json& value) {
  switch (value.type()) {
    case Json::value_t::null:
      return "null";
    case Json::value_t::object:
      return "an object";
    case Json::value_t::array:
      return "an array";
    case Json::value_t::string:
      return "a string";
    case Json::value_t::boolean:
      return "a boolean";
    case Json::value_t::number_float:
      return "a fractional number";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
      return "an integer";
    default:
      return "an unsupported value";
  }
}

std::string FieldName(std::string_view where, std::string_view field) {
  std::string out(where);
  if (!field.empty()) {
    if (!out.empty()) out += ".";
    out += field;
  }
  return out;
}

Status FieldError(std::string_view where, std::string_view field,
                  const std::string& what) {
  return InvalidArgument(FieldName(where, field) + ": " + what);
}

Status CheckKnownFields(const Json& obj, std::string_view where,
                        std::initializer_list<std::string_view> known) {
  for (const auto& [key, value] : obj.items()) {
    bool found = false;
    for (std::string_view k : known) found = found || k == key;
    if (found) continue;
    std::string list;
    for (std::string_view k : known) {
      if (!list.empty()) list += ", ";
      list += k;
    }
    return FieldError(where, "",
                      "unknown field \"" + key + "\" (known: " + list + ")");
  }
  return Status::Ok();
}

Status ReadInt(const Json& obj, std::string_view where, std::string_view key,
               int64_t min, int64_t max, int64_t* out, bool* present) {
  auto it = obj.find(std::string(key));
  *present = it != obj.end();
  if (!*present) return Status::Ok();
  if (!it->is_number_integer()) {
    return FieldError(where, key, "expected an integer, got " + Describe(*it));
  }
  const bool too_big = it->is_number_unsigned() &&
                       it->get<uint64_t>() > static_cast<uint64_t>(max);
  const int64_t value = too_big ? max : it->get<int64_t>();
  if (too_big || value < min || value > max) {
    return FieldError(where, key,
                      "must be in " + std::to_string(min) + ".." +
                          std::to_string(max) + ", got " + it->dump());
  }
  *out = value;
  return Status::Ok();
}

}  // namespace tessera::realm::internal
