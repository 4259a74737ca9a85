// A realm kind's module (docs/realms.md "Realm modules"): the RealmHooks
// that call the kind's compute module, in the same sandbox as every other
// function (fuel, watchdog, memory cap), through its invoke exports:
//
//   realm_initial_state  {realm, key}                       -> the document
//   realm_apply          {realm, key, avatar, intent, args,
//                         state}                            -> {"patch": [...]}
//                                                              | {"refuse":
//                                                              why}
//   realm_on_attach      {realm, key, avatar, state}        -> {"patch": [...]}
//   realm_on_detach      {realm, key, avatar, reason, state} -> {"patch":
//   [...]} realm_on_expire      {realm, key, state}                -> {"veto":
//   bool} realm_migrate        {realm, key, old_state, old_hash}  -> the new
//   document realm_on_alarm       {realm, key, alarm, failures,
//                         state}                            -> {"patch": [...]}
//
// Patches are the JSON form (docs/realms.md "JSON form"). The answers of
// realm_apply, realm_on_attach, realm_on_detach and realm_on_alarm may
// also carry "alarms": {"<name>": <ms from now> | null (cancel)}, which
// take effect with the patch (docs/realms.md "Alarms"). Every export is
// optional but realm_apply (intents refuse without it); a missing one does
// what the kind would do without a module. The exports are invoke triggers
// of the module, called as management (declare them with an invoke policy
// of {"type": "user_in_list", "users": []} so that no player can call them
// directly).
//
// Threading: called on the realm host's workers, concurrently for
// different instances; the engine serialises runs of one module.
#ifndef TESSERA_SERVER_REALM_MODULE_H_
#define TESSERA_SERVER_REALM_MODULE_H_

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"
#include "realm/host.h"
#include "realm/kind.h"

namespace tessera::compute {
class ComputeEngine;
}

namespace tessera::server {

class ModuleRealmHooks final : public realm::RealmHooks {
 public:
  // `engine` is not owned; null: no module is ever called.
  ModuleRealmHooks(compute::ComputeEngine* engine,
                   std::function<void(const std::string&)> log)
      : engine_(engine), log_(std::move(log)) {}

  Result<std::optional<realm::Json>> InitialState(
      const realm::RealmKindConfig& kind, std::string_view key) override;
  Result<realm::HookResult> ApplyIntent(const realm::RealmKindConfig& kind,
                                        std::string_view key,
                                        std::string_view avatar,
                                        std::string_view intent,
                                        const realm::Json& args,
                                        const realm::Json& state) override;
  realm::HookResult OnAvatarAttach(const realm::RealmKindConfig& kind,
                                   std::string_view key,
                                   std::string_view avatar,
                                   const realm::Json& state) override;
  realm::HookResult OnAvatarDetach(const realm::RealmKindConfig& kind,
                                   std::string_view key,
                                   std::string_view avatar,
                                   std::string_view reason,
                                   const realm::Json& state) override;
  Result<realm::HookResult> OnAlarm(const realm::RealmKindConfig& kind,
                                    std::string_view key, std::string_view name,
                                    int32_t failures,
                                    const realm::Json& state) override;
  bool OnExpire(const realm::RealmKindConfig& kind, std::string_view key,
                const realm::Json& state) override;
  Result<realm::Json> Migrate(const realm::RealmKindConfig& kind,
                              std::string_view key,
                              const realm::Json& old_state,
                              std::string_view old_hash) override;

 private:
  // The export's JSON answer; nullopt when the kind has no module or the
  // module no such export. Errors: the run's (trap, fuel, a disabled
  // module) and an answer that is not JSON.
  Result<std::optional<realm::Json>> Call(const realm::RealmKindConfig& kind,
                                          const char* export_name,
                                          realm::Json params);
  // {"patch": [...], "alarms": {name: ms | null}} (either may be left
  // out, not both) as a HookResult. Errors: kInvalidArgument naming the
  // export.
  static Result<realm::HookResult> ResultOf(const realm::Json& answer,
                                            const char* export_name);
  realm::HookResult Hook(const realm::RealmKindConfig& kind,
                         const char* export_name, realm::Json params);

  compute::ComputeEngine* const engine_;
  const std::function<void(const std::string&)> log_;
};

}  // namespace tessera::server

#endif  // TESSERA_SERVER_REALM_MODULE_H_
