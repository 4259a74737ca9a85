// ShardHost: the lifecycle of many shards, each a task on a
// guest::WorkerPool (the host's own, or one shared with other hosts).
//
//   Create/Restore --> running --(tick, inputs, frames)--> stopped(reason)
//
// Each shard belongs to exactly one worker for its whole life (the pool's
// invariant), so its GuestShard is touched by one thread at a time and a
// tick takes no locks. Other threads talk to a shard through its small
// locked mailbox: queued inputs, subscribers, a stop request, and the
// published ShardInfo; a stop request pokes the shard's worker.
//
// Scheduling: a shard ticks on absolute deadlines at its kind's tick_rate
// (TickSchedule: no drift; a tick a whole period late counts an overrun and
// skips ahead). Before each tick its queued inputs are applied in submission
// order; the tick's snapshot and input results go to ShardSink::OnFrame. A
// module that finishes stops with kFinished, any trap/panic/limit with
// kFailed and its failure line; healthy shards keep ticking meanwhile. A
// shard with no subscribers for idle_shutdown_secs stops with kIdle. A
// stopped shard stays listed (with its reason and message) for
// stopped_retention_us (failed_retention_us if it failed), then is
// forgotten.
//
// Saving: for modules that export tessera_save, every save_interval_us and at
// Shutdown() the state goes to the StateStore; a shard that stops for any
// reason has its saved state forgotten (it will not be resumed).
//
// Time: the host reads `clock` for creation times, idle and saves, and the
// pool's workers for deadlines. With workers = 0 no thread runs and
// StepForTest(now) does a worker's pass on the calling thread: with a
// FakeClock as `clock` tests drive it deterministically without sleeping.
// The watchdog always runs on `watchdog_clock` (real time by default).
//
// Shards that talk (docs/shards-that-talk.md): a player moves from one
// shard to another through its module's transfer hooks, step by step in a
// TransferJournal (transfers.cc: Transfer, the moves a module requests,
// Restore's and RecoverTransfers' recovery); shards send each other
// messages through bounded inboxes (shard_messages.cc, message_router.h).
//
// The app's functions and data (shard_calls.h, shard_calls_host.cc): after
// every tick a module's keyed calls go to HostOptions::calls (each key once
// per shard run) and its entity writes to HostOptions::writes; results come
// back through DeliverCallResult to on_call_result before the next inputs.
#ifndef TESSERA_SHARD_SHARD_HOST_H_
#define TESSERA_SHARD_SHARD_HOST_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "common/thread_annotations.h"
#include "guest/sandbox.h"
#include "guest/watchdog.h"
#include "guest/worker_pool.h"
#include "shard/kind_registry.h"
#include "shard/shard_calls.h"
#include "shard/shard_sink.h"
#include "shard/shard_types.h"
#include "shard/state_store.h"
#include "shard/talk_types.h"
#include "shard/transfer_journal.h"
#include "tessera/abi.h"

namespace tessera::guest {
struct SandboxEnv;
}

namespace tessera::shard {

class GuestShard;
struct PendingInput;
struct StepResult;
class HostedShard;
class MessageRouter;
class MovedRecords;
class LineLimiter;
struct Move;
struct ShardMessage;

// What List/Get report about one shard (a copy).
struct ShardInfo {
  std::string id;
  std::string kind;
  ShardStatus status = ShardStatus::kStarting;
  uint64_t tick = 0;  // ticks run so far
  size_t subscribers = 0;
  StopReason stop_reason = StopReason::kNone;
  std::string stop_message;  // see ShardSink::OnStopped
  std::string last_error;    // the failure line, or the last save error
  int64_t fuel_used = 0;
  uint64_t overruns = 0;
  size_t queued_inputs = 0;
  // This run of the shard (Create or Restore), unique within the process
  // and across restarts (a random 64-bit value, never 0): keyed call
  // results go only to the run that asked.
  uint64_t run_id = 0;
  size_t calls_in_flight = 0;
  // The build of the module it runs (KindEntry::version; a hot reload
  // changes it).
  std::string module_version;
};

// What a hot reload did to one shard (ShardHost::Reload).
struct ReloadOutcome {
  std::string shard_id;
  bool reloaded = false;  // it runs the new module now
  std::string message;    // when not: why it keeps its old module
};

// One tick that ran, for metrics (HostOptions::on_tick).
struct TickEvent {
  int64_t wall_us = 0;    // inputs, tick, snapshot and frames
  int64_t cpu_us = 0;     // the thread's CPU time of the same
  int64_t fuel_used = 0;  // since the previous tick (saves in between too)
  bool overrun = false;   // it started a whole period late (skipped ahead)
};

struct HostOptions {
  // The pool the shards run on; not owned, must outlive the host, its clock
  // on the same timeline as `clock`. Null: the host builds its own with
  // `workers` threads on `clock`.
  guest::WorkerPool* pool = nullptr;
  // Worker threads of the host's own pool: -1 = one per core, 0 = none
  // (StepForTest drives).
  int workers = -1;
  const Clock* clock = nullptr;           // null: RealClock
  const Clock* watchdog_clock = nullptr;  // null: RealClock
  int64_t save_interval_us = 5'000'000;   // 0: save only at Shutdown
  int64_t stopped_retention_us = 5'000'000;
  // How long a shard stopped with kFailed stays listed (its failure line
  // readable through Get/List); negative: stopped_retention_us.
  int64_t failed_retention_us = -1;
  // Inputs a shard queues between two ticks: the larger of
  // max_queued_inputs and max_queued_inputs_per_subscriber times its
  // subscribers (each connection is rate-limited on its own; this only
  // bounds memory). Beyond it SubmitInput fails.
  size_t max_queued_inputs = 1024;
  size_t max_queued_inputs_per_subscriber = 16;
  size_t log_lines = 64;  // recent guest log lines kept per shard
  // Receives every guest log line (on the calling worker thread).
  std::function<void(std::string_view shard_id, int level,
                     std::string_view text)>
      guest_log;
  // Called after every tick (a failing one too) on the worker thread with
  // the tick's wall time, thread CPU time (inputs + tick + snapshot) and
  // the fuel the shard used since the previous tick (this tick's calls and
  // any save in between); for metrics. Must be quick and thread-safe.
  std::function<void(std::string_view shard_id, const TickEvent& tick)> on_tick;

  // Shards that talk.
  // Where moves are journaled. Null: `store` if it is a TransferJournal,
  // else an in-memory journal of the host's own. Not owned.
  TransferJournal* journal = nullptr;
  const WallClock* wall_clock = nullptr;  // null: RealWallClock; moved_unix_ms
  // Host events as readable lines (refused messages, failed moves,
  // recovery); any thread, must be quick and thread-safe.
  std::function<void(std::string_view shard_id, std::string_view line)>
      host_log;
  // One finished move: its outcome and the time from the request to the
  // target's commit (or to the refusal). Any worker thread.
  std::function<void(const TransferResult& result, int64_t duration_us)>
      on_transfer;
  // The app's functions and data (shard_calls.h): where keyed calls and
  // entity writes go. Null: calls() and writes() are not taken (a module
  // exporting them gets one log line at start). Not owned; must outlive
  // the host.
  CallGateway* calls = nullptr;
  EntityWriteSink* writes = nullptr;
  // Message limits per shard (benches raise these).
  size_t max_inbox_messages = abi::kMaxInboxMessages;
  size_t max_messages_sent_per_tick = abi::kMaxMessagesSentPerTick;
  size_t max_messages_applied_per_tick = abi::kMaxMessagesAppliedPerTick;

  // Input logs (docs/record-replay.md): each shard of a kind with
  // record_inputs logs to <input_log_dir>/<InputLogDirName(id)>/ (its saves
  // every save_interval_us, with or without a store). Empty: no logs.
  std::string input_log_dir;
};

class ShardHost {
 public:
  // `kinds`, `sink` and `store` are not owned and must outlive the host;
  // `sink` and `store` may be null (frames dropped / nothing saved). The
  // sink is where the host publishes its events: normally a ShardObservers
  // list (shard_sink.h) filled before the first Create/Restore. Starts
  // the watchdog, and the worker threads unless `options.pool` is given.
  ShardHost(const KindRegistry* kinds, ShardSink* sink, StateStore* store,
            HostOptions options = {});
  // Shutdown().
  ~ShardHost();
  ShardHost(const ShardHost&) = delete;
  ShardHost& operator=(const ShardHost&) = delete;

  // Creates and starts a shard: instantiates the kind's module and runs its
  // init on the calling thread, then adds it to the pool (the least-loaded
  // worker).
  // Errors: kNotFound (unknown kind), kAlreadyExists (a shard with this id
  // is starting or running; a stopped one is replaced), kFailedPrecondition
  // after Shutdown, and GuestShard::Create's errors (the module's refusal
  // text verbatim, or the failure line). Any thread.
  Status Create(std::string_view kind, std::string_view id,
                std::string_view params);

  // As Create, but resumes from the StateStore's saved state. A module that
  // refuses the state leaves the shard listed as stopped/failed with the
  // module's text (and the saved state kept); the same error is returned.
  // Errors: as Create, kNotFound when there is no saved state.
  Status Restore(std::string_view kind, std::string_view id,
                 std::string_view params);

  // Any thread.
  std::optional<ShardInfo> Get(std::string_view id) const;
  std::vector<ShardInfo> List() const;
  // The shard's most recent guest log lines (at most
  // HostOptions::log_lines), oldest first, kept across hot reloads and
  // while a stopped shard is still listed; nullopt when it is not listed.
  // Any thread.
  std::optional<std::vector<guest::LogLine>> RecentLog(
      std::string_view id) const;

  // Asks the shard to stop (reason kStopped). Takes effect on its worker
  // before its next tick; OnStopped follows. Errors: kNotFound, or
  // kFailedPrecondition if it has already stopped. Any thread.
  Status Stop(std::string_view id);

  // Queues an input, applied before the shard's next tick; its result is in
  // that tick's frame. Errors: kNotFound, kFailedPrecondition (stopped),
  // kResourceExhausted (queue full). Any thread.
  Status SubmitInput(std::string_view id, std::string_view subscriber,
                     uint64_t seq, std::string_view bytes,
                     InputTiming timing = {});

  // Subscriber bookkeeping for idle shutdown; the same subscriber may be
  // added more than once (several connections) and counts until removed as
  // often. `claims_json` (a JSON object: the ticket's claims) is kept per
  // subscriber (the latest connection wins) until its last connection goes,
  // and given as the auth claims of moves its module starts. Errors:
  // kNotFound. Any thread.
  Status AddSubscriber(std::string_view id, std::string_view subscriber,
                       std::string_view claims_json = "{}");
  Status RemoveSubscriber(std::string_view id, std::string_view subscriber);
  // With replication: the subscriber's next payload is a BASELINE (a
  // connection that fell behind and dropped deltas starts again). Errors:
  // kNotFound. Any thread.
  Status RequestBaseline(std::string_view id, std::string_view subscriber);

  // ---- What compute modules' notifications ask (shard_queries.cc) -------

  // The running shards of kind `kind`, ascending. Any thread.
  std::vector<std::string> ShardsOfKind(std::string_view kind) const;
  // The running shards in message group `group` (their last tessera_groups),
  // ascending. Any thread.
  std::vector<std::string> GroupMembers(std::string_view group) const;
  // The subscribers of the running shard `id` whose interest-area centre
  // (from tessera_interest_areas at its last tick) is within `radius` of
  // (x, y), ascending; empty when its module gives no interest areas.
  // Errors: kNotFound (no such shard running). Any thread; a lock and a
  // walk of the last tick's centres (kept per tick as one shared buffer).
  Result<std::vector<std::string>> SubscribersWithin(std::string_view id,
                                                     float x, float y,
                                                     float radius) const;

  // ---- Hot reload (shard_reload.cc) -------------------------------------

  // Moves every running shard of kind `kind` to `entry`'s module. Each, on
  // its worker before its next tick, saves its state with the module it
  // runs (tessera_save), starts the new module from that state
  // (tessera_restore) and goes on with the same subscribers, inputs, tick
  // count, schedule, moves and calls in flight; with interest or
  // replication every subscriber's next frame is a baseline. A shard whose
  // module saves nothing (no tessera_save, or it has no state), whose new
  // module refuses the state, or whose save or start fails keeps running
  // its old module, and its outcome says why (a save that fails the module
  // stops the shard, as at any save). `done` runs once, with an outcome per
  // shard, after the last one answered: on a worker thread, or at once on
  // this one when no shard of the kind runs. Replace the kind in the
  // registry first, so that shards started meanwhile get the new module.
  // Any thread.
  void Reload(std::string_view kind, std::shared_ptr<const KindEntry> entry,
              std::function<void(std::vector<ReloadOutcome>)> done);

  // ---- Shards that talk -------------------------------------------------

  struct TransferSpec {
    std::string from, subscriber, to, claims_json = "{}";
  };
  // Moves `subscriber` from shard `from` to shard `to` (queued in the
  // source's mailbox, the source poked; see transfers.cc for the flow).
  // `done` runs exactly once: on a worker thread, or on the calling thread
  // for errors found at once (kInvalid: same shard, empty ids, claims not a
  // JSON object; kNotFound: the source is not running or the host has shut
  // down). Any thread.
  void Transfer(TransferSpec spec, std::function<void(TransferResult)> done);

  // A message from the server (from = "") to a target, queued like a
  // shard's. Errors: kInvalidArgument (topic or data over the limits; also
  // counted and logged as a refusal), kFailedPrecondition after Shutdown.
  struct PublishResult {
    size_t delivered = 0;  // inboxes it was queued in
    size_t refused = 0;    // targets that refused it (counted and logged)
  };
  Result<PublishResult> Publish(const MessageTarget& to, std::string topic,
                                std::string data);

  // ---- The app's functions (shard_calls.h) ------------------------------

  // The result of a keyed call of run `run_id` of shard `id`, queued for
  // its on_call_result before its next inputs (the shard's worker is
  // poked). False (dropped) when that run is no longer running or the key
  // is not in flight for it. Any thread.
  bool DeliverCallResult(std::string_view id, uint64_t run_id,
                         CallResult result);

  // Monotonic totals of keyed calls and entity writes, for metrics and
  // tests. Refusals are also host_log lines (rate-limited per shard).
  struct CallCounters {
    uint64_t calls_submitted = 0;    // given to CallGateway::Submit
    uint64_t calls_refused = 0;      // elements of calls() the host refused
    uint64_t results_delivered = 0;  // given to on_call_result
    uint64_t results_dropped = 0;    // DeliverCallResult returned false
    uint64_t writes_passed = 0;      // given to EntityWriteSink::Write
    uint64_t writes_refused = 0;     // elements of writes() refused
  };
  CallCounters call_counters() const;

  // The player that left `from` within kMovedRecordSecs, or nullopt. Any
  // thread.
  std::optional<MovedTo> FindMove(std::string_view from,
                                  std::string_view subscriber) const;

  // Boot, once, after the shards have been restored: journal rows kIn
  // younger than kMovedRecordSecs become FindMove records (older ones are
  // deleted); kBack rows are deleted; kOut rows whose source is not running
  // are deleted with a log line (their source was not restored). (Restore
  // itself takes back the players of its own kOut rows.) Errors: the
  // journal's kIo.
  Status RecoverTransfers();

  // Monotonic totals, for metrics.
  struct TalkCounters {
    uint64_t messages_sent = 0;         // taken from outboxes, or published
    uint64_t messages_delivered = 0;    // given to a target's on_messages
    uint64_t messages_refused[7] = {};  // by MessageRefusal, per target
    uint64_t transfers[8] = {};         // by TransferError; kNone = moved
  };
  TalkCounters talk_counters() const;

  // With a thread-less pool (workers = 0): runs everything due at `now_us`
  // (ticks, stop requests, idle stops, saves, removals) on the calling
  // thread. One thread at a time; not after Shutdown.
  void StepForTest(int64_t now_us);

  // Stops the workers (of the host's own pool; a given pool keeps running
  // and the shards are removed from it), then saves every running shard
  // whose module has tessera_save and releases the instances. Shards are
  // not stopped (no OnStopped): they resume from the save elsewhere.
  // Idempotent; later calls of the mutators fail with kFailedPrecondition.
  // Says what became of the running shards (a second call: all zero).
  struct ShutdownReport {
    size_t running = 0;  // shards running when it began
    size_t saved = 0;    // of them, saved to the store
    size_t unsaved = 0;  // without tessera_save, no store, or a failed save
  };
  ShutdownReport Shutdown();

  // This machine may no longer run its shards (the cluster's self-fence,
  // cluster/membership.h): from now on nothing is saved, and every shard
  // stops before its next tick with kFenced: its calls are dropped
  // unanswered, its input log kept, its saved state and directory record
  // left as they are (no Forget), so the shard can start again from its
  // last save here or elsewhere. Only flags and pokes: no I/O, no wait.
  // `why` is the stop message. Any thread.
  void Fence(std::string_view why);
  // Saves are allowed again (the machine joined under a new epoch); the
  // fenced shards are restored by the caller. Any thread.
  void Unfence();
  // Whether a shard the fence asked to stop has not stopped yet (its worker
  // takes the request before its next tick). Any thread.
  bool FencePending() const;
  bool fenced() const { return fenced_.load(std::memory_order_acquire); }

  // The pool's threads (0 in manual mode).
  size_t worker_count() const;

 private:
  friend class HostedShard;  // its Run is RunShard

  Status Start(std::string_view kind_name, std::string_view id,
               std::string_view params, bool restore);
  std::shared_ptr<HostedShard> Find(std::string_view id) const;
  // The shard's task: its due work, then its next deadline (the next tick,
  // or the end of its retention once stopped); nullopt once it has been
  // removed. On the shard's worker (or StepForTest's thread).
  std::optional<int64_t> RunShard(HostedShard& shard, int64_t now_us);
  // One shard's due work; returns false once it has been removed.
  bool Process(HostedShard& shard, int64_t now_us);
  void RunTick(HostedShard& shard, int64_t now_us);
  void MaybeSave(HostedShard& shard, int64_t now_us);
  // The environment of `shard`'s guest instances (they log to its `log`).
  void MakeGuestEnv(HostedShard& shard, guest::SandboxEnv* env);
  // A reload waiting for the shard, if any: its swap (shard_reload.cc).
  void TakeReload(HostedShard& shard, int64_t now_us);
  // Answers a reload still waiting for a shard that stopped or was shut
  // down: it keeps nothing (`why`).
  void DropReload(HostedShard& shard, const std::string& why);
  // How long the stopped `shard` stays listed.
  int64_t RetentionUs(HostedShard& shard) const;
  void Finish(HostedShard& shard, StopReason reason, std::string message,
              int64_t now_us);

  // ---- Talk (transfers.cc, shard_messages.cc) ----
  // Restore: takes back the players of the shard's kOut journal rows
  // (before it is added to the pool). Errors: the journal's.
  Status RecoverOwnMoves(GuestShard& guest, int64_t now_us);
  // Runs one journal step, `write`, with the state to write with it: the
  // module's save when it has one and the host has a store, else nullopt.
  // Errors: Save's (`write` is not run), or `write`'s.
  Status WithJournalState(
      GuestShard& guest,
      const std::function<Status(std::optional<std::string_view>)>& write);
  std::string NewMoveId();
  // The talk side of one run of a running shard, before its tick: outcomes
  // of its moves, arrivals, admin moves.
  void ProcessTalk(HostedShard& shard, int64_t now_us);
  // After a tick: the module's transfer requests, outbox and groups.
  void AfterTick(HostedShard& shard, int64_t now_us);
  void StartMoves(HostedShard& source, std::vector<std::shared_ptr<Move>> moves,
                  int64_t now_us);
  void TakeArrivals(HostedShard& target, int64_t now_us);
  void TakeOutcomes(HostedShard& source, int64_t now_us);
  // The source takes back its players (returning) for moves that failed.
  void ReturnMoves(HostedShard& source,
                   std::vector<std::shared_ptr<Move>> moves, int64_t now_us);
  // Hands a move's outcome back to its source (or ends it here when the
  // source is gone).
  void PostOutcome(std::shared_ptr<Move> move, int64_t now_us);
  void EndMove(Move& move, int64_t now_us);
  // A shard that stopped (Finish): its inbox, arrivals and queued moves.
  void StopTalk(HostedShard& shard, int64_t now_us);
  // A shard forgotten (retention over, or Shutdown): ends what is left.
  void DrainTalk(HostedShard& shard, int64_t now_us, std::string why);
  void MaybeExpireMoves(int64_t now_us);
  // Messages.
  void DeliverInbox(HostedShard& shard);
  void RouteOutgoing(std::string_view sender, const MessageTarget& to,
                     std::shared_ptr<const ShardMessage> message,
                     size_t* delivered, size_t* refused);
  void RefuseMessage(std::string_view sender, std::string_view target,
                     std::string_view topic, MessageRefusal reason,
                     uint64_t count = 1);
  void SendOutbox(HostedShard& shard);
  void UpdateGroups(HostedShard& shard);
  void HostLog(std::string_view shard_id, std::string_view line) const;

  // ---- Input logs (shard_input_log.cc) ----
  // A new run of the shard (Create, Restore with its `state`, or a reload
  // with its state at `tick`): opens its log when its kind records, and
  // starts a run in it (shard.params set).
  void StartInputLog(HostedShard& shard, const std::string* state,
                     uint64_t tick, bool reload);
  // One tick that ran (tick = its number) and what it was given.
  void LogTick(HostedShard& shard, uint64_t tick,
               std::vector<PendingInput>& inputs, int64_t dt_us,
               const StepResult& step, bool snapshot_taken, bool messages);
  // A periodic save of a recording shard: logged, then (when the module
  // restores) a checkpoint: the shard goes on from a fresh instance
  // restored from that very state, as a replay from the save will, so that
  // the replay is bit for bit the run (fuel included, which depends on the
  // guest's heap).
  void LogSave(HostedShard& shard, const std::string& state, bool checkpoint);
  // Restore of a recording shard from `*state`: the ticks its log holds
  // after that save (their inputs were acknowledged) run again in a replay
  // of them, whose instance then replaces `*guest` as a fresh one restored
  // from its state after the last of them (*state, at *tick): a checkpoint
  // the new run of the log begins with. Anything amiss (another module, a
  // save the log does not hold) leaves all three as they were, with a line.
  void CatchUpFromLog(const KindEntry& kind, std::string_view id,
                      std::string_view params, const guest::SandboxEnv& env,
                      std::unique_ptr<GuestShard>* guest, std::string* state,
                      uint64_t* tick);
  // The shard stopped: a failed or finished shard's log is kept (synced),
  // any other's removed.
  void EndInputLog(HostedShard& shard, StopReason reason);
  // A write that failed: one line, and the shard logs no more.
  void DropInputLog(HostedShard& shard, const Status& error);

  // ---- Keyed calls and entity writes (shard_calls_host.cc) ----
  // A new run id: random, never 0, never repeated by this host.
  uint64_t NewRunId();
  // At start: a line when the module has hooks this host has no port for.
  void NoteCallPorts(std::string_view shard_id, const GuestShard& guest);
  // Before a tick (or on a poke): the queued results to on_call_result.
  void DeliverCallResults(HostedShard& shard, int64_t now_us);
  // After a tick: calls() submitted (keys in flight skipped), writes()
  // passed to the sink.
  void AfterTickCalls(HostedShard& shard, int64_t now_us);
  void TakeWrites(HostedShard& shard, int64_t now_us);
  // The shard stops (Finish, Shutdown), its instance still there unless it
  // failed: its calls in flight forgotten (with `deliver`, the results
  // already queued go to on_call_result first), its last writes taken,
  // then EntityWriteSink::ShardStopped.
  void StopCalls(HostedShard& shard, bool deliver, int64_t now_us);
  // One host_log line for the refusals of one calls() or writes() output
  // (`what`), at most one a second per shard and `what`.
  void CallRefusals(const char* what, std::string_view shard_id,
                    const std::vector<std::string>& lines, int64_t now_us);

  const KindRegistry* const kinds_;
  ShardSink* const sink_;
  StateStore* const store_;
  const HostOptions options_;
  const Clock* const clock_;
  guest::Watchdog watchdog_;
  // Declared after the watchdog: the pool's last references to shards (and
  // their instances) go before it.
  std::unique_ptr<guest::WorkerPool> owned_pool_;  // null: options_.pool
  guest::WorkerPool* const pool_;
  const WallClock* const wall_clock_;
  std::unique_ptr<TransferJournal> owned_journal_;  // null: not ours
  TransferJournal* const journal_;
  std::unique_ptr<MessageRouter> router_;
  std::unique_ptr<MovedRecords> moved_;
  std::unique_ptr<LineLimiter> log_limiter_;
  std::atomic<uint64_t> move_counter_{0};
  uint64_t move_id_seed_ = 0;
  std::atomic<int64_t> next_expiry_us_{0};
  std::atomic<uint64_t> messages_sent_{0}, messages_delivered_{0};
  std::array<std::atomic<uint64_t>, 7> messages_refused_{};
  std::array<std::atomic<uint64_t>, 8> transfers_{};
  std::atomic<uint64_t> run_counter_{0};
  std::atomic<uint64_t> calls_submitted_{0}, calls_refused_{0},
      results_delivered_{0}, results_dropped_{0}, writes_passed_{0},
      writes_refused_{0};

  mutable std::mutex mu_;  // before any HostedShard::mu
  std::map<std::string, std::shared_ptr<HostedShard>, std::less<>> shards_
      GUARDED_BY(mu_);
  bool shut_down_ GUARDED_BY(mu_) = false;
  std::atomic<bool> fenced_{false};
};

}  // namespace tessera::shard

#endif  // TESSERA_SHARD_SHARD_HOST_H_
