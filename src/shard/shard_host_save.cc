// ShardHost's saves (shard_host.h): the periodic save after a tick, the
// save of every running shard at Shutdown, and the fence that stops them
// (Fence, Unfence, FencePending). The rest of the host is in shard_host.cc.
#include <memory>
#include <string>
#include <vector>

#include "shard/hosted_shard.h"
#include "shard/message_router.h"
#include "shard/shard_host.h"

namespace tessera::shard {

void ShardHost::MaybeSave(HostedShard& shard, int64_t now_us) {
  if ((store_ == nullptr && shard.input_log == nullptr) ||
      options_.save_interval_us <= 0 || !shard.guest->has_save() ||
      fenced_.load(std::memory_order_acquire) ||
      now_us - shard.last_save_us < options_.save_interval_us) {
    return;
  }
  shard.last_save_us = now_us;
  Result<std::optional<std::string>> saved = shard.guest->Save();
  Status error;
  if (!saved.ok()) {
    if (shard.guest->failed()) {
      Finish(shard, StopReason::kFailed, shard.guest->failure(), now_us);
      return;
    }
    error = saved.status();
  } else if (saved->has_value()) {
    // The log first: a crash between the two leaves the store's older
    // save, which the log still holds, to catch up from.
    LogSave(shard, **saved, /*checkpoint=*/true);
    if (store_ != nullptr) error = store_->Save(shard.id, **saved);
  }
  if (!error.ok()) {
    std::lock_guard<std::mutex> lock(shard.mu);
    shard.info.last_error = "save: " + error.message();
  }
}

ShardHost::ShutdownReport ShardHost::Shutdown() {
  ShutdownReport report;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (shut_down_) return report;
    shut_down_ = true;
  }
  if (owned_pool_ != nullptr) owned_pool_->Shutdown();
  std::vector<std::shared_ptr<HostedShard>> shards;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [id, shard] : shards_) shards.push_back(shard);
  }
  // Off the pool (waiting for a run in progress): no worker touches these
  // shards again, this thread now owns every one.
  for (const auto& shard : shards) pool_->Remove(*shard);
  // Moves on their way end here (their journal rows finish them at the next
  // boot: Restore and RecoverTransfers).
  const int64_t now = clock_->NowUs();
  for (const auto& shard : shards) {
    if (shard->inbox != nullptr) {
      router_->Remove(shard->id, shard->inbox.get());
    }
    DrainTalk(*shard, now, "the host shut down");
    DropReload(*shard, "the host shut down");
  }
  for (const auto& shard : shards) {
    if (shard->done || shard->guest == nullptr) continue;
    ++report.running;
    bool kept = false;
    if ((store_ != nullptr || shard->input_log != nullptr) &&
        shard->guest->has_save() && !fenced_.load(std::memory_order_acquire)) {
      Result<std::optional<std::string>> saved = shard->guest->Save();
      if (saved.ok() && saved->has_value())
        LogSave(*shard, **saved, /*checkpoint=*/false);
      kept = store_ != nullptr && saved.ok() && saved->has_value() &&
             store_->Save(shard->id, **saved).ok();
    }
    shard->input_log.reset();
    ++(kept ? report.saved : report.unsaved);
    StopCalls(*shard, /*deliver=*/false, now);
    // A given pool may drop its last references after this host is gone.
    shard->guest.reset();
  }
  watchdog_.Stop();
  return report;
}

void ShardHost::Fence(std::string_view why) {
  fenced_.store(true, std::memory_order_release);
  std::vector<std::shared_ptr<HostedShard>> shards;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (shut_down_) return;  // Shutdown owns the shards; it saves nothing now
    for (const auto& [id, shard] : shards_) shards.push_back(shard);
  }
  for (const auto& shard : shards) {
    {
      std::lock_guard<std::mutex> lock(shard->mu);
      if (shard->info.status == ShardStatus::kStopped) continue;
      shard->stop_requested = true;
      shard->fence_requested = true;
      shard->info.stop_message = std::string(why);
    }
    pool_->Poke(shard);
  }
}

bool ShardHost::FencePending() const {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [id, shard] : shards_) {
    std::lock_guard<std::mutex> shard_lock(shard->mu);
    if (shard->fence_requested && shard->info.status != ShardStatus::kStopped)
      return true;
  }
  return false;
}

void ShardHost::Unfence() { fenced_.store(false, std::memory_order_release); }

}  // namespace tessera::shard
