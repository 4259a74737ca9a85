// The per-app compute policy: JSON in and out, patches checked field by
// field against minimums and the server-wide ceilings (docs/compute.md
// "Policy").
#include "compute/policy.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/text.h"

namespace tessera::compute {
namespace {

using nlohmann::json;

// One numeric policy field: its API name, where it lives, and its minimum.
// `min_exclusive` fields must be strictly above `min` (maxTickHz > 0).
struct Field {
  const char* name;
  int64_t Policy::*int_member = nullptr;
  double Policy::*double_member = nullptr;
  double min = 1;
  bool min_exclusive = false;
};

// The fields in the API's order. A minimum of 0 means 0 switches the thing
// off (no data ops, no egress, unload as soon as the last session ends).
const std::vector<Field>& Fields() {
  static const std::vector<Field> kFields = {
      {"maxModules", &Policy::max_modules, nullptr, 1},
      {"maxTickHz", nullptr, &Policy::max_tick_hz, 0, true},
      {"fuelPerTick", &Policy::fuel_per_tick, nullptr, 1},
      {"fuelPerInvoke", &Policy::fuel_per_invoke, nullptr, 1},
      {"maxMemoryMb", &Policy::max_memory_mb, nullptr, 1},
      {"maxRunMs", &Policy::max_run_ms, nullptr, 1},
      {"maxDbOpsPerTick", &Policy::max_db_ops_per_tick, nullptr, 0},
      {"maxEgressMsgsPerMin", &Policy::max_egress_msgs_per_min, nullptr, 0},
      {"maxEgressBytesPerMin", &Policy::max_egress_bytes_per_min, nullptr, 0},
      {"failureThreshold", &Policy::failure_threshold, nullptr, 1},
      {"cooldownMs", &Policy::cooldown_ms, nullptr, 1},
      {"idleUnloadMs", &Policy::idle_unload_ms, nullptr, 0},
  };
  return kFields;
}

const Field* FindField(const std::string& name) {
  for (const Field& f : Fields()) {
    if (name == f.name) return &f;
  }
  return nullptr;
}

// A double as the API prints it: integral values without a fraction.
std::string FormatNumber(double v) {
  if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 1e15) {
    return std::to_string(static_cast<int64_t>(v));
  }
  return json(v).dump();
}

json NumberJson(double v) {
  if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 1e15) {
    return json(static_cast<int64_t>(v));
  }
  return json(v);
}

const char* JsonTypeName(const json& v) {
  switch (v.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::boolean:
      return "bool";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
      return "integer";
    case json::value_t::number_float:
      return "number";
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

// Reads `value` into `field` of `out`. Returns "" or the violation's text.
// With `ceilings`, a value above the ceiling is refused.
std::string ReadField(const Field& field, const json& value, Policy* out,
                      const Policy* ceilings) {
  const std::string name = field.name;
  if (field.int_member != nullptr) {
    if (!value.is_number_integer()) {
      return name + ": expected an integer, got " + JsonTypeName(value);
    }
    int64_t v;
    if (value.is_number_unsigned() &&
        value.get<uint64_t>() >
            static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      v = std::numeric_limits<int64_t>::max();
    } else {
      v = value.get<int64_t>();
    }
    if (static_cast<double>(v) < field.min) {
      return name + " " + value.dump() + " is below the minimum (" +
             FormatNumber(field.min) + ")";
    }
    if (ceilings != nullptr && v > ceilings->*field.int_member) {
      return name + " " + value.dump() + " exceeds the server ceiling (" +
             std::to_string(ceilings->*field.int_member) + ")";
    }
    out->*field.int_member = v;
    return "";
  }
  if (!value.is_number()) {
    return name + ": expected a number, got " + JsonTypeName(value);
  }
  const double v = value.get<double>();
  if (!std::isfinite(v)) {
    return name + ": expected a finite number";
  }
  if (field.min_exclusive ? v <= field.min : v < field.min) {
    return name + " " + value.dump() +
           (field.min_exclusive ? " must be above "
                                : " is below the minimum (") +
           FormatNumber(field.min) + (field.min_exclusive ? "" : ")");
  }
  if (ceilings != nullptr && v > ceilings->*field.double_member) {
    return name + " " + value.dump() + " exceeds the server ceiling (" +
           FormatNumber(ceilings->*field.double_member) + ")";
  }
  out->*field.double_member = v;
  return "";
}

std::string Join(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& line : lines) {
    if (!out.empty()) out += '\n';
    out += line;
  }
  return out;
}

// Applies the object `text` over `base`: every violation as one line.
Result<Policy> Apply(const Policy& base, std::string_view text,
                     const Policy* ceilings, bool enabled_allowed,
                     const char* what) {
  json patch = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (patch.is_discarded()) {
    return InvalidArgument(std::string(what) + ": not valid JSON");
  }
  if (!patch.is_object()) {
    return InvalidArgument(std::string(what) + ": expected an object, got " +
                           JsonTypeName(patch));
  }
  Policy out = base;
  std::vector<std::string> errors;
  for (const auto& [key, value] : patch.items()) {
    if (key == "enabled") {
      if (!enabled_allowed) continue;  // ceilings ignore the kill switch
      if (!value.is_boolean()) {
        errors.push_back("enabled: expected a bool, got " +
                         std::string(JsonTypeName(value)));
      } else {
        out.enabled = value.get<bool>();
      }
      continue;
    }
    const Field* field = FindField(key);
    if (field == nullptr) {
      errors.push_back(json(std::string(Utf8Prefix(key, 128))).dump() +
                       ": unknown policy field");
      continue;
    }
    std::string error = ReadField(*field, value, &out, ceilings);
    if (!error.empty()) errors.push_back(std::move(error));
  }
  if (!errors.empty()) return InvalidArgument(Join(errors));
  return out;
}

}  // namespace

// The server-wide maxima: emergency guardrails, each far above the seed's
// default so a fresh app's policy always fits (docs/compute-policies.md):
// 1,000 modules, 60 Hz (the shards' top rate), 2e9 fuel per tick
// and 1e10 per invoke (ten times the defaults), 1 GiB of guest memory, a 10 s
// watchdog, 1,000 data ops per call, 60,000 messages and 100 MB of egress per
// module per minute, at most 1,000 consecutive failures before the circuit
// opens, and a day for the cooldown and the idle unload.
Policy DefaultCeilings() {
  Policy c;
  c.enabled = true;
  c.max_modules = 1000;
  c.max_tick_hz = 60;
  c.fuel_per_tick = 2'000'000'000;
  c.fuel_per_invoke = 10'000'000'000;
  c.max_memory_mb = 1024;
  c.max_run_ms = 10'000;
  c.max_db_ops_per_tick = 1000;
  c.max_egress_msgs_per_min = 60'000;
  c.max_egress_bytes_per_min = 100'000'000;
  c.failure_threshold = 1000;
  c.cooldown_ms = 86'400'000;
  c.idle_unload_ms = 86'400'000;
  return c;
}

Result<Policy> ParseCeilings(std::string_view json_text) {
  return Apply(DefaultCeilings(), json_text, nullptr,
               /*enabled_allowed=*/false, "ceilings");
}

std::string PolicyToJson(const Policy& policy) {
  // nlohmann's object keeps keys sorted; the API's order is kept by
  // building the text in Fields() order instead.
  std::string out = "{\"enabled\":";
  out += policy.enabled ? "true" : "false";
  for (const Field& f : Fields()) {
    out += ",\"";
    out += f.name;
    out += "\":";
    out += f.int_member != nullptr ? std::to_string(policy.*f.int_member)
                                   : NumberJson(policy.*f.double_member).dump();
  }
  out += '}';
  return out;
}

Result<Policy> ApplyPolicyPatch(const Policy& current, std::string_view patch,
                                const Policy& ceilings) {
  return Apply(current, patch, &ceilings, /*enabled_allowed=*/true, "policy");
}

Policy ClampToCeilings(const Policy& policy, const Policy& ceilings) {
  Policy out = policy;
  for (const Field& f : Fields()) {
    if (f.int_member != nullptr) {
      out.*f.int_member = std::min(out.*f.int_member, ceilings.*f.int_member);
    } else {
      out.*f.double_member =
          std::min(out.*f.double_member, ceilings.*f.double_member);
    }
  }
  return out;
}

}  // namespace tessera::compute
