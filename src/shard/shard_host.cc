#include "shard/shard_host.h"

#include <algorithm>
#include <random>
#include <set>
#include <utility>

#include "shard/hosted_shard.h"
#include "shard/message_router.h"
#include "shard/subscriber_frames.h"
#include "shard/transfers.h"

namespace tessera::shard {
namespace {

std::unique_ptr<guest::WorkerPool> OwnPool(const HostOptions& options,
                                           const Clock* clock) {
  if (options.pool != nullptr) return nullptr;
  guest::WorkerPool::Options pool;
  pool.threads = options.workers;
  pool.clock = clock;
  return std::make_unique<guest::WorkerPool>(pool);
}

// The host's own journal when neither `journal` nor `store` is one.
std::unique_ptr<TransferJournal> OwnJournal(const HostOptions& options,
                                            StateStore* store) {
  if (options.journal != nullptr ||
      dynamic_cast<TransferJournal*>(store) != nullptr) {
    return nullptr;
  }
  return std::make_unique<MemoryStateStore>(options.wall_clock);
}

TransferJournal* PickJournal(const HostOptions& options, StateStore* store,
                             TransferJournal* owned) {
  if (options.journal != nullptr) return options.journal;
  if (auto* journal = dynamic_cast<TransferJournal*>(store)) return journal;
  return owned;
}

}  // namespace

std::optional<int64_t> HostedShard::Run(int64_t now_us) {
  return host->RunShard(*this, now_us);
}

ShardHost::ShardHost(const KindRegistry* kinds, ShardSink* sink,
                     StateStore* store, HostOptions options)
    : kinds_(kinds),
      sink_(sink),
      store_(store),
      options_(std::move(options)),
      clock_(options_.clock ? options_.clock : RealClock::Get()),
      watchdog_(options_.watchdog_clock ? options_.watchdog_clock
                                        : RealClock::Get()),
      owned_pool_(OwnPool(options_, clock_)),
      pool_(owned_pool_ ? owned_pool_.get() : options_.pool),
      wall_clock_(options_.wall_clock ? options_.wall_clock
                                      : RealWallClock::Get()),
      owned_journal_(OwnJournal(options_, store)),
      journal_(PickJournal(options_, store, owned_journal_.get())),
      router_(std::make_unique<MessageRouter>()),
      moved_(std::make_unique<MovedRecords>()),
      log_limiter_(std::make_unique<LineLimiter>()),
      move_id_seed_(std::random_device{}() ^
                    (static_cast<uint64_t>(std::random_device{}()) << 32)) {
  watchdog_.Start();
}

ShardHost::~ShardHost() { Shutdown(); }

size_t ShardHost::worker_count() const { return pool_->thread_count(); }

Status ShardHost::Create(std::string_view kind, std::string_view id,
                         std::string_view params) {
  return Start(kind, id, params, /*restore=*/false);
}

Status ShardHost::Restore(std::string_view kind, std::string_view id,
                          std::string_view params) {
  return Start(kind, id, params, /*restore=*/true);
}

Status ShardHost::Start(std::string_view kind_name, std::string_view id,
                        std::string_view params, bool restore) {
  if (id.empty()) return InvalidArgument("a shard id must not be empty");
  if (fenced_.load(std::memory_order_acquire)) {
    return Status(StatusCode::kUnavailable,
                  "this machine is fenced (it lost the database): it starts "
                  "no shard until it joins the cluster again");
  }
  std::shared_ptr<const KindEntry> kind = kinds_->Find(kind_name);
  if (kind == nullptr) {
    return NotFound("unknown shard kind \"" + std::string(kind_name) + "\"");
  }
  std::optional<std::string> state;
  if (restore) {
    if (store_ == nullptr) {
      return Status(StatusCode::kFailedPrecondition,
                    "this host has no state store to restore from");
    }
    Result<std::optional<std::string>> loaded = store_->Load(id);
    if (!loaded.ok()) return loaded.status();
    if (!loaded->has_value()) {
      return NotFound("no saved state for shard \"" + std::string(id) + "\"");
    }
    state = std::move(**loaded);
  }

  auto shard = std::make_shared<HostedShard>(this, std::string(id), kind);
  shard->run_id = NewRunId();
  {
    std::lock_guard<std::mutex> shard_lock(shard->mu);
    shard->info.run_id = shard->run_id;
    shard->info.module_version = kind->version;
  }
  std::shared_ptr<HostedShard> replaced;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (shut_down_) {
      return Status(StatusCode::kFailedPrecondition, "the host has shut down");
    }
    auto it = shards_.find(id);
    if (it != shards_.end()) {
      std::lock_guard<std::mutex> shard_lock(it->second->mu);
      if (it->second->info.status != ShardStatus::kStopped) {
        return Status(StatusCode::kAlreadyExists,
                      "shard \"" + std::string(id) + "\" already exists");
      }
      replaced = it->second;
    }
    shards_[std::string(id)] = shard;  // replaces a stopped record
  }
  // The stopped record waited only for its retention: off the pool (outside
  // mu_, which its run may be waiting for).
  if (replaced != nullptr) {
    pool_->Remove(*replaced);
    DrainTalk(*replaced, clock_->NowUs(),
              "shard \"" + replaced->id + "\" is gone");
  }

  GuestEnv env;
  MakeGuestEnv(*shard, &env);
  Result<std::unique_ptr<GuestShard>> guest =
      restore ? GuestShard::Restore(kind->module, kind->config, id, params,
                                    *state, env)
              : GuestShard::Create(kind->module, kind->config, id, params, env);
  // A restored shard first takes back the players of its unfinished moves
  // (no input can reach it yet).
  std::string start_state = restore ? *state : std::string();
  uint64_t start_tick = 0;
  if (guest.ok() && restore) {
    CatchUpFromLog(*kind, id, params, env, &*guest, &start_state, &start_tick);
    if (Status recovered = RecoverOwnMoves(**guest, clock_->NowUs());
        !recovered.ok()) {
      guest = recovered;
    }
  }
  // Interest and replication configs are read once, right after start.
  std::unique_ptr<SubscriberFrames> views;
  if (guest.ok()) {
    Result<std::unique_ptr<SubscriberFrames>> made =
        SubscriberFrames::Create(**guest);
    if (made.ok()) {
      views = std::move(made).value();
    } else {
      guest = made.status();
    }
  }
  // Its groups, read after init/restore and after every tick.
  GroupList groups;
  if (guest.ok()) {
    Result<std::vector<std::string>> listed = (*guest)->Groups();
    if (listed.ok()) {
      groups = CheckGroups(std::move(listed).value());
      if (!groups.dropped.empty()) HostLog(id, DroppedGroupsLine(id, groups));
    } else {
      guest = listed.status();
    }
  }
  if (guest.ok()) {
    NoteCallPorts(id, **guest);
    shard->params = std::string(params);
    StartInputLog(*shard, restore ? &start_state : nullptr, start_tick,
                  /*reload=*/false);
  }
  const int64_t now = clock_->NowUs();

  std::lock_guard<std::mutex> lock(mu_);
  auto it = shards_.find(id);
  const bool still_ours = it != shards_.end() && it->second == shard;
  Status result;
  if (!guest.ok() || shut_down_) {
    Status error = guest.ok() ? Status(StatusCode::kFailedPrecondition,
                                       "the host has shut down")
                              : guest.status();
    if (!still_ours) return error;
    if (!restore || shut_down_) {
      shards_.erase(it);
      return error;
    }
    // A refused restore stays listed (stopped, failed, with the module's
    // text) for stopped_retention_us; its saved state is kept.
    shard->done = true;
    shard->stopped_at_us = now;
    {
      std::lock_guard<std::mutex> shard_lock(shard->mu);
      shard->info.status = ShardStatus::kStopped;
      shard->info.stop_reason = StopReason::kFailed;
      shard->info.stop_message = error.message();
      shard->info.last_error = error.message();
    }
    result = error;
  } else {
    shard->guest = std::move(guest).value();
    shard->module = kind->module;
    shard->views = std::move(views);
    shard->params = std::string(params);
    shard->schedule.emplace(now, kind->config.tick_rate);
    shard->last_save_us = now;
    shard->inbox = std::make_shared<Inbox>(options_.max_inbox_messages);
    router_->Add(shard->id, shard->inbox, shard->guest->has_messages());
    router_->SetGroups(shard->id, groups.groups);
    std::lock_guard<std::mutex> shard_lock(shard->mu);
    shard->info.status = ShardStatus::kRunning;
    shard->info.fuel_used = shard->guest->fuel_used();
    shard->info.tick = shard->guest->ticks();  // a caught-up restore's
    shard->idle_since_us = now;
    shard->has_transfers = shard->guest->has_transfers();
    shard->has_messages = shard->guest->has_messages();
  }
  if (!still_ours) {
    // Replaced while starting (only possible once stopped); drop ours.
    if (shard->inbox != nullptr) router_->Remove(shard->id, shard->inbox.get());
    return Status(StatusCode::kAlreadyExists,
                  "shard \"" + std::string(id) + "\" was replaced");
  }

  // Hand over to the least-loaded worker (a given pool may have shut down).
  if (Status added = pool_->Add(shard); !added.ok()) {
    shards_.erase(it);
    if (shard->inbox != nullptr) router_->Remove(shard->id, shard->inbox.get());
    return added;
  }
  return result;
}

void ShardHost::MakeGuestEnv(HostedShard& shard, GuestEnv* env) {
  env->watchdog = &watchdog_;
  env->log_lines = options_.log_lines;
  // The shard owns its guests, so it outlives every call of this.
  env->forward_log = [log = options_.guest_log, keep = options_.log_lines,
                      hosted = &shard](int level, std::string_view text) {
    if (log) log(hosted->id, level, text);
    if (keep == 0) return;
    std::lock_guard<std::mutex> lock(hosted->log_mu);
    if (hosted->log.size() >= keep) hosted->log.pop_front();
    hosted->log.push_back(LogLine{level, std::string(text)});
  };
}

std::shared_ptr<HostedShard> ShardHost::Find(std::string_view id) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = shards_.find(id);
  return it == shards_.end() ? nullptr : it->second;
}

namespace {

ShardInfo Describe(const HostedShard& shard) {
  std::lock_guard<std::mutex> lock(shard.mu);
  ShardInfo info = shard.info;
  info.subscribers = shard.subscribers.size();
  info.queued_inputs = shard.inputs.size();
  info.calls_in_flight = shard.calls_in_flight.size();
  return info;
}

}  // namespace

std::optional<ShardInfo> ShardHost::Get(std::string_view id) const {
  std::shared_ptr<HostedShard> shard = Find(id);
  if (shard == nullptr) return std::nullopt;
  return Describe(*shard);
}

std::vector<ShardInfo> ShardHost::List() const {
  std::vector<std::shared_ptr<HostedShard>> shards;
  {
    std::lock_guard<std::mutex> lock(mu_);
    shards.reserve(shards_.size());
    for (const auto& [id, shard] : shards_) shards.push_back(shard);
  }
  std::vector<ShardInfo> infos;
  infos.reserve(shards.size());
  for (const auto& shard : shards) infos.push_back(Describe(*shard));
  return infos;
}

Status ShardHost::Stop(std::string_view id) {
  std::shared_ptr<HostedShard> shard = Find(id);
  if (shard == nullptr) {
    return NotFound("no shard \"" + std::string(id) + "\"");
  }
  {
    std::lock_guard<std::mutex> lock(shard->mu);
    if (shard->info.status == ShardStatus::kStopped) {
      return Status(StatusCode::kFailedPrecondition,
                    "shard \"" + shard->id + "\" has already stopped (" +
                        StopReasonName(shard->info.stop_reason) + ")");
    }
    shard->stop_requested = true;
  }
  pool_->Poke(shard);  // still starting: seen on its first run
  return Status::Ok();
}

Status ShardHost::SubmitInput(std::string_view id, std::string_view subscriber,
                              uint64_t seq, std::string_view bytes,
                              InputTiming timing) {
  std::shared_ptr<HostedShard> shard = Find(id);
  if (shard == nullptr) {
    return NotFound("no shard \"" + std::string(id) + "\"");
  }
  std::lock_guard<std::mutex> lock(shard->mu);
  if (shard->info.status == ShardStatus::kStopped) {
    return Status(StatusCode::kFailedPrecondition,
                  "shard \"" + shard->id + "\" has stopped");
  }
  if (auto moving = shard->moving.find(subscriber);
      moving != shard->moving.end()) {
    return Status(StatusCode::kFailedPrecondition,
                  "moving to shard " + moving->second);
  }
  const size_t limit = std::max(
      options_.max_queued_inputs,
      options_.max_queued_inputs_per_subscriber * shard->subscribers.size());
  if (shard->inputs.size() >= limit) {
    return Status(StatusCode::kResourceExhausted,
                  "shard \"" + shard->id + "\" has " +
                      std::to_string(shard->inputs.size()) +
                      " inputs queued; try again after its next tick");
  }
  shard->inputs.push_back(PendingInput{
      std::string(subscriber), seq, std::string(bytes), timing, {}});
  return Status::Ok();
}

Status ShardHost::AddSubscriber(std::string_view id,
                                std::string_view subscriber,
                                std::string_view claims_json) {
  std::shared_ptr<HostedShard> shard = Find(id);
  if (shard == nullptr) {
    return NotFound("no shard \"" + std::string(id) + "\"");
  }
  std::lock_guard<std::mutex> lock(shard->mu);
  auto it = shard->subscribers.find(subscriber);
  if (it == shard->subscribers.end()) {
    shard->subscribers.emplace(std::string(subscriber), 1);
  } else {
    ++it->second;
  }
  shard->claims.insert_or_assign(std::string(subscriber),
                                 std::string(claims_json));
  // A new connection starts from a baseline (replication).
  shard->restart.emplace(subscriber);
  return Status::Ok();
}

Status ShardHost::RequestBaseline(std::string_view id,
                                  std::string_view subscriber) {
  std::shared_ptr<HostedShard> shard = Find(id);
  if (shard == nullptr) {
    return NotFound("no shard \"" + std::string(id) + "\"");
  }
  std::lock_guard<std::mutex> lock(shard->mu);
  shard->restart.emplace(subscriber);
  return Status::Ok();
}

Status ShardHost::RemoveSubscriber(std::string_view id,
                                   std::string_view subscriber) {
  std::shared_ptr<HostedShard> shard = Find(id);
  if (shard == nullptr) {
    return NotFound("no shard \"" + std::string(id) + "\"");
  }
  std::lock_guard<std::mutex> lock(shard->mu);
  auto it = shard->subscribers.find(subscriber);
  if (it == shard->subscribers.end()) {
    return NotFound("\"" + std::string(subscriber) +
                    "\" is not subscribed to shard \"" + shard->id + "\"");
  }
  if (--it->second == 0) {
    shard->subscribers.erase(it);
    if (auto c = shard->claims.find(subscriber); c != shard->claims.end()) {
      shard->claims.erase(c);
    }
    if (shard->subscribers.empty()) shard->idle_since_us = clock_->NowUs();
  }
  return Status::Ok();
}

void ShardHost::StepForTest(int64_t now_us) { pool_->RunPass(now_us); }

std::optional<int64_t> ShardHost::RunShard(HostedShard& shard, int64_t now_us) {
  if (!Process(shard, now_us)) return std::nullopt;
  return shard.done ? shard.stopped_at_us + RetentionUs(shard)
                    : shard.schedule->next_deadline_us();
}

bool ShardHost::Process(HostedShard& shard, int64_t now_us) {
  MaybeExpireMoves(now_us);
  if (shard.done) {
    // Answers to its moves still come (the player is gone with it).
    TakeOutcomes(shard, now_us);
    if (now_us - shard.stopped_at_us >= RetentionUs(shard)) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        auto it = shards_.find(shard.id);
        if (it != shards_.end() && it->second.get() == &shard) {
          shards_.erase(it);
        }
      }
      DrainTalk(shard, now_us, "shard \"" + shard.id + "\" is gone");
      return false;
    }
    return true;
  }
  const KindConfig& config = shard.kind->config;
  bool stop = false, idle = false, reload = false, fence = false;
  std::string fence_why;
  {
    std::lock_guard<std::mutex> lock(shard.mu);
    stop = shard.stop_requested;
    fence = shard.fence_requested;
    if (fence) fence_why = shard.info.stop_message;
    reload = shard.reload != nullptr;
    idle = config.idle_shutdown_secs > 0 && shard.subscribers.empty() &&
           now_us - shard.idle_since_us >=
               static_cast<int64_t>(config.idle_shutdown_secs) * 1'000'000;
  }
  if (fence) {
    Finish(shard, StopReason::kFenced, std::move(fence_why), now_us);
  } else if (stop) {
    Finish(shard, StopReason::kStopped, "stopped by request", now_us);
  } else if (idle) {
    Finish(shard, StopReason::kIdle,
           "no subscribers for " + std::to_string(config.idle_shutdown_secs) +
               " s",
           now_us);
  } else {
    if (reload) TakeReload(shard, now_us);
    if (!shard.done) ProcessTalk(shard, now_us);
    if (!shard.done) DeliverCallResults(shard, now_us);
    if (!shard.done && shard.schedule->Due(now_us)) {
      RunTick(shard, now_us);
      if (!shard.done) AfterTick(shard, now_us);
      if (!shard.done) AfterTickCalls(shard, now_us);
      if (!shard.done) MaybeSave(shard, now_us);
    }
  }
  return true;
}

void ShardHost::RunTick(HostedShard& shard, int64_t now_us) {
  std::vector<PendingInput> inputs;
  std::vector<std::string> subscribers;
  std::set<std::string, std::less<>> restart;
  {
    std::lock_guard<std::mutex> lock(shard.mu);
    inputs.assign(std::make_move_iterator(shard.inputs.begin()),
                  std::make_move_iterator(shard.inputs.end()));
    shard.inputs.clear();
    if (shard.views != nullptr) {
      subscribers.reserve(shard.subscribers.size());
      for (const auto& [sub, count] : shard.subscribers) {
        subscribers.push_back(sub);
      }
      restart.swap(shard.restart);
    } else {
      shard.restart.clear();
    }
  }
  const bool overrun = shard.schedule->Take(now_us).overrun;
  const uint64_t tick = shard.guest->ticks() + 1;
  const int64_t wall_start_us = clock_->NowUs();
  // Lag compensation: each input with a view tick gets what its subscriber
  // drew there (ticks() is the newest tick recorded).
  if (shard.views != nullptr) {
    shard.views->PrepareRewinds(inputs, shard.guest->ticks());
  }
  auto frame = std::make_shared<ViewFrame>();
  std::function<void()> views;
  if (shard.views != nullptr) {
    // Runs after tessera_tick: ticks() is the tick just run.
    views = [&shard, &subscribers, &restart, &frame] {
      (void)shard.views->Compute(*shard.guest, subscribers, restart,
                                 shard.guest->ticks(), *frame);
    };
  }
  // Messages queued for the shard go to on_messages inside the tick.
  std::function<void()> before;
  if (shard.inbox != nullptr && shard.inbox->size() > 0) {
    before = [this, &shard] { DeliverInbox(shard); };
  }
  const bool snapshot = shard.views == nullptr || shard.views->wants_snapshot();
  const bool messages = before != nullptr;
  StepResult step = shard.guest->Step(inputs, shard.schedule->period_us(),
                                      views, snapshot, before);
  LogTick(shard, tick, inputs, shard.schedule->period_us(), step, snapshot,
          messages);
  const int64_t wall_us = clock_->NowUs() - wall_start_us;
  int64_t fuel_used = 0;
  {
    std::lock_guard<std::mutex> lock(shard.mu);
    shard.info.tick = shard.guest->ticks();
    fuel_used = shard.guest->fuel_used() - shard.info.fuel_used;
    shard.info.fuel_used = shard.guest->fuel_used();
    shard.info.overruns = shard.schedule->overruns();
    if (shard.views != nullptr) shard.centres = shard.views->centres();
  }
  if (options_.on_tick) {
    options_.on_tick(shard.id,
                     TickEvent{wall_us, step.cpu_us, fuel_used, overrun});
  }
  if (step.outcome.stop != StopReason::kFailed && sink_ != nullptr) {
    if (shard.views != nullptr) {
      frame->tick = shard.guest->ticks();
      frame->inputs = std::move(step.inputs);
      if (shard.views->replication()) {
        frame->snapshot = shard.views->ShareSnapshot(std::move(step.snapshot));
      }
      sink_->OnViews(shard.id, std::move(frame));
    } else {
      sink_->OnFrame(shard.id, shard.guest->ticks(), step.snapshot,
                     step.inputs);
    }
  }
  if (!step.outcome.running()) {
    Finish(shard, step.outcome.stop, step.outcome.message, now_us);
  }
}

int64_t ShardHost::RetentionUs(HostedShard& shard) const {
  if (options_.failed_retention_us < 0) return options_.stopped_retention_us;
  std::lock_guard<std::mutex> lock(shard.mu);
  return shard.info.stop_reason == StopReason::kFailed
             ? options_.failed_retention_us
             : options_.stopped_retention_us;
}

void ShardHost::Finish(HostedShard& shard, StopReason reason,
                       std::string message, int64_t now_us) {
  const bool for_good = StoppedForGood(reason);
  StopCalls(shard, /*deliver=*/for_good, now_us);  // before OnStopped
  EndInputLog(shard, reason);
  const int64_t fuel = shard.guest ? shard.guest->fuel_used() : 0;
  shard.guest.reset();  // release the instance's memory now
  shard.done = true;
  shard.stopped_at_us = now_us;
  {
    std::lock_guard<std::mutex> lock(shard.mu);
    shard.info.status = ShardStatus::kStopped;
    shard.info.stop_reason = reason;
    shard.info.stop_message = message;
    if (reason == StopReason::kFailed) shard.info.last_error = message;
    shard.info.fuel_used = fuel;
    shard.inputs.clear();
  }
  StopTalk(shard, now_us);
  DropReload(shard, "the shard stopped (" +
                        std::string(StopReasonName(reason)) + "): " + message);
  if (store_ != nullptr && for_good) store_->Forget(shard.id);
  if (sink_ != nullptr) sink_->OnStopped(shard.id, reason, message);
}

}  // namespace tessera::shard
