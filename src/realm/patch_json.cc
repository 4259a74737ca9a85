// The JSON form of a patch (patch.h PatchFromJson / PatchToJson):
//   [{"op":"set","path":["a",0],"value":...}, {"op":"delete","path":[...]}]
// Checks shape only; whether the paths exist is ApplyPatch's business.
#include <cstdint>
#include <limits>
#include <string>

#include "common/text.h"
#include "realm/patch.h"

namespace tessera::realm {

namespace {

constexpr size_t kQuoteBytes = 64;

const char* JsonKind(const Json& v) {
  switch (v.type()) {
    case Json::value_t::null:
      return "null";
    case Json::value_t::boolean:
      return "bool";
    case Json::value_t::string:
      return "string";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
      return "integer";
    case Json::value_t::number_float:
      return "number";
    case Json::value_t::array:
      return "list";
    case Json::value_t::object:
      return "object";
    default:
      return "binary";
  }
}

Status Bad(size_t op, std::string_view field, const std::string& what) {
  std::string text = "op " + std::to_string(op) + ": ";
  if (!field.empty()) text += "field \"" + std::string(field) + "\": ";
  return InvalidArgument(text + what);
}

Result<OpKind> ParseKind(size_t i, const Json& op) {
  auto it = op.find("op");
  if (it == op.end()) return Bad(i, "op", "missing");
  if (!it->is_string()) {
    return Bad(i, "op", std::string("expected a string, got ") + JsonKind(*it));
  }
  const std::string& name = it->get_ref<const std::string&>();
  for (OpKind kind : {OpKind::kSet, OpKind::kDelete, OpKind::kAppend}) {
    if (name == OpName(kind)) return kind;
  }
  return Bad(i, "op",
             "unknown op \"" + EscapeForLog(name, kQuoteBytes) +
                 "\" (expected set, delete or append)");
}

Result<Path> ParsePath(size_t i, const Json& op) {
  auto it = op.find("path");
  if (it == op.end()) return Bad(i, "path", "missing");
  if (!it->is_array()) {
    return Bad(i, "path", std::string("expected a list, got ") + JsonKind(*it));
  }
  Path path;
  path.reserve(it->size());
  for (size_t k = 0; k < it->size(); ++k) {
    const Json& seg = (*it)[k];
    if (seg.is_string()) {
      path.emplace_back(seg.get<std::string>());
      continue;
    }
    if (seg.is_number_unsigned()) {
      const uint64_t v = seg.get<uint64_t>();
      if (v <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        path.emplace_back(static_cast<int64_t>(v));
        continue;
      }
    } else if (seg.is_number_integer() && seg.get<int64_t>() >= 0) {
      path.emplace_back(seg.get<int64_t>());
      continue;
    }
    return Bad(i, "path",
               "segment " + std::to_string(k) +
                   ": expected a key (string) or a list index (integer >= "
                   "0), got " +
                   EscapeForLog(
                       seg.dump(-1, ' ', false, Json::error_handler_t::replace),
                       kQuoteBytes));
  }
  return path;
}

}  // namespace

Result<Patch> PatchFromJson(const Json& ops) {
  if (!ops.is_array()) {
    return InvalidArgument(std::string("patch: expected a list of ops, got ") +
                           JsonKind(ops));
  }
  Patch patch;
  patch.reserve(ops.size());
  for (size_t i = 0; i < ops.size(); ++i) {
    const Json& j = ops[i];
    if (!j.is_object()) {
      return Bad(i, "", std::string("expected an object, got ") + JsonKind(j));
    }
    for (auto it = j.begin(); it != j.end(); ++it) {
      const std::string& name = it.key();
      if (name != "op" && name != "path" && name != "value") {
        return Bad(i, "",
                   "unknown field \"" + EscapeForLog(name, kQuoteBytes) +
                       "\" (expected op, path and value)");
      }
    }
    Op op;
    Result<OpKind> kind = ParseKind(i, j);
    if (!kind.ok()) return kind.status();
    op.kind = *kind;
    Result<Path> path = ParsePath(i, j);
    if (!path.ok()) return path.status();
    op.path = std::move(path).value();
    auto value = j.find("value");
    if (op.kind == OpKind::kDelete) {
      if (value != j.end()) return Bad(i, "value", "not allowed for delete");
    } else if (value == j.end()) {
      return Bad(i, "value",
                 "missing (" + std::string(OpName(op.kind)) + " needs one)");
    } else {
      op.value = *value;
    }
    patch.push_back(std::move(op));
  }
  return patch;
}

Json PatchToJson(const Patch& patch) {
  Json out = Json::array();
  for (const Op& op : patch) {
    Json path = Json::array();
    for (const PathSegment& seg : op.path) {
      if (const auto* key = std::get_if<std::string>(&seg)) {
        path.push_back(*key);
      } else {
        path.push_back(std::get<int64_t>(seg));
      }
    }
    Json j = {{"op", std::string(OpName(op.kind))}, {"path", std::move(path)}};
    if (op.kind != OpKind::kDelete) j["value"] = op.value;
    out.push_back(std::move(j));
  }
  return out;
}

}  // namespace tessera::realm
