// Activation (docs/compute.md "Activation"): a module is loaded (an
// instance that ran init) while it is enabled AND the policy is enabled AND
// (alwaysOn OR the app has realtime sessions OR its last session ended less
// than idleUnloadMs ago). The housekeeping task polls NotifySink::
// SessionCount every second (and at once after OnSessionsChanged), pokes
// every module task when the app's activity flips, flushes buffered records
// every flush_ms and prunes old ones hourly.
#include <algorithm>

#include "compute/engine_internal.h"

namespace tessera::compute::engine_internal {
namespace {

constexpr int64_t kPollUs = 1'000'000;
constexpr int64_t kPruneUs = 3600LL * 1'000'000;

}  // namespace

bool Core::WantsLoaded(const Snapshot& snap, const Policy& policy) const {
  if (!snap.enabled || !policy.enabled || snap.active_version == 0) {
    return false;
  }
  return snap.always_on || app_active.load();
}

void Core::PollSessions(int64_t now_us) {
  const size_t sessions =
      options.notify != nullptr ? options.notify->SessionCount() : 0;
  const size_t before = last_sessions.exchange(sessions);
  if (sessions == 0 && before > 0) sessions_ended_us.store(now_us);
  const int64_t ended = sessions_ended_us.load();
  const int64_t idle_us = CurrentPolicy().idle_unload_ms * 1000;
  const bool active = sessions > 0 || (ended >= 0 && now_us - ended < idle_us);
  if (app_active.exchange(active) != active) PokeAll();
}

std::optional<int64_t> HouseTask::Run(int64_t now_us) {
  return impl_->RunHouse(now_us);
}

std::optional<int64_t> Core::RunHouse(int64_t now_us) {
  PollSessions(now_us);
  next_poll_us = now_us + kPollUs;
  // While the app is in its idle window, look again when it ends.
  if (last_sessions.load() == 0 && app_active.load()) {
    const int64_t ends =
        sessions_ended_us.load() + CurrentPolicy().idle_unload_ms * 1000;
    next_poll_us = std::min(next_poll_us, std::max(ends, now_us));
  }
  if (now_us >= next_flush_us) {
    (void)Flush();
    next_flush_us = now_us + std::max<int64_t>(options.flush_ms, 1) * 1000;
  }
  if (now_us >= next_prune_us) {
    Prune();
    next_prune_us = now_us + kPruneUs;
  }
  return std::min({next_poll_us, next_flush_us, next_prune_us});
}

}  // namespace tessera::compute::engine_internal
