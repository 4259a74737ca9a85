// The port through which a realm's document survives restarts
// (docs/realms.md "Persistence"): per realm instance (its key, e.g.
// "match/m-17"), a patch log of commits and snapshots of the whole
// document, both tagged with the log epoch. A cold start loads the newest
// snapshot of the current epoch and replays the log after it; a reconnect
// within the log window reads the commits it missed. Implemented by
// store::SqliteRealmStore and store::PgRealmStore (PostgreSQL,
// store/postgres/pg_realm_store.h); the one conformance suite
// (realm_store_conformance.h) runs against each.
//
// Durability: every call that returns Ok has committed (fsync'd in the
// backend's sense) before it returns. Thread-safe.
#ifndef TESSERA_REALM_REALM_STORE_H_
#define TESSERA_REALM_REALM_STORE_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace tessera::realm {

// One commit in the log: the realm's version after it and its patch,
// encoded (patch.h EncodePatch with a fresh KeyTable).
struct LoggedCommit {
  int64_t version = 0;
  std::string patch;
  bool operator==(const LoggedCommit&) const = default;
};

struct RealmSnapshot {
  int64_t epoch = 0;
  int64_t version = 0;      // the document as of this version
  std::string schema_hash;  // of the kind's schema the document follows
  std::string state;        // the document, canonical JSON text
  bool operator==(const RealmSnapshot&) const = default;
};

// What a cold start needs.
struct LoadedRealm {
  std::string kind;
  int64_t epoch = 0;
  // The newest snapshot of `epoch` (every epoch starts with one).
  RealmSnapshot snapshot;
  // The commits after snapshot.version, in version order, consecutive.
  std::vector<LoggedCommit> tail;
  int64_t head_version() const {
    return tail.empty() ? snapshot.version : tail.back().version;
  }
};

// A realm's alarm as stored (docs/realms.md "Alarms"): a named deadline in
// unix milliseconds and how many times its handler has failed so far.
struct RealmAlarm {
  std::string name;
  int64_t due_unix_ms = 0;
  int32_t failures = 0;
  bool operator==(const RealmAlarm&) const = default;
};

// One stored alarm with the realm it belongs to (ListAlarms).
struct StoredAlarm {
  std::string key;
  RealmAlarm alarm;
  bool operator==(const StoredAlarm&) const = default;
};

// Commits for one realm, appended together, and the alarm changes that go
// with them (in the same transaction: a commit that sets an alarm is never
// durable without it, and a fired alarm's row goes with its handler's
// commit).
struct RealmAppend {
  std::string key;
  int64_t epoch = 0;
  std::vector<LoggedCommit> commits;          // consecutive versions
  std::vector<RealmAlarm> alarms_set;         // insert or replace by name
  std::vector<std::string> alarms_cancelled;  // by name; unknown ones: Ok
};

class RealmStore {
 public:
  virtual ~RealmStore() = default;

  // Creates realm `key` of `kind` with `genesis` as the first snapshot of
  // its first epoch (genesis.epoch, usually 1; genesis.version, usually 0).
  // Errors: kAlreadyExists if the key exists.
  virtual Status Create(std::string_view key, std::string_view kind,
                        const RealmSnapshot& genesis) = 0;

  // Appends every entry in one transaction (group commit): all or none.
  // Each entry's first commit must be its realm's head version + 1 in that
  // epoch and its versions consecutive; otherwise nothing is written and the
  // answer is kFailedPrecondition naming the realm, the expected and the
  // offered version (a second writer, or a stale epoch, is fenced off this
  // way). kNotFound for an unknown key. Entries are checked in order, so a
  // second entry for the same realm continues after the first; an entry
  // without commits is checked all the same (key, epoch) and writes only
  // its alarm changes (cancels first, then sets).
  virtual Status Append(std::span<const RealmAppend> entries) = 0;

  // Stores a snapshot of the current epoch (version <= head, newer than
  // the newest snapshot), then drops the log entries no reconnect may still
  // ask for: those with version <= snapshot.version - log_window, never
  // ones after the snapshot. Errors: kFailedPrecondition for another epoch
  // or a version not in (newest snapshot, head]; kNotFound;
  // kInvalidArgument for a negative log_window. Only the newest snapshot
  // is ever read back, so a backend may drop older ones.
  virtual Status PutSnapshot(std::string_view key,
                             const RealmSnapshot& snapshot,
                             int64_t log_window) = 0;

  // The realm for a cold start; nullopt if it does not exist.
  virtual Result<std::optional<LoadedRealm>> Load(std::string_view key) = 0;

  // The commits of `epoch` with version > after, in order, at most
  // `limit`: a reconnect's replay. kOutOfRange when the log no longer
  // holds after + 1 (compacted) or the epoch is not the current one: the
  // client must hydrate instead; so is an `after` beyond the head (a
  // version the store never had). `after` == head: empty, Ok. kNotFound
  // for an unknown key.
  virtual Result<std::vector<LoggedCommit>> ReadLog(std::string_view key,
                                                    int64_t epoch,
                                                    int64_t after,
                                                    size_t limit) = 0;

  // A new epoch (migrate / wipe): drops every snapshot and log entry of
  // the realm and stores `first` (first.epoch must be greater than the
  // current epoch) as the new epoch's only snapshot, atomically.
  // Errors: kFailedPrecondition, kNotFound.
  virtual Status StartEpoch(std::string_view key,
                            const RealmSnapshot& first) = 0;

  // Drops the realm entirely (idle expiry), its alarms too: the next Load
  // is nullopt. Dropping an unknown key is Ok.
  virtual Status Drop(std::string_view key) = 0;

  // Every stored alarm of every realm, sorted by key then name (a boot
  // arms them all).
  virtual Result<std::vector<StoredAlarm>> ListAlarms() = 0;

  // Every realm key of `kind` (empty: all kinds), sorted.
  virtual Result<std::vector<std::string>> List(std::string_view kind) = 0;
};

}  // namespace tessera::realm

#endif  // TESSERA_REALM_REALM_STORE_H_
