// ShardHost's hot reload (shard_host.h, "Hot reload"): a running shard
// moves to a new build of its module by save -> restore on its own worker,
// between two ticks, keeping its subscribers, schedule and tick count.
// Anything that goes wrong leaves it on the module it ran.
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "shard/guest_shard.h"
#include "shard/hosted_shard.h"
#include "shard/message_router.h"
#include "shard/shard_host.h"
#include "shard/subscriber_frames.h"

namespace tessera::shard {

void ReloadBatch::Report(ReloadOutcome outcome) {
  std::function<void(std::vector<ReloadOutcome>)> done;
  std::vector<ReloadOutcome> outcomes;
  {
    std::lock_guard<std::mutex> lock(mu_);
    outcomes_.push_back(std::move(outcome));
    if (waiting_ == 0 || --waiting_ != 0) return;
    done = std::move(done_);
    outcomes = std::move(outcomes_);
  }
  if (done) done(std::move(outcomes));
}

void ShardHost::Reload(std::string_view kind,
                       std::shared_ptr<const KindEntry> entry,
                       std::function<void(std::vector<ReloadOutcome>)> done) {
  std::vector<std::shared_ptr<HostedShard>> targets;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!shut_down_) {
      for (const auto& [id, shard] : shards_) {
        if (shard->kind->config.name != kind) continue;
        std::lock_guard<std::mutex> shard_lock(shard->mu);
        if (shard->info.status != ShardStatus::kStopped) {
          targets.push_back(shard);
        }
      }
    }
  }
  if (targets.empty()) {
    if (done) done({});
    return;
  }
  auto batch = std::make_shared<ReloadBatch>(targets.size(), std::move(done));
  for (const auto& shard : targets) {
    std::shared_ptr<PendingReload> superseded;
    {
      std::lock_guard<std::mutex> lock(shard->mu);
      superseded = std::move(shard->reload);
      shard->reload =
          std::make_shared<PendingReload>(PendingReload{entry, batch});
    }
    if (superseded != nullptr) {
      superseded->batch->Report(
          ReloadOutcome{shard->id, false, "superseded by a newer reload"});
    }
    pool_->Poke(shard);
  }
}

void ShardHost::DropReload(HostedShard& shard, const std::string& why) {
  std::shared_ptr<PendingReload> pending;
  {
    std::lock_guard<std::mutex> lock(shard.mu);
    pending = std::move(shard.reload);
  }
  if (pending != nullptr) {
    pending->batch->Report(ReloadOutcome{shard.id, false, why});
  }
}

void ShardHost::TakeReload(HostedShard& shard, int64_t now_us) {
  std::shared_ptr<PendingReload> pending;
  std::string version;
  {
    std::lock_guard<std::mutex> lock(shard.mu);
    pending = std::move(shard.reload);
    version = shard.info.module_version;
  }
  if (pending == nullptr) return;
  const KindEntry& entry = *pending->entry;
  auto keep = [&](std::string why) {
    pending->batch->Report(ReloadOutcome{
        shard.id, false, why + "; it keeps running its old module"});
  };
  if (!entry.version.empty() && entry.version == version) {
    pending->batch->Report(ReloadOutcome{shard.id, true, ""});
    return;  // started with this build already
  }
  if (!shard.guest->has_save()) {
    keep("its module exports no tessera_save, so its state cannot move");
    return;
  }
  Result<std::optional<std::string>> saved = shard.guest->Save();
  if (!saved.ok()) {
    if (shard.guest->failed()) {
      Finish(shard, StopReason::kFailed, shard.guest->failure(), now_us);
      pending->batch->Report(ReloadOutcome{
          shard.id, false,
          "its module failed while saving: " + shard.guest->failure()});
      return;
    }
    keep("its save was refused: " + saved.status().message());
    return;
  }
  if (!saved->has_value()) {
    keep("its module saved no state");
    return;
  }
  GuestEnv env;
  MakeGuestEnv(shard, &env);
  Result<std::unique_ptr<GuestShard>> fresh = GuestShard::Restore(
      entry.module, shard.kind->config, shard.id, shard.params, **saved, env);
  std::unique_ptr<SubscriberFrames> views;
  if (fresh.ok()) {
    Result<std::unique_ptr<SubscriberFrames>> made =
        SubscriberFrames::Create(**fresh);
    if (made.ok()) {
      views = std::move(made).value();
    } else {
      fresh = made.status();
    }
  }
  GroupList groups;
  if (fresh.ok()) {
    Result<std::vector<std::string>> listed = (*fresh)->Groups();
    if (listed.ok()) {
      groups = CheckGroups(std::move(listed).value());
    } else {
      fresh = listed.status();
    }
  }
  if (!fresh.ok()) {
    keep("the new module did not start from its state: " +
         fresh.status().message());
    return;
  }
  (*fresh)->ContinueFrom(shard.guest->ticks(), shard.guest->fuel_used());
  shard.guest = std::move(fresh).value();
  shard.module = entry.module;
  shard.views = std::move(views);
  NoteCallPorts(shard.id, *shard.guest);
  if (shard.inbox != nullptr) {
    router_->Add(shard.id, shard.inbox, shard.guest->has_messages());
    router_->SetGroups(shard.id, groups.groups);
  }
  if (!groups.dropped.empty())
    HostLog(shard.id, DroppedGroupsLine(shard.id, groups));
  {
    std::lock_guard<std::mutex> lock(shard.mu);
    shard.info.module_version = entry.version;
    shard.info.fuel_used = shard.guest->fuel_used();
    shard.has_transfers = shard.guest->has_transfers();
    shard.has_messages = shard.guest->has_messages();
    // The new instance's views know nobody yet: everyone starts again
    // from a baseline.
    for (const auto& [subscriber, count] : shard.subscribers) {
      shard.restart.insert(subscriber);
    }
  }
  StartInputLog(shard, &**saved, shard.guest->ticks(), /*reload=*/true);
  HostLog(shard.id, "shard \"" + shard.id + "\" reloaded" +
                        (entry.version.empty() ? "" : " to " + entry.version));
  pending->batch->Report(ReloadOutcome{shard.id, true, ""});
}

}  // namespace tessera::shard
