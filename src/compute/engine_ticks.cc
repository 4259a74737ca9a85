// The module task: one WorkerPool task per module, on absolute deadlines.
// Each pass (a due deadline, or a poke after a change) brings the instance
// in line with activation (load: a fresh instance runs init; unload: the
// instance goes, no run), delivers due events, and takes the tick when it is
// due. The pool never runs a task concurrently with itself, so ticks never
// overlap; a deadline is consumed when taken, so none fires twice; a tick
// taken a period or more late skips ahead (TickDeadlines) instead of
// bursting; dt_ms is the time since the previous tick (or since init).
#include <algorithm>
#include <cmath>
#include <limits>

#include "compute/engine_internal.h"

namespace tessera::compute::engine_internal {
namespace {

constexpr int64_t kIdle = std::numeric_limits<int64_t>::max() / 4;
// A module without ticks whose load failed tries again after this long.
constexpr int64_t kLoadRetryUs = 1'000'000;

}  // namespace

void TickDeadlines::Reset(int64_t start_us, double hz) {
  start_us_ = start_us;
  hz_ = hz > 0 ? hz : 0;
  next_ = 1;
}

int64_t TickDeadlines::DeadlineOf(uint64_t n) const {
  if (hz_ <= 0) return kIdle;
  return start_us_ +
         static_cast<int64_t>(std::llround(static_cast<double>(n) * 1e6 / hz_));
}

uint64_t TickDeadlines::Take(int64_t now_us) {
  uint64_t skipped = 0;
  // A whole period late: the next deadline has passed too.
  if (DeadlineOf(next_ + 1) <= now_us) {
    const double periods =
        std::floor(static_cast<double>(now_us - start_us_) * hz_ / 1e6);
    uint64_t latest = static_cast<uint64_t>(std::max(1.0, periods));
    while (latest > next_ && DeadlineOf(latest) > now_us) --latest;
    while (DeadlineOf(latest + 1) <= now_us) ++latest;
    skipped = latest - next_;
    next_ = latest;
  }
  ++next_;
  return skipped;
}

std::optional<int64_t> ModuleTask::Run(int64_t now_us) {
  std::shared_ptr<ModuleSlot> slot = slot_.lock();
  if (slot == nullptr) return std::nullopt;
  return impl_->RunModuleTask(*slot, now_us);
}

std::optional<int64_t> Core::RunModuleTask(ModuleSlot& slot, int64_t now_us) {
  const Policy policy = CurrentPolicy();
  Snapshot snap;
  {
    std::lock_guard<std::mutex> lock(slot.mu);
    if (slot.deleted) return std::nullopt;
    snap = TakeSnapshot(slot);
  }
  // A trigger above a since lowered maxTickHz runs at the policy's rate.
  snap.tick_hz = std::min(snap.tick_hz, policy.max_tick_hz);
  const bool want = WantsLoaded(snap, policy);
  int64_t next = kIdle;
  // Each entry call of a module importing data runs in its own
  // transaction, taken before the run lock: the lock is dropped to take it
  // and what was decided under it is checked again.
  const bool data = NeedsTxn(slot, policy);
  auto begin = [&](DataScope* scope, std::unique_lock<std::mutex>& run,
                   const char* what) {
    if (!data) return true;
    run.unlock();
    Status begun = BeginScope(scope, kTaskTxnWaitMs);
    run.lock();
    if (!begun.ok()) {
      WarnModule(slot.id, slot.name,
                 std::string(what) + " skipped: " + begun.message(),
                 TriggerSource::kTick, "");
    }
    return begun.ok();
  };

  {
    std::unique_lock<std::mutex> run(slot.run_mu);
    InstanceState& inst = slot.loaded;
    if (inst.instance != nullptr &&
        (!want || inst.version_no != snap.active_version ||
         inst.memory_mb != policy.max_memory_mb)) {
      // Unload (no run row); a new version or memory cap loads afresh.
      inst.instance.reset();
      slot.is_loaded.store(false);
    }
    if (inst.instance != nullptr && inst.instance->dead()) {
      inst.instance.reset();
      slot.is_loaded.store(false);
    }
    DataScope scope;
    if (want && inst.instance == nullptr && now_us >= slot.retry_load_us) {
      bool loaded = false;
      bool tried = false;
      if (begin(&scope, run, "init")) {
        if (inst.instance != nullptr) {
          loaded = inst.alive();  // an invoke loaded it meanwhile
        } else {
          tried = true;
          RunResult failed;
          loaded = Load(slot, inst, /*lease_holder=*/true, "", 0, policy,
                        &failed, data ? &scope : nullptr);
        }
      }
      if (loaded) {
        slot.is_loaded.store(true);
        if (tried) {
          slot.ticks.Reset(inst.loaded_at_us, snap.tick_hz);
          slot.last_tick_us = inst.loaded_at_us;
        }
        slot.retry_load_us = 0;
      } else {
        slot.is_loaded.store(false);
        // Try again at the next tick deadline, or a second later.
        int64_t retry = now_us + kLoadRetryUs;
        if (snap.tick_hz > 0) {
          retry = now_us + static_cast<int64_t>(1e6 / snap.tick_hz);
        }
        slot.retry_load_us = retry;
        next = std::min(next, retry);
      }
    } else if (want && inst.instance == nullptr) {
      next = std::min(next, slot.retry_load_us);
    }
  }

  if (std::optional<int64_t> due = DeliverEvents(slot, now_us, policy, data)) {
    next = std::min(next, *due);
  }

  std::unique_lock<std::mutex> run(slot.run_mu);
  InstanceState& inst = slot.loaded;
  if (inst.alive()) {
    if (slot.ticks.hz() != snap.tick_hz) {
      // A changed or new tick trigger starts its cadence now.
      slot.ticks.Reset(now_us, snap.tick_hz);
      slot.last_tick_us = now_us;
    }
    DataScope scope;
    if (slot.ticks.Due(now_us)) {
      const bool begun = begin(&scope, run, "tick");
      if (!begun) {
        slot.ticks.Take(now_us);  // this tick is skipped, not retried
      } else if (inst.alive() && slot.ticks.Due(now_us)) {
        slot.ticks.Take(now_us);
        const int64_t dt_us = now_us - slot.last_tick_us;
        slot.last_tick_us = now_us;
        RunRequest tick;
        tick.source = TriggerSource::kTick;
        tick.entry = "tick";
        tick.dt_ms = static_cast<uint32_t>(std::clamp<int64_t>(
            dt_us / 1000, 0, std::numeric_limits<uint32_t>::max()));
        (void)Run(slot, inst, std::move(tick), policy, data ? &scope : nullptr);
        if (!inst.alive()) {
          slot.is_loaded.store(false);
          // A fresh instance runs init at the next tick deadline.
          slot.retry_load_us = slot.ticks.next_deadline_us();
        }
      }
    }
    if (slot.ticks.active())
      next = std::min(next, slot.ticks.next_deadline_us());
  } else if (want && snap.tick_hz > 0 && inst.instance == nullptr) {
    next = std::min(next, std::max(slot.retry_load_us, now_us));
  }
  return next;
}

}  // namespace tessera::compute::engine_internal
