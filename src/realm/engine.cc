// RealmInstance: opening and cold start (engine.h). Commits, flushes and
// catch-up are in engine_commit.cc.
#include "realm/engine.h"

#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <utility>

namespace tessera::realm {
namespace {

Status Precondition(std::string message) {
  return Status(StatusCode::kFailedPrecondition, std::move(message));
}

// A fresh epoch for an ephemeral realm: random, positive and below 2^53
// so that JavaScript clients hold it exactly; never 0 or 1 (1 is every
// durable realm's first epoch), so a client of an earlier boot hydrates.
int64_t RandomEpoch() {
  std::random_device device;
  const uint64_t bits = (static_cast<uint64_t>(device()) << 32) | device();
  const uint64_t range = (uint64_t{1} << 53) - 2;
  return static_cast<int64_t>(bits % range) + 2;
}

}  // namespace

DecodeLimits LogDecodeLimits() {
  DecodeLimits limits;
  const size_t unbounded = std::numeric_limits<size_t>::max();
  limits.max_ops = unbounded;
  limits.max_bytes = unbounded;
  limits.max_key_length = unbounded;
  limits.max_expanded_leaves = unbounded;
  limits.max_depth = 256;
  return limits;
}

Result<std::unique_ptr<RealmInstance>> RealmInstance::Open(
    const RealmKindConfig& kind, std::string key, RealmStore* store,
    Json initial_state, const Migrate& migrate) {
  if (!initial_state.is_object()) {
    return InvalidArgument("realm " + key +
                           ": the initial state must be a JSON object");
  }
  if (key.empty())
    return InvalidArgument("realm of kind " + kind.name +
                           ": an empty realm key");
  const bool durable = kind.persistence == Persistence::kDurable;
  if (durable && store == nullptr) {
    return InvalidArgument("realm " + key + ": kind " + kind.name +
                           " is durable but no realm store was given; pass "
                           "one or declare the kind \"ephemeral\"");
  }
  std::unique_ptr<RealmInstance> realm(
      new RealmInstance(kind, std::move(key), durable ? store : nullptr));
  TESSERA_RETURN_IF_ERROR(realm->ColdStart(std::move(initial_state), migrate));
  return realm;
}

Status RealmInstance::ColdStart(Json initial_state, const Migrate& migrate) {
  if (store_ == nullptr) {
    epoch_ = RandomEpoch();
    state_ = std::move(initial_state);
    return Status::Ok();
  }
  Result<std::optional<LoadedRealm>> loaded = store_->Load(key_);
  if (!loaded.ok()) return loaded.status();
  if (!loaded->has_value()) {
    const RealmSnapshot genesis{1, 0, kind_.schema_hash, initial_state.dump()};
    TESSERA_RETURN_IF_ERROR(store_->Create(key_, kind_.name, genesis));
    epoch_ = 1;
    state_ = std::move(initial_state);
    return Status::Ok();
  }
  const LoadedRealm& realm = **loaded;
  if (realm.kind != kind_.name) {
    return Precondition("realm " + key_ + " is stored as kind \"" + realm.kind +
                        "\", not \"" + kind_.name +
                        "\": open it with its own kind, or drop it");
  }
  if (realm.snapshot.schema_hash != kind_.schema_hash) {
    if (kind_.migrate == MigrateMode::kWipe) {
      const RealmSnapshot first{realm.epoch + 1, 0, kind_.schema_hash,
                                initial_state.dump()};
      TESSERA_RETURN_IF_ERROR(store_->StartEpoch(key_, first));
      epoch_ = first.epoch;
      state_ = std::move(initial_state);
      return Status::Ok();
    }
    if (kind_.migrate == MigrateMode::kModule) {
      if (!migrate) {
        return Precondition(
            "realm " + key_ + ": the schema changed (stored " +
            realm.snapshot.schema_hash + ", kind " + kind_.schema_hash +
            ") and kind " + kind_.name +
            " has migrate \"module\", but no module migrate was given");
      }
      return MigrateByModule(realm, migrate);
    }
    return Precondition(
        "realm " + key_ + ": the schema changed (stored " +
        realm.snapshot.schema_hash + ", kind " + kind_.schema_hash +
        "); the stored state is refused rather than reinterpreted. Add "
        "\"migrate\": \"wipe\" to kind " +
        kind_.name +
        " to boot its initial state on a new epoch, or restore "
        "the old schema");
  }
  return Replay(realm);
}

Status RealmInstance::MigrateByModule(const LoadedRealm& loaded,
                                      const Migrate& migrate) {
  // The old document at its head, by the old log.
  TESSERA_RETURN_IF_ERROR(Replay(loaded));
  Result<Json> migrated = migrate(state_, loaded.snapshot.schema_hash);
  if (!migrated.ok() || !migrated->is_object()) {
    return Precondition(
        "realm " + key_ + ": migrate from schema " +
        loaded.snapshot.schema_hash + " failed, so nothing was changed: " +
        (migrated.ok() ? std::string("it did not answer a JSON object")
                       : migrated.status().message()));
  }
  const RealmSnapshot first{loaded.epoch + 1, 0, kind_.schema_hash,
                            migrated->dump()};
  TESSERA_RETURN_IF_ERROR(store_->StartEpoch(key_, first));
  state_ = std::move(migrated).value();
  epoch_ = first.epoch;
  version_ = 0;
  durable_version_ = 0;
  recent_.clear();
  snapshot_due_ = false;
  return Status::Ok();
}

Status RealmInstance::Replay(const LoadedRealm& loaded) {
  Json doc = Json::parse(loaded.snapshot.state, nullptr,
                         /*allow_exceptions=*/false);
  if (!doc.is_object()) {
    return Status(StatusCode::kInternal,
                  "realm " + key_ + ": the snapshot at version " +
                      std::to_string(loaded.snapshot.version) +
                      " is not a JSON object");
  }
  int64_t version = loaded.snapshot.version;
  const DecodeLimits limits = LogDecodeLimits();
  for (const LoggedCommit& commit : loaded.tail) {
    const std::string where =
        "realm " + key_ + ": log version " + std::to_string(commit.version);
    if (commit.version != version + 1) {
      return Status(StatusCode::kInternal,
                    where + " follows version " + std::to_string(version));
    }
    KeyTable keys;
    const auto* bytes = reinterpret_cast<const uint8_t*>(commit.patch.data());
    Result<Patch> patch =
        DecodePatch({bytes, commit.patch.size()}, &keys, limits);
    if (!patch.ok()) {
      return Status(StatusCode::kInternal,
                    where + ": " + patch.status().message());
    }
    Status applied = ApplyPatch(*patch, &doc);
    if (!applied.ok()) {
      return Status(StatusCode::kInternal, where + ": " + applied.message());
    }
    version = commit.version;
    Remember(commit);
  }
  state_ = std::move(doc);
  epoch_ = loaded.epoch;
  version_ = version;
  durable_version_ = version;
  // A crash between the commit that crossed a multiple and its snapshot:
  // take the snapshot on the next Flush.
  const int64_t every = kind_.snapshot_every_versions;
  snapshot_due_ =
      every > 0 && loaded.snapshot.version / every != version / every;
  return Status::Ok();
}

void RealmInstance::Remember(LoggedCommit commit) {
  recent_.push_back(std::move(commit));
  while (static_cast<int64_t>(recent_.size()) > kind_.log_window) {
    recent_.pop_front();
  }
}

}  // namespace tessera::realm
