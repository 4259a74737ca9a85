#include "server/realm_module.h"

#include <utility>

#include "compute/engine.h"

namespace tessera::server {

using realm::Json;

Result<std::optional<Json>> ModuleRealmHooks::Call(
    const realm::RealmKindConfig& kind, const char* export_name, Json params) {
  if (kind.module.empty() || engine_ == nullptr) return std::optional<Json>();
  compute::InvokeRequest request;
  request.module = kind.module;
  request.export_name = export_name;
  request.params_json =
      params.dump(-1, ' ', false, Json::error_handler_t::replace);
  request.management = true;
  Result<compute::InvokeResult> ran = engine_->Invoke(request);
  if (!ran.ok()) {
    if (ran.status().code() == StatusCode::kNotFound) {
      return std::optional<Json>();  // no such export: the default
    }
    return Status(ran.status().code(), "module " + kind.module + " " +
                                           export_name + ": " +
                                           ran.status().message());
  }
  Json answer = Json::parse(ran->result, nullptr, /*allow_exceptions=*/false);
  if (answer.is_discarded()) {
    return Status(
        StatusCode::kInvalidArgument,
        "module " + kind.module + " " + export_name + " did not answer JSON");
  }
  return std::optional<Json>(std::move(answer));
}

Result<realm::HookResult> ModuleRealmHooks::ResultOf(const Json& answer,
                                                     const char* export_name) {
  const auto invalid = [&](const std::string& why) {
    return Status(StatusCode::kInvalidArgument,
                  std::string(export_name) + ": " + why);
  };
  if (!answer.is_object() ||
      (!answer.contains("patch") && !answer.contains("alarms"))) {
    return invalid(
        "must answer {\"patch\": [...]} and/or {\"alarms\": "
        "{...}}, got " +
        answer.dump().substr(0, 200));
  }
  realm::HookResult result;
  if (answer.contains("patch")) {
    Result<realm::Patch> patch = realm::PatchFromJson(answer["patch"]);
    if (!patch.ok()) return invalid(patch.status().message());
    result.patch = std::move(patch).value();
  }
  if (answer.contains("alarms")) {
    const Json& alarms = answer["alarms"];
    if (!alarms.is_object()) {
      return invalid("\"alarms\" must be an object of name -> ms | null");
    }
    for (const auto& [name, when] : alarms.items()) {
      realm::AlarmChange change{name, std::nullopt};
      if (when.is_number_integer() || when.is_number_unsigned()) {
        change.in_ms = when.get<int64_t>();
      } else if (when.is_number_float() && when.get<double>() >= 0 &&
                 when.get<double>() <= realm::kMaxAlarmDelayMs) {
        change.in_ms = static_cast<int64_t>(when.get<double>());
      } else if (!when.is_null()) {
        return invalid("alarm \"" + name +
                       "\" must be ms from now or null (cancel), got " +
                       when.dump().substr(0, 40));
      }
      result.alarms.push_back(std::move(change));
    }
  }
  return result;
}

Result<std::optional<Json>> ModuleRealmHooks::InitialState(
    const realm::RealmKindConfig& kind, std::string_view key) {
  Result<std::optional<Json>> answer =
      Call(kind, "realm_initial_state", {{"realm", kind.name}, {"key", key}});
  if (!answer.ok() || !answer->has_value()) return answer;
  if (!(*answer)->is_object()) {
    return Status(StatusCode::kInvalidArgument,
                  "module " + kind.module +
                      " realm_initial_state must answer a JSON object");
  }
  return answer;
}

Result<realm::HookResult> ModuleRealmHooks::ApplyIntent(
    const realm::RealmKindConfig& kind, std::string_view key,
    std::string_view avatar, std::string_view intent, const Json& args,
    const Json& state) {
  Result<std::optional<Json>> answer = Call(kind, "realm_apply",
                                            {{"realm", kind.name},
                                             {"key", key},
                                             {"avatar", avatar},
                                             {"intent", intent},
                                             {"args", args},
                                             {"state", state}});
  if (!answer.ok()) return answer.status();
  if (!answer->has_value()) {
    return Status(StatusCode::kFailedPrecondition,
                  kind.module.empty()
                      ? "realm kind \"" + kind.name +
                            "\" has no module, and intents need one"
                      : "module " + kind.module + " has no realm_apply");
  }
  const Json& a = **answer;
  if (a.is_object() && a.contains("refuse")) {
    return Status(StatusCode::kFailedPrecondition,
                  a["refuse"].is_string() ? a["refuse"].get<std::string>()
                                          : a["refuse"].dump());
  }
  return ResultOf(a, "realm_apply");
}

realm::HookResult ModuleRealmHooks::Hook(const realm::RealmKindConfig& kind,
                                         const char* export_name, Json params) {
  Result<std::optional<Json>> answer = Call(kind, export_name, params);
  Result<realm::HookResult> result =
      !answer.ok()           ? Result<realm::HookResult>(answer.status())
      : !answer->has_value() ? Result<realm::HookResult>(realm::HookResult())
                             : ResultOf(**answer, export_name);
  if (result.ok()) return std::move(result).value();
  if (log_) {
    log_("realm kind " + kind.name + ": " + export_name +
         " failed: " + result.status().message());
  }
  return {};
}

realm::HookResult ModuleRealmHooks::OnAvatarAttach(
    const realm::RealmKindConfig& kind, std::string_view key,
    std::string_view avatar, const Json& state) {
  return Hook(kind, "realm_on_attach",
              {{"realm", kind.name},
               {"key", key},
               {"avatar", avatar},
               {"state", state}});
}

realm::HookResult ModuleRealmHooks::OnAvatarDetach(
    const realm::RealmKindConfig& kind, std::string_view key,
    std::string_view avatar, std::string_view reason, const Json& state) {
  return Hook(kind, "realm_on_detach",
              {{"realm", kind.name},
               {"key", key},
               {"avatar", avatar},
               {"reason", reason},
               {"state", state}});
}

Result<Json> ModuleRealmHooks::Migrate(const realm::RealmKindConfig& kind,
                                       std::string_view key,
                                       const Json& old_state,
                                       std::string_view old_hash) {
  Result<std::optional<Json>> answer = Call(kind, "realm_migrate",
                                            {{"realm", kind.name},
                                             {"key", key},
                                             {"old_state", old_state},
                                             {"old_hash", old_hash}});
  if (!answer.ok()) return answer.status();
  if (!answer->has_value()) {
    return Status(StatusCode::kFailedPrecondition,
                  "module " + kind.module + " has no realm_migrate");
  }
  return std::move(**answer);
}

Result<realm::HookResult> ModuleRealmHooks::OnAlarm(
    const realm::RealmKindConfig& kind, std::string_view key,
    std::string_view name, int32_t failures, const Json& state) {
  Result<std::optional<Json>> answer = Call(kind, "realm_on_alarm",
                                            {{"realm", kind.name},
                                             {"key", key},
                                             {"alarm", name},
                                             {"failures", failures},
                                             {"state", state}});
  if (!answer.ok()) return answer.status();
  if (!answer->has_value() && !kind.module.empty() && engine_ != nullptr &&
      !engine_->Triggers(kind.module).ok()) {
    // The module is not there (yet: a boot): the alarm must wait, never be
    // dropped for it.
    return Status(StatusCode::kUnavailable,
                  "module " + kind.module + " is not loaded");
  }
  if (!answer->has_value()) {
    return Status(StatusCode::kNotFound,
                  kind.module.empty()
                      ? "realm kind \"" + kind.name + "\" has no module"
                      : "module " + kind.module + " has no realm_on_alarm");
  }
  return ResultOf(**answer, "realm_on_alarm");
}

bool ModuleRealmHooks::OnExpire(const realm::RealmKindConfig& kind,
                                std::string_view key, const Json& state) {
  Result<std::optional<Json>> answer =
      Call(kind, "realm_on_expire",
           {{"realm", kind.name}, {"key", key}, {"state", state}});
  if (!answer.ok()) {
    // A module that cannot answer keeps its realm: try again a period on.
    if (log_) {
      log_("realm kind " + kind.name +
           ": realm_on_expire failed, expiry put off: " +
           answer.status().message());
    }
    return true;
  }
  if (!answer->has_value()) return false;
  const Json& a = **answer;
  return a.is_object() && a.value("veto", false) == true;
}

}  // namespace tessera::server
