#include "realm/kind.h"

#include "data/schema.h"
#include "realm/config_fields.h"

namespace tessera::realm {
namespace {

using internal::Describe;
using internal::FieldError;

bool IsValidRealmName(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  if (name[0] < 'a' || name[0] > 'z') return false;
  for (char ch : name) {
    const bool ok = (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
                    ch == '_' || ch == '-';
    if (!ok) return false;
  }
  return true;
}

// Reads optional string `key` into *out; *present says it was there.
Status ReadString(const Json& obj, std::string_view where, const char* key,
                  std::string* out, bool* present) {
  auto it = obj.find(key);
  *present = it != obj.end();
  if (!*present) return Status::Ok();
  if (!it->is_string()) {
    return FieldError(where, key, "expected a string, got " + Describe(*it));
  }
  *out = it->get<std::string>();
  return Status::Ok();
}

}  // namespace

std::string_view SecurityFloorName(SecurityFloor floor) {
  return floor == SecurityFloor::kEncrypted ? "encrypted" : "authenticated";
}

std::string SchemaHash(const Json& schema) {
  // The data layer's canonical hash, so a schema hashes the same wherever
  // tessera records one.
  Result<std::string> hash = data::CanonicalJsonHash(schema.dump());
  return hash.ok() ? hash.value() : std::string();
}

Result<RealmKindConfig> ParseRealmKind(const Json& kind,
                                       std::string_view where) {
  if (!kind.is_object()) {
    return FieldError(where, "", "expected an object, got " + Describe(kind));
  }
  TESSERA_RETURN_IF_ERROR(internal::CheckKnownFields(
      kind, where,
      {"name", "schema", "rules", "security", "persistence",
       "snapshotEveryVersions", "logWindow", "limits", "expireAfterIdleMs",
       "module", "migrate", "initialState", "presence", "batchMs"}));
  RealmKindConfig c;
  bool present = false;

  TESSERA_RETURN_IF_ERROR(ReadString(kind, where, "name", &c.name, &present));
  if (!present) return FieldError(where, "", "missing required field \"name\"");
  if (!IsValidRealmName(c.name)) {
    return FieldError(where, "name",
                      "\"" + c.name +
                          "\" is not a valid realm name (a lowercase letter, "
                          "then up to 63 of [a-z0-9_-])");
  }

  if (auto it = kind.find("schema"); it != kind.end()) {
    if (!it->is_object()) {
      return FieldError(where, "schema",
                        "expected an object, got " + Describe(*it));
    }
    c.schema = *it;
  }
  c.schema_hash = SchemaHash(c.schema);

  if (auto it = kind.find("initialState"); it != kind.end()) {
    if (!it->is_object()) {
      return FieldError(where, "initialState",
                        "expected an object, got " + Describe(*it));
    }
    c.initial_state = *it;
  }

  if (auto it = kind.find("presence"); it != kind.end()) {
    Result<PresenceConfig> presence =
        ParsePresence(*it, internal::FieldName(where, "presence"));
    if (!presence.ok()) return presence.status();
    c.presence = std::move(presence).value();
  }

  if (auto it = kind.find("rules"); it != kind.end()) {
    Result<Rules> rules = ParseRules(*it, internal::FieldName(where, "rules"));
    if (!rules.ok()) return rules.status();
    c.rules = std::move(rules.value());
  }

  std::string text;
  TESSERA_RETURN_IF_ERROR(ReadString(kind, where, "security", &text, &present));
  if (present) {
    if (text == "authenticated") {
      c.security = SecurityFloor::kAuthenticated;
    } else if (text == "encrypted") {
      c.security = SecurityFloor::kEncrypted;
    } else {
      return FieldError(where, "security",
                        "\"" + text +
                            "\" is not a security floor; use "
                            "\"authenticated\" (the default, the lowest "
                            "tier: there is none below it) or \"encrypted\"");
    }
  }

  TESSERA_RETURN_IF_ERROR(
      ReadString(kind, where, "persistence", &text, &present));
  if (present) {
    if (text == "durable") {
      c.persistence = Persistence::kDurable;
    } else if (text == "ephemeral") {
      c.persistence = Persistence::kEphemeral;
    } else {
      return FieldError(
          where, "persistence",
          "expected \"durable\" or \"ephemeral\", got \"" + text + "\"");
    }
  }
  const bool ephemeral = c.persistence == Persistence::kEphemeral;

  TESSERA_RETURN_IF_ERROR(internal::ReadInt(
      kind, where, "logWindow", 2, kMaxLogWindow, &c.log_window, &present));
  TESSERA_RETURN_IF_ERROR(internal::ReadInt(
      kind, where, "snapshotEveryVersions", 1, kMaxLogWindow / 2,
      &c.snapshot_every_versions, &present));
  if (c.snapshot_every_versions > c.log_window / 2) {
    return FieldError(
        where, "snapshotEveryVersions",
        std::to_string(c.snapshot_every_versions) +
            " is more than half of logWindow (" + std::to_string(c.log_window) +
            "), so a crash between snapshots could leave the log compacted "
            "past the last snapshot; set snapshotEveryVersions to at most " +
            std::to_string(c.log_window / 2) + " or logWindow to at least " +
            std::to_string(c.snapshot_every_versions * 2));
  }

  if (auto it = kind.find("limits"); it != kind.end()) {
    Result<RealmLimits> limits =
        ParseRealmLimits(*it, internal::FieldName(where, "limits"));
    if (!limits.ok()) return limits.status();
    c.limits = limits.value();
  }

  TESSERA_RETURN_IF_ERROR(internal::ReadInt(
      kind, where, "batchMs", 0, kMaxBatchMs, &c.batch_ms, &present));

  int64_t expire_ms = 0;
  TESSERA_RETURN_IF_ERROR(internal::ReadInt(kind, where, "expireAfterIdleMs", 1,
                                            kMaxExpireAfterIdleMs, &expire_ms,
                                            &present));
  if (present) {
    if (ephemeral) {
      return FieldError(where, "expireAfterIdleMs",
                        "an ephemeral realm stores nothing to expire; remove "
                        "expireAfterIdleMs or make the realm \"durable\"");
    }
    c.expire_after_idle_ms = expire_ms;
  }

  TESSERA_RETURN_IF_ERROR(
      ReadString(kind, where, "module", &c.module, &present));
  if (present && c.module.empty()) {
    return FieldError(where, "module",
                      "must not be empty (name the realm's module, or drop "
                      "the field)");
  }

  TESSERA_RETURN_IF_ERROR(ReadString(kind, where, "migrate", &text, &present));
  if (present) {
    if (ephemeral) {
      return FieldError(where, "migrate",
                        "an ephemeral realm keeps no snapshot to migrate (it "
                        "boots initial_state every cold start); remove "
                        "migrate or make the realm \"durable\"");
    }
    if (text == "wipe") {
      c.migrate = MigrateMode::kWipe;
    } else if (text == "module") {
      if (c.module.empty()) {
        return FieldError(where, "migrate",
                          "\"module\" runs the module's migrate, but the "
                          "realm has no \"module\"; add one or use "
                          "\"wipe\"");
      }
      c.migrate = MigrateMode::kModule;
    } else {
      return FieldError(
          where, "migrate",
          "expected \"wipe\" or \"module\", got \"" + text + "\"");
    }
  }
  return c;
}

}  // namespace tessera::realm
