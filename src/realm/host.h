// RealmHost: serves realm instances to connections (docs/realms.md
// "Serving"). Each instance (kind, key) is a RealmInstance owned by one
// WorkerPool task, so everything of one instance happens on one thread in
// the order it was asked: attaches, detaches and writes queue in the
// instance's inbox and the task drains it. Writes drained together are one
// group commit: each is rule-checked and applied, then one Flush makes
// them all durable, and only then are they answered and broadcast.
//
//   Attach(peer, avatar, epoch, version) -> peer->OnAttached (hydrate or
//       resume with the missing commits), then every later commit through
//       peer->OnCommits, in version order, until Detach
//   Write(peer, seq, patch) -> peer->OnCommits carries it (the writer finds
//       its own seq there) or peer->OnRejected
//   a store failure -> every peer of the instance gets OnClosed, and the
//       instance is dropped (the next Attach reopens it from the store)
//
// Presence: the instance counts live peers per avatar. The first peer of
// an avatar attaches it, the last one to detach detaches it
// (RealmHooks); a peer re-attaching (a second HELLO) with the same avatar
// swaps in place and fires nothing; with another avatar the old one is
// detached first (reason "identity-changed").
//
// An instance with no peers for Options::unload_after_ms is flushed and
// unloaded (an ephemeral one is gone; a durable one reloads from the
// store on the next Attach).
//
// Idle expiry (a durable kind's expireAfterIdleMs): the deadline arms when
// an instance's last peer detaches (and, through ArmExpiry, at boot for
// every stored instance) and disarms on any attach. When it fires, the
// instance is loaded if needed and RealmHooks::OnExpire may veto for one
// more period; otherwise its snapshots and log are dropped from the store
// and the next Attach boots the initial state on epoch 1.
//
// Alarms (docs/realms.md "Alarms"): hooks set and cancel named deadlines
// per instance (HookResult::alarms), stored with the commit that set them.
// One clock task holds every instance's deadlines, loaded or not: a due
// alarm opens its instance if needed and RealmHooks::OnAlarm runs on the
// instance's worker. Its row is deleted with the handler's commit, so a
// crash in between runs it again (at least once); a failing handler is
// retried after AlarmBackoffMs and never stops the instance or its other
// alarms. An ephemeral instance's alarms live in memory with its document.
//
// Threading: every public method from any thread; RealmPeer and RealmHooks
// are called on the instance's worker and must not block (a network
// session posts to its own strand).
#ifndef TESSERA_REALM_HOST_H_
#define TESSERA_REALM_HOST_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/clock.h"
#include "common/metrics.h"
#include "common/status.h"
#include "common/thread_annotations.h"
#include "guest/worker_pool.h"
#include "realm/kind.h"
#include "realm/patch.h"
#include "realm/realm_store.h"

namespace tessera::realm {

class RealmPeer;

// One durable commit as every reader is sent it: the whole patch, which
// each peer slices for its own avatar (SliceOp), and who wrote it.
struct BroadcastCommit {
  int64_t version = 0;
  Patch patch;
  const RealmPeer* writer = nullptr;  // null: the server or a replay
  uint64_t seq = 0;                   // the writer's seq
  // The patch's keys in the instance's shared key table, for the readers'
  // encoders (none for a replay).
  KeyPlan keys;
};
using CommitBatch = std::vector<BroadcastCommit>;

struct AttachAnswer {
  bool hydrate = false;
  int64_t epoch = 0;
  int64_t head = 0;    // the instance's version the answer brings it to
  int64_t from = 0;    // resume: the client's version
  Json state;          // hydrate: the document sliced for the avatar
  CommitBatch replay;  // resume: the commits after `from`, up to `head`
  std::string avatar;
  std::shared_ptr<const RealmKindConfig> kind;  // rules and limits
};

// Close codes a host asks for (docs/protocol.md "Realms", "Closing").
inline constexpr int kCloseRealmUnavailable = 4014;
inline constexpr int kCloseGoingAway = 1001;

class RealmPeer {
 public:
  virtual ~RealmPeer() = default;
  // The answer to Attach (or to a re-Attach).
  virtual void OnAttached(AttachAnswer answer) = 0;
  // Durable commits after the last ones this peer was given, in order.
  virtual void OnCommits(std::shared_ptr<const CommitBatch> batch) = 0;
  // This peer's write or intent `seq` was refused; nothing of it applied.
  // `code`: "permission_denied", "invalid_patch" (writes), "refused" (the
  // module said no), "failed" (the module failed) or "unavailable".
  virtual void OnRejected(uint64_t seq, std::string code,
                          std::string message) = 0;
  // This peer's intent `seq` is done: durable as commit `version` (after
  // OnCommits carried it), or made no change at `version`.
  virtual void OnIntentDone(uint64_t seq, int64_t version) = 0;
  // The host dropped the peer (it is detached): close the connection.
  virtual void OnClosed(int code, std::string reason) = 0;
};

// An alarm change a hook asks for (docs/realms.md "Alarms"): alarm `name`
// of the instance due `in_ms` from now (set, or moved if it was set), or
// cancelled (no in_ms).
struct AlarmChange {
  std::string name;
  std::optional<int64_t> in_ms;
  bool operator==(const AlarmChange&) const = default;
};

// What a hook makes: a patch committed as the server (empty: none) and
// alarm changes, which take effect with that commit (both or neither).
struct HookResult {
  HookResult() = default;
  HookResult(Patch p) : patch(std::move(p)) {}  // NOLINT: a bare patch
  Patch patch;
  std::vector<AlarmChange> alarms;
};

// The longest an alarm may be set ahead: a year.
inline constexpr int64_t kMaxAlarmDelayMs = 366LL * 24 * 3600 * 1000;
// The retry delay after the `failures`-th failure of an alarm's handler
// in a row: 2 s, 4 s, 8 s ... capped at 5 minutes.
int64_t AlarmBackoffMs(int32_t failures);

// What presence changes do (a realm module's hooks; the lobby's presence
// rows). Called on the instance's worker after the commit that caused
// them; the returned patch (empty: none) is committed as the server.
class RealmHooks {
 public:
  virtual ~RealmHooks() = default;
  // Nothing by default.
  virtual HookResult OnAvatarAttach(const RealmKindConfig& /*kind*/,
                                    std::string_view /*key*/,
                                    std::string_view /*avatar*/,
                                    const Json& /*state*/) {
    return {};
  }
  // `reason`: "left", "identity-changed" or "gone". Nothing by default.
  virtual HookResult OnAvatarDetach(const RealmKindConfig& /*kind*/,
                                    std::string_view /*key*/,
                                    std::string_view /*avatar*/,
                                    std::string_view /*reason*/,
                                    const Json& /*state*/) {
    return {};
  }
  // The first document of a new instance of `kind` (a module's
  // initial_state); nullopt: the kind's initialState. An error refuses to
  // open the instance.
  virtual Result<std::optional<Json>> InitialState(
      const RealmKindConfig& /*kind*/, std::string_view /*key*/) {
    return std::optional<Json>();
  }
  // Intent `intent` of `avatar` with `args` (a module's apply): the patch
  // it makes, committed as the server (empty: no change). Errors:
  // kFailedPrecondition with the module's reason for a refusal; others
  // when the module failed.
  virtual Result<HookResult> ApplyIntent(const RealmKindConfig& kind,
                                         std::string_view /*key*/,
                                         std::string_view /*avatar*/,
                                         std::string_view /*intent*/,
                                         const Json& /*args*/,
                                         const Json& /*state*/) {
    return Status(
        StatusCode::kFailedPrecondition,
        "realm kind \"" + kind.name + "\" has no module, and intents need one");
  }
  // migrate "module": the new document for `old_state` (the stored head,
  // written under the schema with hash `old_hash`). An error refuses to
  // open the instance and changes nothing.
  virtual Result<Json> Migrate(const RealmKindConfig& kind,
                               std::string_view /*key*/,
                               const Json& /*old_state*/,
                               std::string_view /*old_hash*/) {
    return Status(StatusCode::kFailedPrecondition,
                  "realm kind \"" + kind.name + "\" has no module migrate");
  }
  // The instance's idle deadline passed (expireAfterIdleMs): true vetoes
  // the expiry for one more period, false lets the host drop its storage.
  virtual bool OnExpire(const RealmKindConfig& /*kind*/,
                        std::string_view /*key*/, const Json& /*state*/) {
    return false;
  }
  // Alarm `name` of the instance is due; its handler failed `failures`
  // times in a row before. The answer is committed as the server and the
  // alarm is done (unless the answer sets it again). Any error, or a patch
  // that does not apply, retries it after AlarmBackoffMs; kNotFound (no
  // handler at all) drops it.
  virtual Result<HookResult> OnAlarm(const RealmKindConfig& kind,
                                     std::string_view /*key*/,
                                     std::string_view /*name*/,
                                     int32_t /*failures*/,
                                     const Json& /*state*/) {
    return Status(StatusCode::kNotFound,
                  "realm kind \"" + kind.name + "\" has no alarm handler");
  }
};

struct RealmHostOptions {
  // Runs the instances' tasks. Not owned; must outlive the host.
  guest::WorkerPool* pool = nullptr;
  // Durable instances' store (shared by all). Not owned; null: only
  // ephemeral kinds can be served.
  RealmStore* store = nullptr;
  RealmHooks* hooks = nullptr;  // not owned; null: none
  int64_t unload_after_ms = 30'000;
  // A durable instance with a declared presence opens with the avatars its
  // presence rows name from before (a restart): those that have not
  // attached again this long after the open are detached (reason "gone").
  int64_t rejoin_grace_ms = 10'000;
  // Where the host counts commits, refusals, flush times and live
  // instances (tessera_realm_*). Not owned; null: not counted.
  Metrics* metrics = nullptr;
  // Where hook failures are told (hook patches that do not apply). Null:
  // nowhere.
  std::function<void(const std::string&)> log;
  // Dates the alarms for the store (they outlive the process). Not owned;
  // null: the real one.
  const WallClock* wall_clock = nullptr;
  // The first state of an instance nobody has stored. Null: the kind's
  // initial_state.
  std::function<Json(const RealmKindConfig&, std::string_view key)>
      initial_state;
};

class RealmHost {
 public:
  RealmHost(std::vector<RealmKindConfig> kinds, RealmHostOptions options);
  ~RealmHost();  // Shutdown()
  RealmHost(const RealmHost&) = delete;
  RealmHost& operator=(const RealmHost&) = delete;

  // The kind named `name`, or null.
  std::shared_ptr<const RealmKindConfig> FindKind(std::string_view name) const;

  // Whether `key` may name an instance: 1..128 bytes of [A-Za-z0-9_.:-].
  static bool ValidKey(std::string_view key);

  // Attaches `peer` (held weakly: a peer that is gone is skipped) to
  // instance (kind, key) as `avatar`, holding (epoch, version); a peer
  // already attached re-attaches (see the file comment).
  // The answer comes as OnAttached, or OnClosed when the instance cannot
  // open. Errors at once: kNotFound (no such kind), kInvalidArgument (bad
  // key), kUnavailable (shutting down).
  Status Attach(std::string_view kind, std::string_view key,
                const std::shared_ptr<RealmPeer>& peer, std::string avatar,
                int64_t epoch, int64_t version);
  // Queues a write of an attached peer (admitted by its ingress limits
  // already). Dropped when the peer is not attached.
  void Write(std::string_view kind, std::string_view key, const RealmPeer* peer,
             uint64_t seq, Patch patch);
  // Queues intent `intent` with `args` of an attached peer: the kind's
  // hooks turn it into a patch, committed as the server (the write rules
  // do not apply: the module decides), broadcast like any commit and
  // answered with OnIntentDone or OnRejected.
  void Intent(std::string_view kind, std::string_view key,
              const RealmPeer* peer, uint64_t seq, std::string intent,
              Json args);
  // Detaches `peer` (queued like the rest: calls already under way may
  // still reach it, so a peer ignores what comes after its Detach).
  void Detach(std::string_view kind, std::string_view key,
              const RealmPeer* peer);

  // The server's update path: commits `patch` to instance (kind, key)
  // (opening it if needed), unchecked by the write rules, and broadcasts
  // it. Returns the durable version. Blocks until done; never call it
  // from an instance's worker.
  Result<int64_t> Update(std::string_view kind, std::string_view key,
                         Patch patch);

  // Arms the idle expiry of stored instance (kind, key) at
  // now + expireAfterIdleMs, unless an attach disarms it first. A no-op
  // for kinds without expireAfterIdleMs. Any thread.
  void ArmExpiry(std::string_view kind, std::string_view key);

  // Arms every alarm the store holds (a boot: alarms outlive the
  // process; one due while the server was down fires at once). Any
  // thread, once, before serving.
  Status LoadAlarms();
  // The alarms of instance (kind, key) and when they are due (unix ms),
  // sorted by name: what an operator sees.
  std::vector<RealmAlarm> Alarms(std::string_view kind,
                                 std::string_view key) const;

  // Flushes and unloads every instance, closing their peers with 1001.
  void Shutdown();

  size_t instance_count() const;

 private:
  class Instance;
  class Reaper;
  class AlarmClock;
  struct Item;
  // Under the reaper's lock; `due_us` on the pool's clock.
  void ArmExpiryAt(const std::string& id, int64_t due_us);
  void DisarmExpiry(const std::string& id);
  // The reaper's deadline passed for "<kind>/<key>".
  void Expire(const std::string& id);
  // The alarm clock's deadline passed for alarm `name` of "<kind>/<key>".
  void FireAlarm(const std::string& id, const std::string& name);
  // AlarmClock::Release, poking the clock when needed.
  void ReleaseAlarms(const std::string& id, int64_t due_us);
  const WallClock* wall_clock() const;
  // Queues `item` on instance (kind, key), creating it if needed.
  Status Push(std::string_view kind, std::string_view key, Item item);
  void Forget(const std::string& id, const Instance* instance);

  const RealmHostOptions options_;
  std::unordered_map<std::string, std::shared_ptr<const RealmKindConfig>>
      kinds_;
  mutable std::mutex mu_;
  bool shut_down_ GUARDED_BY(mu_) = false;
  // "<kind>/<key>" -> its instance.
  std::unordered_map<std::string, std::shared_ptr<Instance>> instances_
      GUARDED_BY(mu_);
  std::shared_ptr<Reaper> reaper_;  // idle expiry deadlines
  std::shared_ptr<AlarmClock> alarm_clock_;
  // Null without RealmHostOptions::metrics.
  Counter* commits_ = nullptr;
  Counter* refusals_ = nullptr;
  Histogram* flush_seconds_ = nullptr;
  Gauge* instance_gauge_ = nullptr;
  Gauge* instances_gauge() const { return instance_gauge_; }
};

}  // namespace tessera::realm

#endif  // TESSERA_REALM_HOST_H_
