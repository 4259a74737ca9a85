#include "server/compute_json.h"

#include <algorithm>
#include <vector>

#include "net/base64url.h"

namespace tessera::server {

using json = nlohmann::json;
using namespace compute;

namespace {

// A JSON text field as its value (null when empty or unparsable).
json JsonOrNull(const std::string& text) {
  if (text.empty()) return nullptr;
  json v = json::parse(text, nullptr, false);
  return v.is_discarded() ? json(nullptr) : v;
}

json ModuleStatsJson(const ModuleStats& s) {
  return json{{"moduleName", s.module},
              {"runs", s.runs},
              {"failures", s.failures},
              {"fuelUsed", s.fuel_used},
              {"egressMsgs", s.egress_msgs},
              {"egressBytes", s.egress_bytes},
              {"durationUs", s.duration_us},
              {"computeUnits", s.compute_units},
              {"circuitState", CircuitStateName(s.circuit)}};
}

std::string Name(const ModuleNames& names, int64_t id) {
  auto it = names.find(id);
  return it == names.end() ? std::string() : it->second;
}

Status Bad(std::string_view where, const std::string& what) {
  return InvalidArgument(std::string(where) + ": " + what);
}

}  // namespace

json ModuleJson(const ModuleView& view) {
  const ModuleRecord& m = view.record;
  json latest = nullptr;
  if (view.latest_version) {
    latest =
        json{{"versionNo", view.latest_version->version_no},
             {"compileStatus", CompileStatusName(view.latest_version->status)}};
  }
  return json{{"name", m.name},
              {"description", m.description},
              {"enabled", m.enabled},
              {"alwaysOn", m.always_on},
              {"activeVersion", m.active_version},
              {"circuitState", CircuitStateName(m.circuit)},
              {"consecutiveFailures", m.consecutive_failures},
              {"lastError", m.last_error},
              {"loaded", view.loaded},
              {"latestVersion", latest},
              {"triggerCount", view.trigger_count},
              {"createdAt", m.created_ms},
              {"updatedAt", m.updated_ms}};
}

json VersionJson(const VersionRecord& v) {
  return json{{"versionNo", v.version_no},
              {"language", LanguageName(v.language)},
              {"sdkVersion", v.sdk_version},
              {"abiVersion", v.abi_version},
              {"sourceHash", v.source_hash},
              {"templateName", v.template_name},
              {"compileStatus", CompileStatusName(v.status)},
              {"compileLog", v.compile_log},
              {"compiledSizeBytes", v.compiled_size_bytes},
              {"cacheHit", v.cache_hit},
              {"createdAt", v.created_ms},
              {"compiledAt", v.compiled_ms}};
}

json TriggerJson(const TriggerRecord& t) {
  return json{{"id", t.id},
              {"triggerType", TriggerTypeName(t.type)},
              {"tickHz", t.tick_hz},
              {"onEvent", t.on_event},
              {"eventName", t.event_name},
              {"entityType", t.entity_type},
              {"fieldName", t.field_name},
              {"functionName", t.function_name},
              {"debounceMs", t.debounce_ms},
              {"exportName", t.export_name},
              {"invokePolicy", JsonOrNull(t.invoke_policy_json)},
              {"contract", JsonOrNull(t.contract_json)}};
}

json RunJson(const RunRecord& r) {
  return json{{"startedAt", r.started_ms},
              {"module", r.module_name},
              {"versionNo", r.version_no},
              {"triggerSource", TriggerSourceName(r.source)},
              {"entry", r.entry},
              {"success", r.success},
              {"durationUs", r.duration_us},
              {"fuelUsed", r.fuel_used},
              {"dataReads", r.data_reads},
              {"dataWrites", r.data_writes},
              {"egressMsgs", r.egress_msgs},
              {"egressBytes", r.egress_bytes},
              {"errorMessage", r.error_message},
              {"circuitAction", r.circuit_action},
              {"flowId", r.flow_id}};
}

json LogJson(const LogRecord& l, const ModuleNames& names) {
  return json{{"ts", l.ts_ms},
              {"module", Name(names, l.module_id)},
              {"level", l.level},
              {"message", l.message},
              {"triggerSource", TriggerSourceName(l.source)},
              {"flowId", l.flow_id}};
}

json UsageJson(const UsageRow& u, const ModuleNames& names) {
  return json{{"module", Name(names, u.module_id)},
              {"minute", u.minute_ms},
              {"ticks", u.ticks},
              {"runs", u.runs},
              {"failures", u.failures},
              {"fuelUsed", u.fuel_used},
              {"cpuUs", u.cpu_us},
              {"computeUnits", u.compute_units},
              {"egressMsgs", u.egress_msgs},
              {"egressBytes", u.egress_bytes}};
}

json StatsJson(const StatsView& s) {
  json by = json::array();
  for (const ModuleStats& m : s.by_module) by.push_back(ModuleStatsJson(m));
  return json{{"windowMinutes", s.window_minutes},
              {"totalRuns", s.total_runs},
              {"failedRuns", s.failed_runs},
              {"failureRatePct", s.failure_rate_pct},
              {"totalFuelUsed", s.total_fuel_used},
              {"totalEgressMsgs", s.total_egress_msgs},
              {"totalEgressBytes", s.total_egress_bytes},
              {"avgDurationUs", s.avg_duration_us},
              {"computeUnits", s.compute_units},
              {"byModule", by}};
}

json DiagnosticsJson(const DiagnosticsView& d) {
  json top = json::array();
  for (const ModuleStats& m : d.top_modules) top.push_back(ModuleStatsJson(m));
  return json{{"moduleCount", d.module_count},
              {"enabledModuleCount", d.enabled_module_count},
              {"loadedModuleCount", d.loaded_module_count},
              {"versionCount", d.version_count},
              {"triggerCount", d.trigger_count},
              {"runs24h", d.runs_24h},
              {"failedRuns24h", d.failed_runs_24h},
              {"fuelUsed24h", d.fuel_used_24h},
              {"policyEnabled", d.policy_enabled},
              {"topModules", top}};
}

json InvokeResultJson(const InvokeResult& r) {
  json out{{"fuelUsed", r.fuel_used},
           {"durationUs", r.duration_us},
           {"flowId", r.flow_id}};
  json parsed = json(json::value_t::discarded);
  if (r.result_is_json) parsed = json::parse(r.result, nullptr, false);
  if (!parsed.is_discarded()) {
    out["resultJson"] = parsed;
  } else {
    out["resultBase64"] = net::Base64Encode(r.result);
  }
  return out;
}

Status CheckFields(const json& body, std::string_view where,
                   std::initializer_list<std::string_view> known) {
  for (const auto& [key, value] : body.items()) {
    if (std::find(known.begin(), known.end(), key) != known.end()) continue;
    std::string list;
    for (std::string_view k : known) {
      if (!list.empty()) list += ", ";
      list += k;
    }
    return Bad(where, "unknown field \"" + key + "\" (fields: " + list + ")");
  }
  return Status::Ok();
}

Result<TriggerRecord> ParseTriggerBody(const json& body,
                                       std::string_view where) {
  if (!body.is_object()) return Bad(where, "must be a JSON object");
  TESSERA_RETURN_IF_ERROR(
      CheckFields(body, where,
                  {"triggerType", "tickHz", "onEvent", "eventName",
                   "entityType", "fieldName", "functionName", "debounceMs",
                   "exportName", "invokePolicy", "contract"}));
  auto type = body.find("triggerType");
  if (type == body.end() || !type->is_string()) {
    return Bad(where,
               "\"triggerType\" is required: \"tick\", \"event\" or "
               "\"invoke\"");
  }
  TriggerRecord t;
  const std::string& name = type->get_ref<const std::string&>();
  // The fields each type takes (besides triggerType).
  std::vector<std::string_view> allowed;
  if (name == "tick") {
    t.type = TriggerType::kTick;
    allowed = {"tickHz"};
  } else if (name == "event") {
    t.type = TriggerType::kEvent;
    allowed = {"onEvent",   "eventName",    "entityType",
               "fieldName", "functionName", "debounceMs"};
  } else if (name == "invoke") {
    t.type = TriggerType::kInvoke;
    allowed = {"exportName", "invokePolicy", "contract"};
  } else {
    return Bad(where,
               "\"triggerType\" must be \"tick\", \"event\" or "
               "\"invoke\", got \"" +
                   name + "\"");
  }
  for (const auto& [key, value] : body.items()) {
    if (key == "triggerType") continue;
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      return Bad(where,
                 "\"" + key + "\" does not apply to a " + name + " trigger");
    }
  }
  auto str = [&](const char* key, std::string* out) -> Status {
    auto it = body.find(key);
    if (it == body.end() || it->is_null()) return Status::Ok();
    if (!it->is_string()) {
      return Bad(where, std::string("\"") + key + "\" must be a string");
    }
    *out = it->get<std::string>();
    return Status::Ok();
  };
  auto object_text = [&](const char* key, std::string* out) -> Status {
    auto it = body.find(key);
    if (it == body.end() || it->is_null()) return Status::Ok();
    if (!it->is_object()) {
      return Bad(where, std::string("\"") + key + "\" must be a JSON object");
    }
    *out = it->dump();
    return Status::Ok();
  };
  switch (t.type) {
    case TriggerType::kTick: {
      auto hz = body.find("tickHz");
      if (hz == body.end() || !hz->is_number() || hz->get<double>() <= 0) {
        return Bad(where, "a tick trigger needs \"tickHz\", a number above 0");
      }
      t.tick_hz = hz->get<double>();
      break;
    }
    case TriggerType::kEvent: {
      TESSERA_RETURN_IF_ERROR(str("onEvent", &t.on_event));
      if (t.on_event.empty()) t.on_event = "compute_event";
      TESSERA_RETURN_IF_ERROR(str("eventName", &t.event_name));
      // Which filters apply to which onEvent is the engine's check.
      TESSERA_RETURN_IF_ERROR(str("entityType", &t.entity_type));
      TESSERA_RETURN_IF_ERROR(str("fieldName", &t.field_name));
      TESSERA_RETURN_IF_ERROR(str("functionName", &t.function_name));
      if (auto d = body.find("debounceMs"); d != body.end() && !d->is_null()) {
        if (!d->is_number_integer() || d->get<int64_t>() < 0) {
          return Bad(where, "\"debounceMs\" must be an integer >= 0");
        }
        t.debounce_ms = d->get<int64_t>();
      }
      break;
    }
    case TriggerType::kInvoke:
      TESSERA_RETURN_IF_ERROR(str("exportName", &t.export_name));
      if (t.export_name.empty()) {
        return Bad(where, "an invoke trigger needs \"exportName\"");
      }
      TESSERA_RETURN_IF_ERROR(
          object_text("invokePolicy", &t.invoke_policy_json));
      TESSERA_RETURN_IF_ERROR(object_text("contract", &t.contract_json));
      break;
  }
  return t;
}

Status ParseDeployBody(const json& body, DeployRequest* request) {
  constexpr std::string_view kWhere = "body";
  TESSERA_RETURN_IF_ERROR(CheckFields(
      body, kWhere, {"files", "sdkVersion", "abiVersion", "language"}));
  auto files = body.find("files");
  if (files == body.end() || !files->is_object() || files->empty()) {
    return Bad(kWhere,
               "\"files\" is required: an object of relative path -> file "
               "contents");
  }
  for (const auto& [path, content] : files->items()) {
    if (!content.is_string()) {
      return Bad(kWhere, "files[\"" + path + "\"] must be a string");
    }
    request->files[path] = content.get<std::string>();
  }
  if (auto sdk = body.find("sdkVersion"); sdk != body.end()) {
    if (!sdk->is_string())
      return Bad(kWhere, "\"sdkVersion\" must be a string");
    request->sdk_version = sdk->get<std::string>();
  }
  if (auto abi = body.find("abiVersion"); abi != body.end()) {
    if (!abi->is_number_integer()) {
      return Bad(kWhere, "\"abiVersion\" must be an integer");
    }
    request->abi_version = abi->get<int>();
  }
  if (auto lang = body.find("language");
      lang != body.end() && !lang->is_null()) {
    if (*lang == "rust") {
      request->language = Language::kRust;
    } else if (*lang == "cpp") {
      request->language = Language::kCpp;
    } else {
      return Bad(kWhere, "\"language\" must be \"rust\" or \"cpp\"");
    }
  }
  return Status::Ok();
}

}  // namespace tessera::server
