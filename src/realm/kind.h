// A realm kind: one entry of a `tessera.json` "realms" array
// (docs/realms.md "The realm kind"), parsed and checked at boot so that a
// misconfiguration refuses to start, with the fix in the message, instead
// of failing at a later cold start.
//
//   {"name": "match", "schema": {...}, "rules": [...],
//    "security": "authenticated", "persistence": "durable",
//    "snapshotEveryVersions": 64, "logWindow": 512, "limits": {...},
//    "expireAfterIdleMs": 86400000, "module": "match-logic",
//    "migrate": "module"}
//
// Only "name" is required. Pure; thread-safe.
#ifndef TESSERA_REALM_KIND_H_
#define TESSERA_REALM_KIND_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"
#include "realm/limits.h"
#include "realm/patch.h"
#include "realm/presence.h"
#include "realm/rules.h"

namespace tessera::realm {

// The lowest connection a realm serves. There is deliberately no tier
// below kAuthenticated. Ordered: a higher value is a stricter floor.
enum class SecurityFloor {
  kAuthenticated = 1,  // a valid signed ticket
  kEncrypted = 2,      // a valid ticket over TLS
};
std::string_view SecurityFloorName(SecurityFloor floor);

// A deployment may raise a kind's floor, never lower it: the stricter of
// the two.
inline SecurityFloor EffectiveFloor(SecurityFloor kind,
                                    SecurityFloor deployment) {
  return kind > deployment ? kind : deployment;
}

enum class Persistence { kDurable, kEphemeral };

// What a boot does when the stored schema hash differs from the kind's.
enum class MigrateMode {
  kNone,    // refuse to boot
  kWipe,    // drop the old state, boot initial_state on a new epoch
  kModule,  // the module's migrate(old_state, old_hash), on a new epoch
};

inline constexpr int64_t kMaxLogWindow = 1000000;
// 365 days.
inline constexpr int64_t kMaxExpireAfterIdleMs = 365LL * 24 * 3600 * 1000;
inline constexpr int64_t kMaxBatchMs = 1000;

struct RealmKindConfig {
  std::string name;              // [a-z][a-z0-9_-]{0,63}
  Json schema = Json::object();  // opaque to the engine, hashed
  std::string schema_hash;       // hex SHA-256 of schema's canonical dump
  Rules rules;
  SecurityFloor security = SecurityFloor::kAuthenticated;
  Persistence persistence = Persistence::kDurable;
  int64_t snapshot_every_versions = 64;  // <= log_window / 2
  int64_t log_window = 512;
  RealmLimits limits;
  std::optional<int64_t> expire_after_idle_ms;  // durable only
  // "batchMs": after a group commit is sent, what comes in during the next
  // this many milliseconds waits and goes out as one group commit (one
  // flush, one write per reader). 0: every pass commits and sends at once.
  int64_t batch_ms = 0;
  // The document a new instance starts from ("initialState", an object;
  // a module's initial_state takes its place).
  Json initial_state = Json::object();
  // The server-kept row per attached avatar ("presence"; presence.h).
  std::optional<PresenceConfig> presence;
  std::string module;  // the realm logic's module; empty: none
  MigrateMode migrate = MigrateMode::kNone;  // kNone for ephemeral
};

// Parses and validates one "realms" entry. `where` prefixes every message
// ("app/tessera.json: realms[0]"). Errors: kInvalidArgument naming the
// field: unknown fields (listing the known ones), wrong types, bad values,
// a security floor other than "authenticated" / "encrypted", a snapshot
// cadence over half the log window, migrate or expireAfterIdleMs on an
// ephemeral realm, migrate "module" without a module.
Result<RealmKindConfig> ParseRealmKind(const Json& kind,
                                       std::string_view where);

// Hex SHA-256 of `schema`'s canonical JSON (sorted keys, no spaces): the
// hash stored with every snapshot.
std::string SchemaHash(const Json& schema);

}  // namespace tessera::realm

#endif  // TESSERA_REALM_KIND_H_
