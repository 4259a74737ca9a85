#include "app/manifest.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <system_error>
#include <tuple>

#include "app/manifest_realms.h"
#include "data/schema.h"

namespace tessera::app {
namespace {

using nlohmann::json;

constexpr std::string_view kTopFields[] = {"name", "shards", "compute", "data",
                                           "realms"};
constexpr std::string_view kComputeFields[] = {
    "name",     "description", "source",  "crate",
    "alwaysOn", "enabled",     "triggers"};
// The compute API's trigger body (server/compute_json.cc checks the values).
constexpr std::string_view kTriggerFields[] = {
    "triggerType", "tickHz",       "onEvent",      "eventName",
    "entityType",  "fieldName",    "functionName", "debounceMs",
    "exportName",  "invokePolicy", "contract"};
constexpr std::string_view kKindFields[] = {"name",
                                            "source",
                                            "crate",
                                            "wasm",
                                            "codec",
                                            "tickRate",
                                            "tickBudgetMs",
                                            "memoryMb",
                                            "fuelPerTick",
                                            "maxRunMs",
                                            "idleShutdownSecs",
                                            "onStop",
                                            "writeFlushMs",
                                            "recordInputs",
                                            "recordMb"};

// Levenshtein distance, for "did you mean" hints on unknown fields.
size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      char ca =
          static_cast<char>(std::tolower(static_cast<unsigned char>(a[i - 1])));
      char cb =
          static_cast<char>(std::tolower(static_cast<unsigned char>(b[j - 1])));
      row[j] =
          std::min({row[j] + 1, row[j - 1] + 1, diag + (ca == cb ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

// "an integer", "a string", ... for "expected X, got Y" messages.
std::string Describe(const json& v) {
  switch (v.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::object:
      return "an object";
    case json::value_t::array:
      return "an array";
    case json::value_t::string:
      return "a string";
    case json::value_t::boolean:
      return "a boolean";
    case json::value_t::number_float:
      return "a fractional number";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
      return "an integer";
    default:
      return "an unsupported value";
  }
}

// Builds the error messages of one manifest file.
class Errors {
 public:
  explicit Errors(const std::string& file) : file_(file) {}

  Status At(const std::string& field, const std::string& what) const {
    if (field.empty()) return InvalidArgument(file_ + ": " + what);
    return InvalidArgument(file_ + ": " + field + ": " + what);
  }

  Status WrongType(const std::string& field, const char* expected,
                   const json& got) const {
    return At(field,
              std::string("expected ") + expected + ", got " + Describe(got));
  }

  // Refuses fields of `obj` not in `known`.
  template <size_t N>
  Status CheckFields(const json& obj, const std::string& where,
                     const std::string_view (&known)[N]) const {
    for (const auto& [key, value] : obj.items()) {
      if (std::find(std::begin(known), std::end(known), key) !=
          std::end(known)) {
        continue;
      }
      std::string msg = "unknown field \"" + key + "\"";
      std::string_view best;
      size_t best_distance = 3;  // suggest only close matches
      for (std::string_view k : known) {
        size_t d = EditDistance(key, k);
        if (d < best_distance) {
          best_distance = d;
          best = k;
        }
      }
      if (!best.empty())
        msg += " (did you mean \"" + std::string(best) + "\"?)";
      return At(where, msg);
    }
    return Status::Ok();
  }

 private:
  const std::string& file_;
};

std::string Join(const std::string& path, const char* key) {
  return path.empty() ? key : path + "." + key;
}

// Reads optional integer `key` of `obj` into *out when present, checking
// min <= value <= max.
template <typename T>
Status ReadUint(const Errors& err, const json& obj, const std::string& path,
                const char* key, uint64_t min, uint64_t max, T* out) {
  auto it = obj.find(key);
  if (it == obj.end()) return Status::Ok();
  const std::string field = Join(path, key);
  if (!it->is_number_integer()) return err.WrongType(field, "an integer", *it);
  const bool negative = !it->is_number_unsigned();
  const uint64_t value = negative ? 0 : it->template get<uint64_t>();
  if (negative || value < min || value > max) {
    // Limits at or above 2^32-1 only guard representability: state them
    // only when they were crossed.
    const bool bounded = max < std::numeric_limits<uint32_t>::max();
    std::string rule;
    if (bounded) {
      rule = "must be in " + std::to_string(min) + ".." + std::to_string(max);
    } else if (negative || value < min) {
      rule = "must be >= " + std::to_string(min);
    } else {
      rule = "must be at most " + std::to_string(max);
    }
    return err.At(field, rule + ", got " + it->dump());
  }
  *out = static_cast<T>(it->template get<uint64_t>());
  return Status::Ok();
}

// Reads optional string `key` into *out when present.
Status ReadString(const Errors& err, const json& obj, const std::string& path,
                  const char* key, std::string* out, bool* present) {
  auto it = obj.find(key);
  *present = it != obj.end();
  if (!*present) return Status::Ok();
  if (!it->is_string()) return err.WrongType(Join(path, key), "a string", *it);
  *out = it->get<std::string>();
  return Status::Ok();
}

bool IsValidModuleName(std::string_view name);

// An export name: [A-Za-z_][A-Za-z0-9_]{0,127}.
bool IsValidExportName(std::string_view name) {
  if (name.empty() || name.size() > 128) return false;
  if (std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  return std::all_of(name.begin(), name.end(), [](char ch) {
    return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_';
  });
}

// A kind's onStop: an http(s):// URL with a host, "module.export" or a bare
// export name (server/stop_functions.h resolves the function).
bool IsValidOnStop(std::string_view value) {
  for (std::string_view scheme : {"http://", "https://"}) {
    if (value.substr(0, scheme.size()) == scheme) {
      std::string_view rest = value.substr(scheme.size());
      return !rest.empty() && rest[0] != '/' &&
             std::none_of(rest.begin(), rest.end(), [](char ch) {
               return std::isspace(static_cast<unsigned char>(ch)) ||
                      std::iscntrl(static_cast<unsigned char>(ch));
             });
    }
  }
  size_t dot = value.find('.');
  if (dot == std::string_view::npos) return IsValidExportName(value);
  return IsValidModuleName(value.substr(0, dot)) &&
         IsValidExportName(value.substr(dot + 1));
}

Status ReadBool(const Errors& err, const json& obj, const std::string& path,
                const char* key, bool* out);

Result<ShardKindSpec> ParseKind(const Errors& err, const json& obj,
                                const std::string& path,
                                const std::filesystem::path& dir) {
  if (!obj.is_object()) return err.WrongType(path, "an object", obj);
  TESSERA_RETURN_IF_ERROR(err.CheckFields(obj, path, kKindFields));

  ShardKindSpec spec;
  shard::KindConfig& c = spec.config;
  bool present = false;
  TESSERA_RETURN_IF_ERROR(
      ReadString(err, obj, path, "name", &c.name, &present));
  if (!present) return err.At(path, "missing required field \"name\"");
  if (!IsValidKindName(c.name)) {
    return err.At(Join(path, "name"),
                  "\"" + c.name +
                      "\" is not a valid kind name (lowercase letter, then up "
                      "to 63 of [a-z0-9_-])");
  }

  std::string source, crate, wasm, codec;
  bool has_source = false, has_crate = false, has_wasm = false,
       has_codec = false;
  TESSERA_RETURN_IF_ERROR(
      ReadString(err, obj, path, "source", &source, &has_source));
  TESSERA_RETURN_IF_ERROR(
      ReadString(err, obj, path, "crate", &crate, &has_crate));
  TESSERA_RETURN_IF_ERROR(ReadString(err, obj, path, "wasm", &wasm, &has_wasm));
  const int origins = int{has_source} + int{has_crate} + int{has_wasm};
  if (origins != 1) {
    return err.At(path, origins > 1
                            ? "gives more than one of \"source\", \"crate\" "
                              "and \"wasm\"; give exactly one"
                            : "needs \"source\" (a directory of .cc files), "
                              "\"crate\" (a Rust crate directory) or "
                              "\"wasm\" (a prebuilt module)");
  }
  for (auto [has, value, field] : {std::tuple{has_source, &source, "source"},
                                   std::tuple{has_crate, &crate, "crate"},
                                   std::tuple{has_wasm, &wasm, "wasm"}}) {
    if (has && value->empty())
      return err.At(Join(path, field), "must not be empty");
  }

  TESSERA_RETURN_IF_ERROR(
      ReadString(err, obj, path, "codec", &codec, &has_codec));
  if (has_codec) {
    if (codec == "msgpack") {
      c.codec = shard::Codec::kMsgpack;
    } else if (codec == "json") {
      c.codec = shard::Codec::kJson;
    } else {
      return err.At(Join(path, "codec"),
                    "must be \"msgpack\" or \"json\", got \"" + codec + "\"");
    }
  }
  constexpr uint64_t kU32Max = std::numeric_limits<uint32_t>::max();
  TESSERA_RETURN_IF_ERROR(
      ReadUint(err, obj, path, "tickRate", 1, 1000, &c.tick_rate));
  TESSERA_RETURN_IF_ERROR(
      ReadUint(err, obj, path, "tickBudgetMs", 1, kU32Max, &c.tick_budget_ms));
  TESSERA_RETURN_IF_ERROR(
      ReadUint(err, obj, path, "memoryMb", 1, 4096, &c.memory_mb));
  // Fuel is an i64 global in the guest: keep it representable.
  TESSERA_RETURN_IF_ERROR(ReadUint(err, obj, path, "fuelPerTick", 1000,
                                   std::numeric_limits<int64_t>::max(),
                                   &c.fuel_per_tick));
  TESSERA_RETURN_IF_ERROR(
      ReadUint(err, obj, path, "maxRunMs", 1, kU32Max, &c.max_run_ms));
  TESSERA_RETURN_IF_ERROR(ReadUint(err, obj, path, "idleShutdownSecs", 0,
                                   kU32Max, &c.idle_shutdown_secs));
  TESSERA_RETURN_IF_ERROR(
      ReadUint(err, obj, path, "writeFlushMs", 100, 60000, &c.write_flush_ms));
  TESSERA_RETURN_IF_ERROR(
      ReadBool(err, obj, path, "recordInputs", &c.record_inputs));
  TESSERA_RETURN_IF_ERROR(
      ReadUint(err, obj, path, "recordMb", 1, 4096, &c.record_mb));
  TESSERA_RETURN_IF_ERROR(
      ReadString(err, obj, path, "onStop", &c.on_stop, &present));
  if (present && !IsValidOnStop(c.on_stop)) {
    return err.At(Join(path, "onStop"),
                  "\"" + c.on_stop +
                      "\" is neither an http(s):// URL nor a function "
                      "(\"module.export\" or an export name)");
  }

  if (has_source || has_crate) {
    (has_source ? spec.source : spec.crate_dir) =
        (dir / (has_source ? source : crate)).lexically_normal();
    spec.output = (dir / kBuildDirName / (c.name + ".wasm")).lexically_normal();
  } else {
    spec.wasm = (dir / wasm).lexically_normal();
    spec.output = spec.wasm;
  }
  return spec;
}

Status ReadBool(const Errors& err, const json& obj, const std::string& path,
                const char* key, bool* out) {
  auto it = obj.find(key);
  if (it == obj.end()) return Status::Ok();
  if (!it->is_boolean())
    return err.WrongType(Join(path, key), "a boolean", *it);
  *out = it->get<bool>();
  return Status::Ok();
}

bool IsValidModuleName(std::string_view name) {
  if (name.empty() || name.size() > 128) return false;
  if (name[0] < 'a' || name[0] > 'z') return false;
  return std::all_of(name.begin() + 1, name.end(), [](char ch) {
    return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_' ||
           ch == '-';
  });
}

Result<ComputeModuleSpec> ParseComputeModule(const Errors& err, const json& obj,
                                             const std::string& path,
                                             const std::filesystem::path& dir,
                                             const std::string& file_label) {
  if (!obj.is_object()) return err.WrongType(path, "an object", obj);
  TESSERA_RETURN_IF_ERROR(err.CheckFields(obj, path, kComputeFields));
  ComputeModuleSpec spec;
  spec.where = file_label + ": " + path;
  bool present = false;
  TESSERA_RETURN_IF_ERROR(
      ReadString(err, obj, path, "name", &spec.name, &present));
  if (!present) return err.At(path, "missing required field \"name\"");
  if (!IsValidModuleName(spec.name)) {
    return err.At(Join(path, "name"),
                  "\"" + spec.name +
                      "\" is not a valid module name (lowercase letter, then "
                      "up to 127 of [a-z0-9_-])");
  }
  TESSERA_RETURN_IF_ERROR(
      ReadString(err, obj, path, "description", &spec.description, &present));
  std::string source, crate;
  bool has_source = false, has_crate = false;
  TESSERA_RETURN_IF_ERROR(
      ReadString(err, obj, path, "source", &source, &has_source));
  TESSERA_RETURN_IF_ERROR(
      ReadString(err, obj, path, "crate", &crate, &has_crate));
  if (has_source == has_crate) {
    return err.At(path, has_source
                            ? "gives both \"source\" and \"crate\"; give one"
                            : "needs \"source\" (a directory of C++ sources) "
                              "or \"crate\" (a Rust crate directory)");
  }
  const std::string& rel = has_source ? source : crate;
  if (rel.empty()) {
    return err.At(Join(path, has_source ? "source" : "crate"),
                  "must not be empty");
  }
  (has_source ? spec.source : spec.crate_dir) = (dir / rel).lexically_normal();
  TESSERA_RETURN_IF_ERROR(
      ReadBool(err, obj, path, "alwaysOn", &spec.always_on));
  TESSERA_RETURN_IF_ERROR(ReadBool(err, obj, path, "enabled", &spec.enabled));
  auto triggers = obj.find("triggers");
  if (triggers != obj.end()) {
    const std::string tpath = Join(path, "triggers");
    if (!triggers->is_array()) {
      return err.WrongType(tpath, "an array", *triggers);
    }
    for (size_t i = 0; i < triggers->size(); ++i) {
      const std::string at = tpath + "[" + std::to_string(i) + "]";
      const json& t = (*triggers)[i];
      if (!t.is_object()) return err.WrongType(at, "an object", t);
      TESSERA_RETURN_IF_ERROR(err.CheckFields(t, at, kTriggerFields));
      auto type = t.find("triggerType");
      if (type == t.end()) {
        return err.At(at, "missing required field \"triggerType\"");
      }
      if (!type->is_string()) {
        return err.WrongType(Join(at, "triggerType"), "a string", *type);
      }
      spec.triggers.push_back(t.dump());
    }
  }
  return spec;
}

// Tracks the keys of each open object during parsing to catch duplicates,
// which nlohmann::json would otherwise silently collapse.
class DuplicateKeyFinder {
 public:
  bool operator()(int /*depth*/, json::parse_event_t event, json& parsed) {
    switch (event) {
      case json::parse_event_t::object_start:
        open_.emplace_back();
        break;
      case json::parse_event_t::object_end:
        if (!open_.empty()) open_.pop_back();
        break;
      case json::parse_event_t::key:
        if (!open_.empty() && parsed.is_string() &&
            !open_.back().insert(parsed.get<std::string>()).second &&
            duplicate_.empty()) {
          duplicate_ = parsed.get<std::string>();
        }
        break;
      default:
        break;
    }
    return true;
  }
  const std::string& duplicate() const { return duplicate_; }

 private:
  std::vector<std::set<std::string>> open_;
  std::string duplicate_;
};

}  // namespace

bool IsValidKindName(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  if (name[0] < 'a' || name[0] > 'z') return false;
  return std::all_of(name.begin() + 1, name.end(), [](char ch) {
    return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_' ||
           ch == '-';
  });
}

const ShardKindSpec* Manifest::FindKind(std::string_view kind_name) const {
  for (const ShardKindSpec& k : kinds) {
    if (k.config.name == kind_name) return &k;
  }
  return nullptr;
}

Result<Manifest> ParseManifest(std::string_view text,
                               const std::filesystem::path& app_dir,
                               const std::string& file_label) {
  Errors err(file_label);
  json root;
  DuplicateKeyFinder duplicates;
  try {
    // The callback is copied by nlohmann; std::ref keeps our state.
    root = json::parse(text.begin(), text.end(), std::ref(duplicates));
  } catch (const json::parse_error& e) {
    // nlohmann's byte is 1-based (the count of bytes read); report the
    // 0-based offset of the offending byte plus line and column.
    size_t offset = e.byte > 0 ? e.byte - 1 : 0;
    offset = std::min(offset, text.size());
    size_t line = 1 + std::count(text.begin(), text.begin() + offset, '\n');
    size_t line_start = text.rfind('\n', offset == 0 ? 0 : offset - 1);
    size_t column = line_start == std::string_view::npos || offset == 0
                        ? offset + 1
                        : offset - line_start;
    std::string what = e.what();
    size_t detail = what.find("syntax error");
    if (detail == std::string::npos) detail = what.find("invalid");
    if (detail != std::string::npos) what = what.substr(detail);
    std::ostringstream msg;
    msg << "invalid JSON at byte " << offset << " (line " << line << ", column "
        << column << "): " << what;
    return err.At("", msg.str());
  }
  if (!duplicates.duplicate().empty()) {
    return err.At("", "duplicate field \"" + duplicates.duplicate() + "\"");
  }

  if (!root.is_object()) return err.WrongType("", "an object", root);
  TESSERA_RETURN_IF_ERROR(err.CheckFields(root, "", kTopFields));

  Manifest m;
  m.dir =
      app_dir.empty() ? std::filesystem::path(".") : app_dir.lexically_normal();
  bool present = false;
  TESSERA_RETURN_IF_ERROR(ReadString(err, root, "", "name", &m.name, &present));
  if (!present) return err.At("", "missing required field \"name\"");
  if (m.name.empty()) return err.At("name", "must not be empty");

  // An app serves shard kinds, realm kinds or both: "shards" may be left
  // out only by an app with a non-empty "realms" array.
  auto shards = root.find("shards");
  auto realms = root.find("realms");
  const bool has_realms =
      realms != root.end() && realms->is_array() && !realms->empty();
  if (shards == root.end() && !has_realms) {
    return err.At("",
                  "missing required field \"shards\" (an app declares "
                  "shard kinds, realm kinds or both)");
  }
  const nlohmann::json no_shards = nlohmann::json::array();
  const nlohmann::json& shard_list = shards == root.end() ? no_shards : *shards;
  if (!shard_list.is_array()) {
    return err.WrongType("shards", "an array", shard_list);
  }
  if (shards != root.end() && shard_list.empty()) {
    return err.At("shards", "declares no shard kinds");
  }

  for (size_t i = 0; i < shard_list.size(); ++i) {
    const std::string path = "shards[" + std::to_string(i) + "]";
    Result<ShardKindSpec> kind = ParseKind(err, shard_list[i], path, m.dir);
    if (!kind.ok()) return kind.status();
    if (m.FindKind(kind->config.name) != nullptr) {
      return err.At(path + ".name",
                    "duplicate kind name \"" + kind->config.name + "\"");
    }
    m.kinds.push_back(std::move(kind).value());
  }

  auto compute = root.find("compute");
  if (compute != root.end()) {
    if (!compute->is_array()) {
      return err.WrongType("compute", "an array", *compute);
    }
    for (size_t i = 0; i < compute->size(); ++i) {
      const std::string path = "compute[" + std::to_string(i) + "]";
      Result<ComputeModuleSpec> module =
          ParseComputeModule(err, (*compute)[i], path, m.dir, file_label);
      if (!module.ok()) return module.status();
      for (const ComputeModuleSpec& other : m.compute) {
        if (other.name == module->name) {
          return err.At(path + ".name",
                        "duplicate module name \"" + module->name + "\"");
        }
      }
      m.compute.push_back(std::move(module).value());
    }
  }
  auto data = root.find("data");
  if (data != root.end()) {
    Result<data::DataSchema> schema =
        data::ParseDataSchema(data->dump(), file_label + ": data");
    if (!schema.ok()) return schema.status();
    m.data = std::move(schema).value();
  }
  // After shards and compute: realm kinds are checked against both.
  if (realms != root.end()) {
    if (!realms->is_array()) {
      return err.WrongType("realms", "an array", *realms);
    }
    TESSERA_RETURN_IF_ERROR(
        internal::ParseRealmsSection(*realms, file_label, &m));
  }
  return m;
}

Result<Manifest> LoadManifest(const std::filesystem::path& app_dir) {
  const std::filesystem::path dir =
      app_dir.empty() ? std::filesystem::path(".") : app_dir.lexically_normal();
  const std::string file =
      (dir / kManifestFileName).lexically_normal().string();
  std::error_code ec;
  if (!std::filesystem::exists(dir, ec)) {
    return NotFound(dir.string() + ": app directory does not exist");
  }
  if (!std::filesystem::is_directory(dir, ec)) {
    return InvalidArgument(dir.string() + ": not a directory");
  }
  if (!std::filesystem::exists(file, ec)) {
    return NotFound(file + ": no such file (an app directory needs a " +
                    kManifestFileName + ")");
  }
  std::ifstream in(file, std::ios::binary);
  if (!in) return IoError(file + ": cannot open: " + std::strerror(errno));
  std::string text((std::istreambuf_iterator<char>(in)),
                   std::istreambuf_iterator<char>());
  if (in.bad()) return IoError(file + ": read failed");
  return ParseManifest(text, dir, file);
}

}  // namespace tessera::app
