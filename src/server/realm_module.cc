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
  request.params_json = params.dump(-1, ' ', false,
                                    Json::error_handler_t::replace);
  request.management = true;
  Result<compute::InvokeResult> ran = engine_->Invoke(request);
  if (!ran.ok()) {
    if (ran.status().code() == StatusCode::kNotFound) {
      return std::optional<Json>();  // no such export: the default
    }
    return Status(ran.status().code(),
                  "module " + kind.module + " " + export_name + ": " +
                      ran.status().message());
  }
  Json answer = Json::parse(ran->result, nullptr, /*allow_exceptions=*/false);
  if (answer.is_discarded()) {
    return Status(StatusCode::kInvalidArgument,
                  "module " + kind.module + " " + export_name +
                      " did not answer JSON");
  }
  return std::optional<Json>(std::move(answer));
}

Result<realm::Patch> ModuleRealmHooks::PatchOf(const Json& answer,
                                               const char* export_name) {
  if (!answer.is_object() || !answer.contains("patch")) {
    return Status(StatusCode::kInvalidArgument,
                  std::string(export_name) +
                      " must answer {\"patch\": [...]}, got " +
                      answer.dump().substr(0, 200));
  }
  Result<realm::Patch> patch = realm::PatchFromJson(answer["patch"]);
  if (!patch.ok()) {
    return Status(StatusCode::kInvalidArgument,
                  std::string(export_name) + ": " + patch.status().message());
  }
  return patch;
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

Result<realm::Patch> ModuleRealmHooks::ApplyIntent(
    const realm::RealmKindConfig& kind, std::string_view key,
    std::string_view avatar, std::string_view intent, const Json& args,
    const Json& state) {
  Result<std::optional<Json>> answer =
      Call(kind, "realm_apply",
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
  return PatchOf(a, "realm_apply");
}

realm::Patch ModuleRealmHooks::Hook(const realm::RealmKindConfig& kind,
                                    const char* export_name, Json params) {
  Result<std::optional<Json>> answer = Call(kind, export_name, params);
  Result<realm::Patch> patch =
      !answer.ok()             ? Result<realm::Patch>(answer.status())
      : !answer->has_value()   ? Result<realm::Patch>(realm::Patch())
                               : PatchOf(**answer, export_name);
  if (patch.ok()) return std::move(patch).value();
  if (log_) {
    log_("realm kind " + kind.name + ": " + export_name + " failed: " +
         patch.status().message());
  }
  return {};
}

realm::Patch ModuleRealmHooks::OnAvatarAttach(
    const realm::RealmKindConfig& kind, std::string_view key,
    std::string_view avatar, const Json& state) {
  return Hook(kind, "realm_on_attach",
              {{"realm", kind.name},
               {"key", key},
               {"avatar", avatar},
               {"state", state}});
}

realm::Patch ModuleRealmHooks::OnAvatarDetach(
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
  Result<std::optional<Json>> answer =
      Call(kind, "realm_migrate",
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
