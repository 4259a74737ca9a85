// Internal to ShardHost: one hosted shard's record, a task on the host's
// guest::WorkerPool (its Run is ShardHost::RunShard).
//
// A HostedShard has two halves:
//   - worker-owned fields (guest, schedule, ...): touched only by the thread
//     that owns the shard: the starting thread until it is added to the pool
//     (through the pool's locks), then its worker (or, once Shutdown has
//     removed it from the pool, the thread calling Shutdown). No lock.
//   - the mailbox under `mu`: inputs, subscribers, the stop request and the
//     published ShardInfo, shared with API threads; and, for shards that
//     talk, the moves queued for it (admin requests, arrivals, outcomes of
//     its own moves) and its moving players, shared with other shards'
//     workers. Its message inbox has a lock of its own.
// Lock order: ShardHost::mu_, then HostedShard::mu, then the pool's locks;
// no lock is held while calling into the guest or the sink.
#ifndef TESSERA_SHARD_HOSTED_SHARD_H_
#define TESSERA_SHARD_HOSTED_SHARD_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/thread_annotations.h"
#include "guest/worker_pool.h"
#include "shard/guest_shard.h"
#include "shard/input_log.h"
#include "shard/kind_registry.h"
#include "shard/message_router.h"
#include "shard/shard_host.h"
#include "shard/subscriber_frames.h"
#include "shard/tick_schedule.h"
#include "shard/transfers.h"

namespace tessera::shard {

// The outcomes of one ShardHost::Reload, collected from its shards' workers;
// the last to answer calls `done`.
class ReloadBatch {
 public:
  ReloadBatch(size_t shards,
              std::function<void(std::vector<ReloadOutcome>)> done)
      : waiting_(shards), done_(std::move(done)) {}
  void Report(ReloadOutcome outcome);

 private:
  std::mutex mu_;
  size_t waiting_ GUARDED_BY(mu_);
  std::vector<ReloadOutcome> outcomes_ GUARDED_BY(mu_);
  std::function<void(std::vector<ReloadOutcome>)> done_ GUARDED_BY(mu_);
};

struct PendingReload {
  std::shared_ptr<const KindEntry> entry;
  std::shared_ptr<ReloadBatch> batch;
};

class HostedShard final : public guest::WorkerPool::Task {
 public:
  HostedShard(ShardHost* host_in, std::string id_in,
              std::shared_ptr<const KindEntry> kind_in)
      : host(host_in), id(std::move(id_in)), kind(std::move(kind_in)) {
    info.id = id;
    info.kind = kind->config.name;
  }

  // ShardHost::RunShard (shard_host.cc).
  std::optional<int64_t> Run(int64_t now_us) override;

  ShardHost* const host;
  const std::string id;
  const std::shared_ptr<const KindEntry> kind;

  // Worker-owned.
  std::unique_ptr<GuestShard> guest;
  // The module `guest` runs (the kind's, or a hot reload's).
  std::shared_ptr<const wasm::CompiledModule> module;
  std::string params;  // as started (a reload restores with them)
  std::unique_ptr<SubscriberFrames> views;  // null: one broadcast snapshot
  std::optional<TickSchedule> schedule;
  int64_t last_save_us = 0;
  // Its input log (null: its kind does not record, or a write failed).
  std::unique_ptr<InputLog> input_log;
  bool done = false;  // stopped; waiting for removal
  int64_t stopped_at_us = 0;

  // Mailbox.
  mutable std::mutex mu;
  std::deque<PendingInput> inputs GUARDED_BY(mu);
  std::map<std::string, int, std::less<>> subscribers GUARDED_BY(mu);
  // Subscribers with a new connection since the last tick (baselines).
  std::set<std::string, std::less<>> restart GUARDED_BY(mu);
  int64_t idle_since_us GUARDED_BY(mu) = 0;
  bool stop_requested GUARDED_BY(mu) = false;
  bool fence_requested GUARDED_BY(mu) = false;  // with stop_requested
  ShardInfo info GUARDED_BY(mu);
  // The subscribers' interest-area centres at the last tick (null: none).
  std::shared_ptr<const AreaCentres> centres GUARDED_BY(mu);

  // Talk. The hooks the module exports (set when it starts running).
  bool has_transfers GUARDED_BY(mu) = false;
  bool has_messages GUARDED_BY(mu) = false;
  // Admin moves from this shard, not started yet.
  std::vector<std::shared_ptr<Move>> move_requests GUARDED_BY(mu);
  // Players coming in, for transfer_in at the next run.
  std::vector<std::shared_ptr<Move>> arrivals GUARDED_BY(mu);
  // This shard's moves, answered by their target.
  std::vector<std::shared_ptr<Move>> outcomes GUARDED_BY(mu);
  // Players out of this shard on their way: subscriber -> target.
  std::map<std::string, std::string, std::less<>> moving GUARDED_BY(mu);
  // The latest connection's ticket claims, per subscriber.
  std::map<std::string, std::string, std::less<>> claims GUARDED_BY(mu);
  bool removed GUARDED_BY(mu) = false;  // forgotten: nothing runs it again
  // A hot reload waiting for the next run (ShardHost::Reload).
  std::shared_ptr<PendingReload> reload GUARDED_BY(mu);

  // Keyed calls (shard_calls_host.cc). This run's id (also info.run_id),
  // set before the shard runs.
  uint64_t run_id = 0;
  // Keys submitted for this run and not yet given to on_call_result ->
  // whether their result has come (queued in call_results).
  std::map<std::string, bool, std::less<>> calls_in_flight GUARDED_BY(mu);
  std::deque<CallResult> call_results GUARDED_BY(mu);
  // Set before the shard runs (then read by any thread).
  std::shared_ptr<Inbox> inbox;

  // The guest's recent log lines, oldest first, across hot reloads (its
  // instances append from the worker, ShardHost::RecentLog reads). A leaf
  // lock: taken while no other is held, and nothing is called under it.
  mutable std::mutex log_mu;
  std::deque<guest::LogLine> log GUARDED_BY(log_mu);
};

}  // namespace tessera::shard

#endif  // TESSERA_SHARD_HOSTED_SHARD_H_
