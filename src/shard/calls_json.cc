#include "shard/calls_json.h"

#include <algorithm>
#include <functional>
#include <nlohmann/json.hpp>
#include <set>
#include <utility>

#include "common/text.h"
#include "tessera/abi.h"

namespace tessera::shard {
namespace {

using json = nlohmann::json;

constexpr size_t kQuotedBytes = 64;  // of a guest string quoted in a line

std::string Quote(std::string_view text) {
  return "\"" + EscapeForLog(text, kQuotedBytes) + "\"";
}

std::string Dump(const json& value) {
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

// Watches a parse: nesting depth, and member names given twice in one
// element (the objects directly inside the top-level array).
class Watcher {
 public:
  bool operator()(int depth, json::parse_event_t event, json& parsed) {
    if (depth > static_cast<int>(kMaxCallsJsonDepth)) too_deep_ = true;
    switch (event) {
      case json::parse_event_t::object_start:
        if (depth == 1) {
          names_.clear();
          element_ = true;
        } else {
          ++inner_objects_;
        }
        break;
      case json::parse_event_t::object_end:
        if (inner_objects_ > 0) {
          --inner_objects_;
        } else {
          element_ = false;
        }
        break;
      case json::parse_event_t::key:
        if (element_ && inner_objects_ == 0 && parsed.is_string() &&
            !names_.insert(parsed.get<std::string>()).second) {
          duplicates_.insert(element_index_);
        }
        break;
      case json::parse_event_t::value:
      case json::parse_event_t::array_end:
        break;
      case json::parse_event_t::array_start:
        break;
    }
    // Count the elements of the top-level array as they end.
    if (depth == 1 && (event == json::parse_event_t::object_end ||
                       event == json::parse_event_t::array_end ||
                       event == json::parse_event_t::value)) {
      ++element_index_;
    }
    return true;
  }
  bool too_deep() const { return too_deep_; }
  bool duplicated(size_t index) const { return duplicates_.count(index) > 0; }

 private:
  bool too_deep_ = false;
  bool element_ = false;
  int inner_objects_ = 0;
  size_t element_index_ = 0;
  std::set<std::string> names_;
  std::set<size_t> duplicates_;
};

// Parses a whole output; on failure `error` says why and null is returned.
json ParseArray(std::string_view text, const char* what, Watcher& watcher,
                std::string* error) {
  json root;
  try {
    root = json::parse(text.begin(), text.end(), std::ref(watcher));
  } catch (const json::exception& e) {
    // "[json.exception.parse_error.101] parse error at ...": the part after
    // the bracket.
    std::string_view message = e.what();
    if (size_t end = message.find("] "); end != std::string_view::npos) {
      message.remove_prefix(end + 2);
    }
    *error = std::string(what) + " output refused: not JSON (" +
             EscapeForLog(message, 200) + ")";
    return json();
  }
  if (watcher.too_deep()) {
    *error = std::string(what) + " output refused: nested deeper than " +
             std::to_string(kMaxCallsJsonDepth) + " levels";
    return json();
  }
  if (!root.is_array()) {
    *error = std::string(what) + " output refused: not a JSON array (" +
             root.type_name() + ")";
    return json();
  }
  return root;
}

// A string member of `element` of 1..max_bytes bytes; false with *why set
// otherwise.
bool StringMember(const json& element, const char* name, size_t max_bytes,
                  std::string* out, std::string* why) {
  auto it = element.find(name);
  if (it == element.end()) {
    *why = std::string(name) + " missing";
    return false;
  }
  if (!it->is_string()) {
    *why = std::string(name) + " is " + it->type_name() + ", not a string";
    return false;
  }
  const std::string& value = it->get_ref<const std::string&>();
  if (value.empty()) {
    *why = std::string(name) + " is empty";
    return false;
  }
  if (value.size() > max_bytes) {
    *why = std::string(name) + " is " + std::to_string(value.size()) +
           " bytes, over " + std::to_string(max_bytes);
    return false;
  }
  *out = value;
  return true;
}

// The first member of `element` not in `known`, or nullptr.
const std::string* UnknownMember(const json& element,
                                 std::initializer_list<const char*> known) {
  for (auto it = element.begin(); it != element.end(); ++it) {
    bool found = false;
    for (const char* name : known) found = found || it.key() == name;
    if (!found) return &it.key();
  }
  return nullptr;
}

// Why element `index` is not an object with known, unique members; empty
// if it is.
std::string ShapeProblem(const json& element, size_t index,
                         const Watcher& watcher,
                         std::initializer_list<const char*> known) {
  if (!element.is_object()) {
    return std::string("is ") + element.type_name() + ", not an object";
  }
  if (watcher.duplicated(index)) return "has a member given twice";
  if (const std::string* unknown = UnknownMember(element, known)) {
    return "has an unknown member " + Quote(*unknown);
  }
  return std::string();
}

}  // namespace

ParsedCalls ParseCalls(std::string_view text) {
  ParsedCalls parsed;
  Watcher watcher;
  std::string error;
  json root = ParseArray(text, abi::kExportCalls, watcher, &error);
  if (!error.empty()) {
    parsed.refusals.push_back(std::move(error));
    parsed.refused = 1;
    return parsed;
  }
  std::set<std::string, std::less<>> keys;
  for (size_t i = 0; i < root.size(); ++i) {
    const json& element = root[i];
    std::string why =
        ShapeProblem(element, i, watcher, {"key", "function", "args"});
    CallRequest call;
    if (why.empty() &&
        StringMember(element, "key", abi::kMaxCallKeyBytes, &call.key, &why) &&
        StringMember(element, "function", abi::kMaxCallFunctionBytes,
                     &call.function, &why)) {
      auto args = element.find("args");
      call.args_json = args == element.end() ? "null" : Dump(*args);
      if (call.args_json.size() > abi::kMaxCallArgsBytes) {
        why = "args are " + std::to_string(call.args_json.size()) +
              " bytes of JSON, over " + std::to_string(abi::kMaxCallArgsBytes);
      }
    }
    if (!why.empty()) {
      std::string line = "call " + std::to_string(i);
      if (!call.key.empty()) line += " (key " + Quote(call.key) + ")";
      parsed.refusals.push_back(line + " refused: " + why);
      ++parsed.refused;
      continue;
    }
    // The same key twice in one list is one call (the first).
    if (!keys.insert(call.key).second) continue;
    parsed.calls.push_back(std::move(call));
  }
  return parsed;
}

ParsedWrites ParseWrites(std::string_view text) {
  ParsedWrites parsed;
  Watcher watcher;
  std::string error;
  json root = ParseArray(text, abi::kExportWrites, watcher, &error);
  if (!error.empty()) {
    parsed.refusals.push_back(std::move(error));
    parsed.refused = 1;
    return parsed;
  }
  const size_t take = std::min<size_t>(root.size(), abi::kMaxWritesPerTick);
  for (size_t i = 0; i < take; ++i) {
    const json& element = root[i];
    std::string why =
        ShapeProblem(element, i, watcher, {"entity", "id", "set"});
    EntityWrite write;
    // Entity type names and row ids are checked by the data layer; here
    // only their shape (and a bound, so a line or a map key stays small).
    if (why.empty() &&
        StringMember(element, "entity", kMaxWriteEntityBytes, &write.entity,
                     &why) &&
        StringMember(element, "id", kMaxWriteIdBytes, &write.id, &why)) {
      auto set = element.find("set");
      if (set == element.end()) {
        why = "set missing";
      } else if (!set->is_object()) {
        why = std::string("set is ") + set->type_name() + ", not an object";
      } else if (set->empty()) {
        why = "set is an empty object";
      } else {
        write.set_json = Dump(*set);
      }
    }
    if (!why.empty()) {
      std::string line = "write " + std::to_string(i);
      if (!write.entity.empty() && !write.id.empty()) {
        line += " (" + Quote(write.entity) + " " + Quote(write.id) + ")";
      }
      parsed.refusals.push_back(line + " refused: " + why);
      ++parsed.refused;
      continue;
    }
    parsed.writes.push_back(std::move(write));
  }
  if (root.size() > take) {
    const size_t over = root.size() - take;
    parsed.refusals.push_back(std::to_string(over) + " write" +
                              (over == 1 ? "" : "s") +
                              " refused: one tick gives at most " +
                              std::to_string(abi::kMaxWritesPerTick));
    parsed.refused += over;
  }
  return parsed;
}

std::string CallResultArgument(const CallResult& result) {
  json arg = json::object();
  arg["key"] = result.key;
  std::string error = result.error;
  bool ok = result.ok;
  json value;
  if (ok) {
    if (result.result_json.size() > abi::kMaxCallResultBytes) {
      ok = false;
      error = "RESULT_TOO_LARGE: the result is " +
              std::to_string(result.result_json.size()) +
              " bytes of JSON, over " +
              std::to_string(abi::kMaxCallResultBytes);
    } else {
      Watcher watcher;
      try {
        value = json::parse(result.result_json.begin(),
                            result.result_json.end(), std::ref(watcher));
        if (watcher.too_deep()) {
          ok = false;
          error = "BAD_RESULT: the result is nested deeper than " +
                  std::to_string(kMaxCallsJsonDepth) + " levels";
        }
      } catch (const json::exception&) {
        ok = false;
        error = "BAD_RESULT: the result is not JSON";
      }
    }
  }
  arg["ok"] = ok;
  if (ok) {
    arg["result"] = std::move(value);
  } else {
    arg["error"] = SafeUtf8(error, abi::kMaxCallResultBytes);
  }
  return Dump(arg);
}

}  // namespace tessera::shard
