#include "realm/host_instance.h"

#include <chrono>
#include <utility>

#include "realm/presence.h"
#include "realm/rules.h"

namespace tessera::realm {

RealmHost::Instance::Instance(RealmHost* host,
                              std::shared_ptr<const RealmKindConfig> kind,
                              std::string key, std::string id)
    : host_(host),
      kind_(std::move(kind)),
      key_(std::move(key)),
      id_(std::move(id)) {}

bool RealmHost::Instance::Push(Item& item, bool* poke) {
  std::lock_guard<std::mutex> lock(mu_);
  if (unloading_) return false;
  inbox_.push_back(std::move(item));
  *poke = held_until_us_ == 0;
  return true;
}

void RealmHost::Instance::Fail(Item& item, int code,
                               const std::string& reason) {
  if (item.type == Item::Type::kAttach) {
    if (std::shared_ptr<RealmPeer> peer = item.weak_peer.lock()) {
      peer->OnClosed(code, reason);
    }
  } else if (item.type == Item::Type::kUpdate && item.done != nullptr) {
    item.done->set_value(Status(StatusCode::kUnavailable, reason));
  } else if (item.type == Item::Type::kAlarm) {
    // Not run: due again after a pause (the instance may open next time).
    host_->ReleaseAlarms(
        id_, host_->options_.pool->clock()->NowUs() + AlarmBackoffMs(1) * 1000);
  }
}

bool RealmHost::Instance::Unload(bool force, int code,
                                 const std::string& reason) {
  std::vector<Item> left;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!inbox_.empty() && !force) return false;
    unloading_ = true;
    left.swap(inbox_);
  }
  for (Item& item : left) Fail(item, code, reason);
  return true;
}

bool RealmHost::Instance::EnsureOpen(std::span<Item> items) {
  if (realm_ != nullptr) return true;
  const RealmHostOptions& options = host_->options_;
  Json initial = kind_->initial_state;
  if (options.initial_state) {
    initial = options.initial_state(*kind_, key_);
  } else if (options.hooks != nullptr) {
    Result<std::optional<Json>> from_hooks =
        options.hooks->InitialState(*kind_, key_);
    if (!from_hooks.ok()) {
      const std::string reason = "realm " + id_ + ": initial_state failed: " +
                                 from_hooks.status().message();
      for (Item& item : items) Fail(item, kCloseRealmUnavailable, reason);
      return false;
    }
    if (from_hooks->has_value()) initial = std::move(**from_hooks);
  }
  RealmStore* store =
      kind_->persistence == Persistence::kDurable ? options.store : nullptr;
  Result<std::unique_ptr<RealmInstance>> opened =
      kind_->persistence == Persistence::kDurable && store == nullptr
          ? Result<std::unique_ptr<RealmInstance>>(
                Status(StatusCode::kFailedPrecondition,
                       "durable realms need a realm store"))
          : RealmInstance::Open(
                *kind_, id_, store, std::move(initial),
                [this](const Json& old_state,
                       std::string_view old_hash) -> Result<Json> {
                  RealmHooks* hooks = host_->options_.hooks;
                  if (hooks == nullptr) {
                    return Status(StatusCode::kFailedPrecondition,
                                  "no module serves realm kind " + kind_->name);
                  }
                  return hooks->Migrate(*kind_, key_, old_state, old_hash);
                });
  if (opened.ok()) {
    realm_ = std::move(opened).value();
    CollectOrphans();
    return true;
  }
  const std::string reason =
      "realm " + id_ + " could not be opened: " + opened.status().message();
  for (Item& item : items) Fail(item, kCloseRealmUnavailable, reason);
  return false;
}

std::optional<int64_t> RealmHost::Instance::Run(int64_t now_us) {
  // batchMs: what came in since the last group commit went out waits for
  // the window to end, and goes out as one group commit then.
  if (kind_->batch_ms > 0 && sent_us_ &&
      now_us < *sent_us_ + kind_->batch_ms * 1000) {
    const int64_t due_us = *sent_us_ + kind_->batch_ms * 1000;
    std::lock_guard<std::mutex> lock(mu_);
    held_until_us_ = due_us;
    return due_us;
  }
  std::vector<Item> items;
  {
    std::lock_guard<std::mutex> lock(mu_);
    items.swap(inbox_);
    held_until_us_ = 0;
  }
  now_us_ = now_us;
  for (size_t i = 0; i < items.size(); ++i) {
    Item& item = items[i];
    if (broken_) {
      Fail(item, kCloseRealmUnavailable, "realm " + id_ + " failed");
      continue;
    }
    if (item.type == Item::Type::kExpire) {
      HandleExpire();
      continue;
    }
    if (!EnsureOpen(std::span(items).subspan(i))) {
      Unload(/*force=*/true, kCloseRealmUnavailable,
             "realm " + id_ + " could not be opened");
      host_->Forget(id_, this);
      return std::nullopt;
    }
    Handle(item);
  }
  if (!broken_ && realm_ != nullptr) SweepOrphans();
  if (!broken_) FlushAndDeliver();
  if (broken_) {
    Unload(/*force=*/true, kCloseRealmUnavailable, "realm " + id_ + " failed");
    host_->Forget(id_, this);
    return std::nullopt;
  }
  const int64_t unload_us = host_->options_.unload_after_ms * 1000;
  if (!peers_.empty()) {
    idle_since_us_.reset();
    // Woken by pokes; only the orphans' sweep may be due.
    return orphans_.empty() ? now_us + 3'600'000'000 : orphans_due_us_;
  }
  if (!orphans_.empty()) return orphans_due_us_;  // not before the sweep
  if (!idle_since_us_) idle_since_us_ = now_us;
  if (now_us - *idle_since_us_ < unload_us) return *idle_since_us_ + unload_us;
  if (!Unload(/*force=*/false, 0, "")) return now_us;  // more came in
  if (kind_->persistence != Persistence::kDurable) {
    host_->alarm_clock_->CancelAll(id_);  // they die with the document
  }
  host_->Forget(id_, this);
  return std::nullopt;
}

void RealmHost::Instance::Finish() {
  std::vector<Item> items;
  {
    std::lock_guard<std::mutex> lock(mu_);
    unloading_ = true;
    items.swap(inbox_);
  }
  const std::string stopping = "the server is stopping";
  if (realm_ == nullptr || broken_) {
    for (Item& item : items) Fail(item, kCloseGoingAway, stopping);
  } else {
    for (Item& item : items) {
      if (broken_ || realm_ == nullptr || item.type == Item::Type::kExpire) {
        Fail(item, kCloseGoingAway, stopping);
      } else {
        Handle(item);
      }
    }
    if (!broken_ && realm_ != nullptr) FlushAndDeliver();
  }
  for (auto& [raw, peer] : peers_) {
    if (std::shared_ptr<RealmPeer> p = peer.peer.lock()) {
      p->OnClosed(kCloseGoingAway, stopping);
    }
  }
  peers_.clear();
  avatars_.clear();
}

std::shared_ptr<RealmPeer> RealmHost::Instance::Lock(
    const RealmPeer* peer) const {
  auto it = peers_.find(peer);
  return it == peers_.end() ? nullptr : it->second.peer.lock();
}

void RealmHost::Instance::Handle(Item& item) {
  switch (item.type) {
    case Item::Type::kAttach:
      HandleAttach(item);
      return;
    case Item::Type::kWrite: {
      auto it = peers_.find(item.peer);
      if (it == peers_.end()) return;  // detached meanwhile
      Result<int64_t> version = realm_->Submit(item.patch, it->second.avatar);
      if (version.ok()) {
        batch_.push_back(BroadcastCommit{
            *version, std::move(item.patch), item.peer, item.seq, {}});
        return;
      }
      const StatusCode code = version.status().code();
      if (code == StatusCode::kUnavailable) {
        Break(version.status());
        return;
      }
      refusals_.push_back(Answer{item.peer, item.seq,
                                 code == StatusCode::kPermissionDenied
                                     ? "permission_denied"
                                     : "invalid_patch",
                                 version.status().message()});
      return;
    }
    case Item::Type::kDetach: {
      auto it = peers_.find(item.peer);
      if (it == peers_.end()) return;
      std::string avatar = std::move(it->second.avatar);
      peers_.erase(it);
      DropAvatar(avatar, "left");
      MaybeArmExpiry();
      return;
    }
    case Item::Type::kExpire:
      HandleExpire();
      return;
    case Item::Type::kIntent:
      HandleIntent(item);
      return;
    case Item::Type::kAlarm:
      HandleAlarm(item);
      return;
    case Item::Type::kUpdate: {
      Result<int64_t> version = realm_->Submit(item.patch, "");
      if (!version.ok()) {
        if (version.status().code() == StatusCode::kUnavailable) {
          Break(version.status());
        }
        item.done->set_value(version.status());
        return;
      }
      batch_.push_back(
          BroadcastCommit{*version, std::move(item.patch), nullptr, 0, {}});
      updates_.emplace_back(std::move(item.done), *version);
      return;
    }
  }
}

void RealmHost::Instance::HandleIntent(Item& item) {
  auto it = peers_.find(item.peer);
  if (it == peers_.end()) return;  // detached meanwhile
  RealmHooks* hooks = host_->options_.hooks;
  Result<HookResult> patch =
      hooks != nullptr
          ? hooks->ApplyIntent(*kind_, key_, it->second.avatar, item.intent,
                               item.args, realm_->state())
          : Result<HookResult>(Status(StatusCode::kFailedPrecondition,
                                      "realm kind \"" + kind_->name +
                                          "\" has no module, and intents "
                                          "need one"));
  if (!patch.ok()) {
    const StatusCode code = patch.status().code();
    refusals_.push_back(
        Answer{item.peer, item.seq,
               code == StatusCode::kFailedPrecondition ? "refused"
               : code == StatusCode::kUnavailable      ? "unavailable"
                                                       : "failed",
               patch.status().message()});
    return;
  }
  if (patch->patch.empty()) {
    QueueAlarmChanges(patch->alarms);
    intents_done_.push_back(Done{item.peer, item.seq, realm_->version()});
    return;
  }
  Result<int64_t> version = realm_->Submit(patch->patch, "");
  if (!version.ok()) {
    if (version.status().code() == StatusCode::kUnavailable) {
      Break(version.status());
      return;
    }
    refusals_.push_back(Answer{item.peer, item.seq, "invalid_patch",
                               "intent \"" + item.intent +
                                   "\": the module's patch does not apply: " +
                                   version.status().message()});
    return;
  }
  batch_.push_back(
      BroadcastCommit{*version, std::move(patch->patch), nullptr, 0, {}});
  QueueAlarmChanges(patch->alarms);
  intents_done_.push_back(Done{item.peer, item.seq, *version});
}

void RealmHost::Instance::MaybeArmExpiry() {
  if (!peers_.empty() || !kind_->expire_after_idle_ms ||
      kind_->persistence != Persistence::kDurable) {
    return;
  }
  host_->ArmExpiryAt(id_, now_us_ + *kind_->expire_after_idle_ms * 1000);
}

void RealmHost::Instance::HandleExpire() {
  RealmStore* store = host_->options_.store;
  if (!peers_.empty() || !kind_->expire_after_idle_ms ||
      kind_->persistence != Persistence::kDurable || store == nullptr) {
    return;  // attached meanwhile, or nothing of it is stored
  }
  const int64_t period_us = *kind_->expire_after_idle_ms * 1000;
  const auto& log = host_->options_.log;
  if (RealmHooks* hooks = host_->options_.hooks) {
    if (realm_ == nullptr) {
      Result<std::optional<LoadedRealm>> loaded = store->Load(id_);
      if (loaded.ok() && !loaded->has_value()) return;  // dropped already
      Result<std::unique_ptr<RealmInstance>> opened =
          loaded.ok()
              ? RealmInstance::Open(*kind_, id_, store, kind_->initial_state)
              : Result<std::unique_ptr<RealmInstance>>(loaded.status());
      if (!opened.ok()) {
        if (log) {
          log("realm " + id_ +
              ": idle expiry put off: " + opened.status().message());
        }
        host_->ArmExpiryAt(id_, now_us_ + period_us);
        return;
      }
      realm_ = std::move(opened).value();
    }
    if (hooks->OnExpire(*kind_, key_, realm_->state())) {
      host_->ArmExpiryAt(id_, now_us_ + period_us);  // vetoed: one more period
      return;
    }
  }
  if (realm_ != nullptr && !FlushAndDeliver()) return;
  Status dropped = store->Drop(id_);
  if (!dropped.ok()) {
    if (log) log("realm " + id_ + ": idle expiry failed: " + dropped.message());
    host_->ArmExpiryAt(id_, now_us_ + period_us);
    return;
  }
  host_->alarm_clock_->CancelAll(id_);  // the store dropped their rows
  realm_.reset();  // the next attach boots the initial state
  if (log)
    log("realm " + id_ + ": expired after idle; its storage was dropped");
}

void RealmHost::Instance::HandleAttach(Item& item) {
  host_->DisarmExpiry(id_);
  // The answer is given at the durable head, so what is pending goes out
  // first: the new peer must neither miss it nor get it twice.
  if (!FlushAndDeliver()) return;
  std::shared_ptr<RealmPeer> peer = item.weak_peer.lock();
  if (peer == nullptr) return;  // gone before its turn
  Result<CatchUpAnswer> caught = realm_->CatchUp(item.epoch, item.version);
  if (!caught.ok()) {
    peer->OnClosed(kCloseRealmUnavailable,
                   "realm " + id_ + ": " + caught.status().message());
    Break(caught.status());
    return;
  }
  AttachAnswer answer;
  answer.hydrate = caught->hydrate;
  answer.epoch = caught->epoch;
  answer.head = caught->version;
  answer.from = item.version;
  answer.avatar = item.avatar;
  answer.kind = kind_;
  if (answer.hydrate) {
    answer.state = SliceForReader(kind_->rules, caught->state, item.avatar);
  } else {
    Status error;
    answer.replay = DecodeReplay(caught->commits, &error);
    if (!error.ok()) {
      peer->OnClosed(kCloseRealmUnavailable,
                     "realm " + id_ + ": " + error.message());
      Break(error);
      return;
    }
  }
  auto existing = peers_.find(item.peer);
  if (existing == peers_.end()) {
    peers_.emplace(item.peer, Peer{item.weak_peer, item.avatar});
    peer->OnAttached(std::move(answer));
    AddAvatar(item.avatar);
    return;
  }
  // A second HELLO on the same connection.
  std::string old = existing->second.avatar;
  existing->second.peer = item.weak_peer;
  if (old == item.avatar) {
    peer->OnAttached(std::move(answer));  // swapped in place
    return;
  }
  existing->second.avatar = item.avatar;
  DropAvatar(old, "identity-changed");
  peer->OnAttached(std::move(answer));
  AddAvatar(item.avatar);
}

void RealmHost::Instance::CollectOrphans() {
  orphans_.clear();
  if (!kind_->presence || kind_->persistence != Persistence::kDurable) return;
  const PresenceConfig::Pattern& path = kind_->presence->path;
  const Json* at = &realm_->state();
  for (size_t i = 0; i < path.avatar_index; ++i) {
    if (!at->is_object() || !at->contains(path.keys[i])) return;
    at = &(*at)[path.keys[i]];
  }
  if (!at->is_object()) return;
  for (const auto& [avatar, row] : at->items()) orphans_.insert(avatar);
  orphans_due_us_ = now_us_ + host_->options_.rejoin_grace_ms * 1000;
}

void RealmHost::Instance::SweepOrphans() {
  if (orphans_.empty() || now_us_ < orphans_due_us_) return;
  std::set<std::string> gone;
  gone.swap(orphans_);
  for (const std::string& avatar : gone) {
    if (avatars_.contains(avatar)) continue;  // came back
    RunHook(PresenceDetach(*kind_->presence, avatar, realm_->state()),
            "presence");
    if (RealmHooks* hooks = host_->options_.hooks) {
      RunHook(
          hooks->OnAvatarDetach(*kind_, key_, avatar, "gone", realm_->state()),
          "on_avatar_detach");
    }
  }
}

void RealmHost::Instance::AddAvatar(const std::string& avatar) {
  orphans_.erase(avatar);  // back after a restart: not a departure
  if (++avatars_[avatar] != 1) return;
  if (kind_->presence) {
    RunHook(PresenceAttach(*kind_->presence, avatar, realm_->state()),
            "presence");
  }
  if (RealmHooks* hooks = host_->options_.hooks) {
    RunHook(hooks->OnAvatarAttach(*kind_, key_, avatar, realm_->state()),
            "on_avatar_attach");
  }
}

void RealmHost::Instance::DropAvatar(const std::string& avatar,
                                     std::string_view reason) {
  auto it = avatars_.find(avatar);
  if (it == avatars_.end() || --it->second > 0) return;
  avatars_.erase(it);
  if (kind_->presence) {
    RunHook(PresenceDetach(*kind_->presence, avatar, realm_->state()),
            "presence");
  }
  if (RealmHooks* hooks = host_->options_.hooks) {
    RunHook(
        hooks->OnAvatarDetach(*kind_, key_, avatar, reason, realm_->state()),
        "on_avatar_detach");
  }
}

bool RealmHost::Instance::RunHook(HookResult result, std::string_view what) {
  if (!result.patch.empty()) {
    Result<int64_t> version = realm_->Submit(result.patch, "");
    if (!version.ok()) {
      if (version.status().code() == StatusCode::kUnavailable) {
        Break(version.status());
      } else if (host_->options_.log) {
        host_->options_.log("realm " + id_ + ": the patch of " +
                            std::string(what) +
                            " was refused: " + version.status().message());
      }
      return false;
    }
    batch_.push_back(
        BroadcastCommit{*version, std::move(result.patch), nullptr, 0, {}});
  }
  QueueAlarmChanges(result.alarms);
  return true;
}

bool RealmHost::Instance::FlushAndDeliver() {
  if (broken_) return false;
  const auto started = std::chrono::steady_clock::now();
  if (!batch_.empty() || (realm_ != nullptr && realm_->has_queued_alarms())) {
    Status flushed = realm_->Flush();
    if (!flushed.ok()) {
      Break(flushed);
      return false;
    }
  }
  SettleAlarms();
  if (!batch_.empty()) {
    if (host_->commits_ != nullptr) {
      host_->commits_->Add(batch_.size());
      host_->flush_seconds_->Observe(
          std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                        started)
              .count());
    }
    for (BroadcastCommit& commit : batch_) {
      commit.keys = PlanKeys(commit.patch, &shared_keys_, keys_source_);
    }
    auto shared = std::make_shared<const CommitBatch>(std::move(batch_));
    batch_.clear();
    sent_us_ = now_us_;
    for (auto& [raw, peer] : peers_) {
      if (std::shared_ptr<RealmPeer> p = peer.peer.lock()) p->OnCommits(shared);
    }
  }
  for (Answer& answer : refusals_) {
    if (std::shared_ptr<RealmPeer> p = Lock(answer.peer)) {
      p->OnRejected(answer.seq, std::move(answer.code),
                    std::move(answer.message));
    }
  }
  if (host_->refusals_ != nullptr) host_->refusals_->Add(refusals_.size());
  refusals_.clear();
  for (const Done& done : intents_done_) {
    if (std::shared_ptr<RealmPeer> p = Lock(done.peer)) {
      p->OnIntentDone(done.seq, done.version);
    }
  }
  intents_done_.clear();
  for (auto& [done, version] : updates_) done->set_value(version);
  updates_.clear();
  return true;
}

void RealmHost::Instance::Break(const Status& why) {
  broken_ = true;
  const std::string reason = "realm " + id_ + " failed: " + why.message();
  for (auto& [raw, peer] : peers_) {
    if (std::shared_ptr<RealmPeer> p = peer.peer.lock()) {
      p->OnClosed(kCloseRealmUnavailable, reason);
    }
  }
  peers_.clear();
  avatars_.clear();
  batch_.clear();
  refusals_.clear();
  intents_done_.clear();
  for (auto& [done, version] : updates_) {
    done->set_value(Status(StatusCode::kUnavailable, reason));
  }
  updates_.clear();
  clock_changes_.clear();
  host_->ReleaseAlarms(id_, now_us_ + AlarmBackoffMs(1) * 1000);
}

CommitBatch RealmHost::Instance::DecodeReplay(
    const std::vector<LoggedCommit>& commits, Status* error) const {
  CommitBatch out;
  out.reserve(commits.size());
  for (const LoggedCommit& commit : commits) {
    KeyTable keys;
    Result<Patch> patch = DecodePatch(
        std::span(reinterpret_cast<const uint8_t*>(commit.patch.data()),
                  commit.patch.size()),
        &keys, LogDecodeLimits());
    if (!patch.ok()) {
      *error = Status(StatusCode::kInternal,
                      "logged commit " + std::to_string(commit.version) +
                          " does not decode: " + patch.status().message());
      return {};
    }
    out.push_back(BroadcastCommit{
        commit.version, std::move(patch).value(), nullptr, 0, {}});
  }
  return out;
}

}  // namespace tessera::realm
