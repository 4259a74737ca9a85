// The realm engine core (docs/realms.md "Engine"): one authoritative JSON
// document per realm instance, changed only by patches, each commit
// numbered with the realm's version. Durable realms make their commits
// durable through the RealmStore port (injected; this library never links
// a store) by group commit: Submit applies and queues, Flush appends every
// queued commit in one store transaction. A snapshot is written each time
// the durable head crosses a multiple of snapshotEveryVersions; a cold
// start is the newest snapshot plus the log after it.
//
// Thread-safety: none. One RealmInstance is owned by one thread (the
// realm's strand); the store it is given may be shared.
#ifndef TESSERA_REALM_ENGINE_H_
#define TESSERA_REALM_ENGINE_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "realm/kind.h"
#include "realm/patch.h"
#include "realm/realm_store.h"

namespace tessera::realm {

// What a reconnecting client at (epoch, version) is sent.
struct CatchUpAnswer {
  // true: the client must drop what it has and load `state` at (epoch,
  // version); false: it applies `commits` (consecutive, after its version,
  // up to the head) in order.
  bool hydrate = false;
  std::vector<LoggedCommit> commits;
  Json state;
  int64_t epoch = 0;
  int64_t version = 0;
};

// A kind's migrate "module": the new document (an object) for the stored
// one (at its head) written under the schema with hash `old_hash`.
using Migrate = std::function<Result<Json>(const Json& old_state,
                                           std::string_view old_hash)>;

class RealmInstance {
 public:
  // Opens realm `key` of `kind`. Durable kinds need `store` (not owned; it
  // must outlive the instance); ephemeral kinds never touch one and boot
  // `initial_state` on a fresh random epoch every open. A durable cold
  // start loads the store's newest snapshot and replays the tail; a realm
  // the store does not have is created with `initial_state` at epoch 1,
  // version 0. A stored schema hash other than the kind's refuses
  // (kFailedPrecondition, with the fix) unless the kind's migrate is
  // "wipe": then `initial_state` boots on epoch + 1. `initial_state` must
  // be an object. With migrate "module", `migrate` turns the stored head
  // into the new document: the old log is dropped and the new one starts
  // on epoch + 1 at version 0 with a snapshot of it (without `migrate`,
  // or when it fails, the open is refused and nothing is dropped).
  // Errors: kInvalidArgument, kFailedPrecondition, and the store's errors.
  static Result<std::unique_ptr<RealmInstance>> Open(
      const RealmKindConfig& kind, std::string key, RealmStore* store,
      Json initial_state, const Migrate& migrate = nullptr);

  // Applies `patch` atomically and numbers it version() + 1. A non-empty
  // `avatar` is a client and every op is checked against the kind's write
  // rules first (kPermissionDenied: nothing applied); an empty one is the
  // server, which the rules do not bind. kInvalidArgument for an empty
  // patch or one that does not apply. The commit is queued, not yet
  // durable: see Flush. kUnavailable after a failed Flush.
  Result<int64_t> Submit(const Patch& patch, std::string_view avatar);

  // Queues alarm changes (docs/realms.md "Alarms") for the next Flush,
  // which writes them in the same transaction as the commits queued with
  // them. Ephemeral realms store nothing: they are dropped.
  void QueueAlarms(std::vector<RealmAlarm> set,
                   std::vector<std::string> cancelled);
  bool has_queued_alarms() const {
    return !alarms_set_.empty() || !alarms_cancelled_.empty();
  }

  // Group commit: one store Append of every queued commit, durable when
  // this returns Ok; then durable_version() == version(). A failure leaves
  // the instance refusing every further Submit, Flush and CatchUp
  // (kUnavailable): its document may hold commits the store does not, so
  // only a reopen (which reloads the store's truth) continues. A snapshot
  // that fails is not fatal (the log still holds every commit): it is
  // retried on the next Flush and reported by last_snapshot_status().
  // Ephemeral realms: no store, the commits just become current.
  Status Flush();

  // What a client at (epoch, version) needs: the missing commits when it
  // is on this epoch, at or behind the head and at most logWindow behind
  // (served from memory, or the store's log for older ones), else a
  // hydrate. Flushes first, so no client ever learns a version that a
  // crash could take back. Errors: those of Flush and the store.
  Result<CatchUpAnswer> CatchUp(int64_t epoch, int64_t version);

  const Json& state() const { return state_; }
  int64_t version() const { return version_; }
  int64_t epoch() const { return epoch_; }
  int64_t durable_version() const { return durable_version_; }
  const std::string& key() const { return key_; }
  const Status& last_snapshot_status() const { return snapshot_status_; }

 private:
  RealmInstance(const RealmKindConfig& kind, std::string key, RealmStore* store)
      : kind_(kind), key_(std::move(key)), store_(store) {}

  Status ColdStart(Json initial_state, const Migrate& migrate);
  Status MigrateByModule(const LoadedRealm& loaded, const Migrate& migrate);
  Status Replay(const LoadedRealm& loaded);
  void Remember(LoggedCommit commit);
  Status MaybeSnapshot(int64_t previous_durable);

  RealmKindConfig kind_;
  std::string key_;
  RealmStore* store_;  // null: ephemeral
  Json state_ = Json::object();
  int64_t epoch_ = 0;
  int64_t version_ = 0;
  int64_t durable_version_ = 0;
  std::vector<LoggedCommit> pending_;
  std::vector<RealmAlarm> alarms_set_;         // for the next Flush
  std::vector<std::string> alarms_cancelled_;  // for the next Flush
  // The newest durable commits (at most logWindow), for catch-up without
  // a store read.
  std::deque<LoggedCommit> recent_;
  bool snapshot_due_ = false;
  Status snapshot_status_;
  Status broken_;  // not Ok: a Flush failed, see Flush
};

// Limits for decoding the realm's own log: the server's writes are not
// bound by the ingress limits, only a nesting cap against runaway
// recursion.
DecodeLimits LogDecodeLimits();

}  // namespace tessera::realm

#endif  // TESSERA_REALM_ENGINE_H_
