// Invoke contracts and invoke policies (contract.h). Both arrive from the
// management API as untrusted JSON and are checked here, where they enter;
// the params they are applied to come from any caller.
#include "compute/contract.h"

#include <array>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/text.h"

namespace tessera::compute {
namespace {

using nlohmann::json;

// Bounds on one contract: fields per section, and the bytes of a field's
// name and of a description (they end up in TypeScript and in messages).
constexpr size_t kMaxFields = 128;
constexpr size_t kMaxNameBytes = 128;
constexpr size_t kMaxDescriptionBytes = 2048;
// How deep all_of / any_of may nest.
constexpr int kMaxPolicyDepth = 16;
// How deep a param_equals value may nest (JSON comparison recurses).
constexpr int kMaxValueDepth = 32;

constexpr std::array<const char*, 6> kTypes = {"int",  "float",  "string",
                                               "bool", "object", "array"};

// Policy leaves that need a model container to decide (the game-model
// authority tree's); compute invokes have none, so they deny. The data API
// adds its leaves here.
constexpr std::array<const char*, 1> kContainerLeaves = {"owner_of_self"};

json Parse(std::string_view text) {
  return json::parse(text, nullptr, /*allow_exceptions=*/false);
}

// A JSON value's type in the contract's words.
const char* TypeOf(const json& v) {
  switch (v.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::boolean:
      return "bool";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
      return "int";
    case json::value_t::number_float:
      return "float";
    case json::value_t::string:
      return "string";
    case json::value_t::array:
      return "array";
    case json::value_t::object:
      return "object";
    default:
      return "value";
  }
}

// At most kMaxNameBytes of untrusted text for a message, cut on a
// character boundary (the text came through the JSON parser, so it is
// valid UTF-8).
std::string Short(std::string_view s) {
  return std::string(Utf8Prefix(s, kMaxNameBytes));
}

std::string Quote(std::string_view s) {
  return json(Short(s)).dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string Join(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& line : lines) {
    if (!out.empty()) out += '\n';
    out += line;
  }
  return out;
}

bool HasControlChar(std::string_view s) {
  for (unsigned char c : s) {
    if (c < 0x20 || c == 0x7f) return true;
  }
  return false;
}

// "params.amount": a field as messages name it.
std::string FieldPath(std::string_view section, std::string_view name) {
  return std::string(section) + "." + std::string(name);
}

Status ParseField(std::string_view section, const std::string& name,
                  const json& spec, ContractField* out) {
  if (name.empty() || name.size() > kMaxNameBytes || HasControlChar(name)) {
    return InvalidArgument(std::string(section) + ": field name " +
                           Quote(name) +
                           " must be 1-128 bytes without control characters");
  }
  const std::string path = FieldPath(section, name);
  if (!spec.is_object()) {
    return InvalidArgument(path + ": expected an object, got " + TypeOf(spec));
  }
  out->name = name;
  bool has_type = false;
  for (const auto& [key, value] : spec.items()) {
    if (key == "type") {
      if (!value.is_string()) {
        return InvalidArgument(path + ".type: expected a string, got " +
                               TypeOf(value));
      }
      const std::string type = value.get<std::string>();
      bool known = false;
      for (const char* t : kTypes) known = known || type == t;
      if (!known) {
        return InvalidArgument(
            path + ".type: " + Quote(type) +
            " is not one of int, float, string, bool, object, array");
      }
      out->type = type;
      has_type = true;
    } else if (key == "required") {
      if (!value.is_boolean()) {
        return InvalidArgument(path + ".required: expected a bool, got " +
                               TypeOf(value));
      }
      out->required = value.get<bool>();
    } else if (key == "description") {
      if (!value.is_string()) {
        return InvalidArgument(path + ".description: expected a string, got " +
                               TypeOf(value));
      }
      out->description = value.get<std::string>();
      if (out->description.size() > kMaxDescriptionBytes) {
        return InvalidArgument(path + ".description: longer than 2048 bytes");
      }
    } else {
      return InvalidArgument(path + "." + Short(key) +
                             ": unknown field (type, required, description)");
    }
  }
  if (!has_type) return InvalidArgument(path + ".type: required");
  return Status::Ok();
}

Status ParseSection(std::string_view section, const json& value,
                    std::vector<ContractField>* out) {
  if (!value.is_object()) {
    return InvalidArgument(std::string(section) + ": expected an object, got " +
                           TypeOf(value));
  }
  if (value.size() > kMaxFields) {
    return InvalidArgument(std::string(section) + ": more than 128 fields");
  }
  for (const auto& [name, spec] : value.items()) {  // sorted by name
    ContractField field;
    TESSERA_RETURN_IF_ERROR(ParseField(section, name, spec, &field));
    out->push_back(std::move(field));
  }
  return Status::Ok();
}

bool Matches(const std::string& type, const json& v) {
  if (type == "int") return v.is_number_integer();
  if (type == "float") return v.is_number();
  if (type == "string") return v.is_string();
  if (type == "bool") return v.is_boolean();
  if (type == "object") return v.is_object();
  if (type == "array") return v.is_array();
  return false;
}

// ---- invoke policies

bool IsContainerLeaf(const std::string& type) {
  for (const char* leaf : kContainerLeaves) {
    if (type == leaf) return true;
  }
  return false;
}

// Whether `v`'s arrays and objects nest at most `depth` deep; the
// recursion stops at the limit.
bool DepthAtMost(const json& v, int depth) {
  if (!v.is_structured()) return true;
  if (depth == 0) return false;
  for (const json& child : v) {
    if (!DepthAtMost(child, depth - 1)) return false;
  }
  return true;
}

// Checks that `node` has only the fields in `allowed` besides "type".
Status OnlyFields(const json& node, const std::string& path,
                  std::initializer_list<const char*> allowed) {
  for (const auto& [key, value] : node.items()) {
    if (key == "type") continue;
    bool ok = false;
    for (const char* a : allowed) ok = ok || key == a;
    if (!ok) {
      return InvalidArgument(path + Short(key) +
                             ": unknown field for policy type " +
                             Quote(node["type"].get<std::string>()));
    }
  }
  return Status::Ok();
}

Status RequireString(const json& node, const std::string& path,
                     const char* key) {
  auto it = node.find(key);
  if (it == node.end()) return InvalidArgument(path + key + ": required");
  if (!it->is_string() || it->get<std::string>().empty()) {
    return InvalidArgument(path + key + ": expected a non-empty string, got " +
                           (it->is_string() ? "\"\"" : TypeOf(*it)));
  }
  return Status::Ok();
}

// `path` is the node's prefix in messages: "" at the root, then
// "policies[1]." and so on.
Status CheckNode(const json& node, const std::string& path, int depth) {
  const std::string here =
      path.empty() ? std::string("policy") : path.substr(0, path.size() - 1);
  if (depth > kMaxPolicyDepth) {
    return InvalidArgument(here + ": all_of / any_of nested deeper than 16");
  }
  if (!node.is_object()) {
    return InvalidArgument(here + ": expected an object, got " + TypeOf(node));
  }
  auto type_it = node.find("type");
  if (type_it == node.end()) return InvalidArgument(path + "type: required");
  if (!type_it->is_string()) {
    return InvalidArgument(path + "type: expected a string, got " +
                           TypeOf(*type_it));
  }
  const std::string type = type_it->get<std::string>();
  if (type == "anyone") return OnlyFields(node, path, {});
  if (type == "user_in_list") {
    TESSERA_RETURN_IF_ERROR(OnlyFields(node, path, {"users"}));
    auto it = node.find("users");
    if (it == node.end()) return InvalidArgument(path + "users: required");
    if (!it->is_array()) {
      return InvalidArgument(path + "users: expected an array, got " +
                             TypeOf(*it));
    }
    for (size_t i = 0; i < it->size(); ++i) {
      if (!(*it)[i].is_string()) {
        return InvalidArgument(path + "users[" + std::to_string(i) +
                               "]: expected a string, got " + TypeOf((*it)[i]));
      }
    }
    return Status::Ok();
  }
  if (type == "param_equals") {
    TESSERA_RETURN_IF_ERROR(OnlyFields(node, path, {"param", "value"}));
    TESSERA_RETURN_IF_ERROR(RequireString(node, path, "param"));
    auto value = node.find("value");
    if (value == node.end()) return InvalidArgument(path + "value: required");
    if (!DepthAtMost(*value, kMaxValueDepth)) {
      return InvalidArgument(path + "value: nested deeper than 32");
    }
    return Status::Ok();
  }
  if (type == "param_is_caller") {
    TESSERA_RETURN_IF_ERROR(OnlyFields(node, path, {"param"}));
    return RequireString(node, path, "param");
  }
  if (type == "all_of" || type == "any_of") {
    TESSERA_RETURN_IF_ERROR(OnlyFields(node, path, {"policies"}));
    auto it = node.find("policies");
    if (it == node.end()) return InvalidArgument(path + "policies: required");
    if (!it->is_array()) {
      return InvalidArgument(path + "policies: expected an array, got " +
                             TypeOf(*it));
    }
    // An empty all_of would let everyone in by accident.
    if (it->empty()) return InvalidArgument(path + "policies: empty");
    for (size_t i = 0; i < it->size(); ++i) {
      TESSERA_RETURN_IF_ERROR(CheckNode(
          (*it)[i], path + "policies[" + std::to_string(i) + "].", depth + 1));
    }
    return Status::Ok();
  }
  if (IsContainerLeaf(type)) return Status::Ok();  // valid; denies here
  return InvalidArgument(path + "type: unknown policy type " + Quote(type));
}

// Evaluates a node CheckNode accepted.
bool Allowed(const json& node, std::string_view caller, const json& params) {
  const std::string type = node["type"].get<std::string>();
  if (type == "anyone") return true;
  if (type == "user_in_list") {
    if (caller.empty()) return false;
    for (const json& user : node["users"]) {
      if (user.get<std::string>() == caller) return true;
    }
    return false;
  }
  if (type == "param_equals" || type == "param_is_caller") {
    const std::string param = node["param"].get<std::string>();
    auto it = params.find(param);
    if (it == params.end()) return false;
    if (type == "param_equals") return *it == node["value"];
    return !caller.empty() && it->is_string() &&
           it->get<std::string>() == caller;
  }
  if (type == "all_of") {
    for (const json& child : node["policies"]) {
      if (!Allowed(child, caller, params)) return false;
    }
    return true;
  }
  if (type == "any_of") {
    for (const json& child : node["policies"]) {
      if (Allowed(child, caller, params)) return true;
    }
    return false;
  }
  return false;  // container leaves fail closed
}

}  // namespace

Result<Contract> ParseContract(std::string_view text) {
  const json doc = Parse(text);
  if (doc.is_discarded()) return InvalidArgument("contract: not valid JSON");
  if (!doc.is_object()) {
    return InvalidArgument(std::string("contract: expected an object, got ") +
                           TypeOf(doc));
  }
  Contract contract;
  for (const auto& [key, value] : doc.items()) {
    if (key == "description") {
      if (!value.is_string()) {
        return InvalidArgument(
            std::string("description: expected a string, got ") +
            TypeOf(value));
      }
      contract.description = value.get<std::string>();
      if (contract.description.size() > kMaxDescriptionBytes) {
        return InvalidArgument("description: longer than 2048 bytes");
      }
    } else if (key == "params") {
      TESSERA_RETURN_IF_ERROR(ParseSection("params", value, &contract.params));
    } else if (key == "result") {
      TESSERA_RETURN_IF_ERROR(ParseSection("result", value, &contract.result));
    } else {
      return InvalidArgument(Short(key) +
                             ": unknown contract field (description, params, "
                             "result)");
    }
  }
  return contract;
}

Status ValidateParams(const Contract& contract, std::string_view params_json) {
  const json params = Parse(params_json);
  if (params.is_discarded()) return InvalidArgument("params: not valid JSON");
  if (!params.is_object()) {
    return InvalidArgument(std::string("params: expected an object, got ") +
                           TypeOf(params));
  }
  std::vector<std::string> errors;
  for (const ContractField& field : contract.params) {
    const std::string path = FieldPath("params", field.name);
    auto it = params.find(field.name);
    if (it == params.end()) {
      if (field.required) errors.push_back(path + ": required");
      continue;
    }
    if (!Matches(field.type, *it)) {
      errors.push_back(path + ": expected " + field.type + ", got " +
                       TypeOf(*it));
    } else if (field.type == "int" && it->is_number_unsigned() &&
               it->get<uint64_t>() >
                   static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      errors.push_back(path + ": " + it->dump() +
                       " is out of range for int (64-bit)");
    }
  }
  if (!errors.empty()) return InvalidArgument(Join(errors));
  return Status::Ok();
}

Status CheckInvokePolicy(std::string_view text) {
  const json doc = Parse(text);
  if (doc.is_discarded()) return InvalidArgument("policy: not valid JSON");
  return CheckNode(doc, "", 0);
}

bool InvokeAllowed(std::string_view policy_json,
                   std::string_view caller_user_id,
                   std::string_view params_json) {
  const json policy = Parse(policy_json);
  if (policy.is_discarded() || !CheckNode(policy, "", 0).ok()) return false;
  json params = Parse(params_json);
  if (params.is_discarded() || !params.is_object()) params = json::object();
  return Allowed(policy, caller_user_id, params);
}

}  // namespace tessera::compute
