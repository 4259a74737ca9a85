// One served realm instance (internal to RealmHost, host.h): the inbox
// other threads fill and the WorkerPool task that drains it.
//
// Threading: Push and TakeBack under mu_, from any thread; everything else
// on the task's worker (Run), or on the thread that removed the task from
// the pool (Finish).
#ifndef TESSERA_REALM_HOST_INSTANCE_H_
#define TESSERA_REALM_HOST_INSTANCE_H_

#include <cstdint>
#include <future>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/thread_annotations.h"
#include "guest/worker_pool.h"
#include "realm/engine.h"
#include "realm/host.h"

namespace tessera::realm {

struct RealmHost::Item {
  enum class Type {
    kAttach,
    kWrite,
    kDetach,
    kUpdate,
    kExpire,
    kIntent,
    kAlarm
  };
  Type type = Type::kWrite;
  const RealmPeer* peer = nullptr;
  std::weak_ptr<RealmPeer> weak_peer;  // kAttach
  std::string avatar;                  // kAttach
  int64_t epoch = 0, version = 0;      // kAttach
  uint64_t seq = 0;                    // kWrite, kIntent
  Patch patch;                         // kWrite, kUpdate
  std::string intent;                  // kIntent; kAlarm: its name
  Json args;                           // kIntent
  std::shared_ptr<std::promise<Result<int64_t>>> done;  // kUpdate
};

// The idle expiry deadlines of every instance, one WorkerPool task.
class RealmHost::Reaper final : public guest::WorkerPool::Task {
 public:
  explicit Reaper(RealmHost* host) : host_(host) {}
  // True when `due_us` is now the earliest deadline (poke the task).
  bool Arm(const std::string& id, int64_t due_us);
  void Disarm(const std::string& id);
  std::optional<int64_t> Run(int64_t now_us) override;

 private:
  RealmHost* const host_;
  std::mutex mu_;
  std::map<std::string, int64_t> due_ GUARDED_BY(mu_);
};

// Every instance's alarms and their deadlines, one WorkerPool task that
// fires them (RealmHost::FireAlarm) when due. An alarm fired stays held
// (in flight) until its instance settles it: Set again (a retry, or a
// handler that re-arms it) or Cancel.
class RealmHost::AlarmClock final : public guest::WorkerPool::Task {
 public:
  struct Entry {
    int64_t due_us = 0;  // on the pool's clock
    RealmAlarm stored;   // name, due_unix_ms, failures
    bool in_flight = false;
  };
  explicit AlarmClock(RealmHost* host) : host_(host) {}
  // Sets (or replaces) alarm `alarm.name` of `id`; true when it is now
  // the earliest deadline (poke the task).
  bool Set(const std::string& id, int64_t due_us, RealmAlarm alarm);
  void Cancel(const std::string& id, const std::string& name);
  void CancelAll(const std::string& id);
  // Every alarm of `id` still in flight (its instance broke) is due again,
  // not before `due_us`; true when that is now the earliest deadline.
  bool Release(const std::string& id, int64_t due_us);
  std::optional<Entry> Get(const std::string& id,
                           const std::string& name) const;
  std::vector<RealmAlarm> List(const std::string& id) const;
  std::optional<int64_t> Run(int64_t now_us) override;

 private:
  // Whether `due_us` comes before the run the task is armed for (which it
  // then is).
  bool Sooner(int64_t due_us) EXCLUSIVE_LOCKS_REQUIRED(mu_);

  RealmHost* const host_;
  mutable std::mutex mu_;
  // id -> name -> entry.
  std::map<std::string, std::map<std::string, Entry>> alarms_ GUARDED_BY(mu_);
  // When the task runs next (what Run returned); max: not armed yet.
  int64_t next_run_us_ GUARDED_BY(mu_) = std::numeric_limits<int64_t>::max();
};

class RealmHost::Instance final : public guest::WorkerPool::Task {
 public:
  Instance(RealmHost* host, std::shared_ptr<const RealmKindConfig> kind,
           std::string key, std::string id);

  // Queues `item` (moved from only on success); false once unloading.
  // `*poke` says whether the worker must be poked for it: not while a
  // batchMs window holds the next pass back (it runs at the window's end
  // and takes the item then), so that writes arriving in a window do not
  // wake the worker each.
  bool Push(Item& item, bool* poke);

  std::optional<int64_t> Run(int64_t now_us) override;
  // After the task was removed from the pool: drains what is queued,
  // flushes and closes every peer with 1001.
  void Finish();

 private:
  struct Peer {
    std::weak_ptr<RealmPeer> peer;
    std::string avatar;
  };
  struct Answer {  // a write's refusal, sent after the flush
    const RealmPeer* peer;
    uint64_t seq;
    std::string code, message;
  };

  // Opens the document on first use; false (the items' peers told) when
  // it cannot.
  bool EnsureOpen(std::span<Item> items);
  // Answers an item that will never be handled (the instance is gone); a
  // fired alarm is put off (AlarmBackoffMs).
  void Fail(Item& item, int code, const std::string& reason);
  // Stops taking items; false when some are still queued (and `force` is
  // false). With `force` the queued ones are failed with `code`.
  bool Unload(bool force, int code, const std::string& reason);
  void Handle(Item& item);
  void HandleAttach(Item& item);
  void HandleExpire();
  void HandleIntent(Item& item);
  void HandleAlarm(Item& item);
  // Queues `changes` (a hook's) for the store with the commit being made,
  // and for the alarm clock once it is durable. Invalid ones are logged
  // and skipped.
  void QueueAlarmChanges(const std::vector<AlarmChange>& changes);
  // An alarm's retry: `failures` failures so far.
  void PutOffAlarm(const std::string& name, int32_t failures);
  // After a successful flush: hands the queued changes to the clock.
  void SettleAlarms();
  // After an open: the avatars the presence rows name (see
  // RealmHostOptions::rejoin_grace_ms).
  void CollectOrphans();
  // Detaches the orphans still away once the grace has passed.
  void SweepOrphans();
  // Arms the idle expiry when the kind has one and nobody is attached.
  void MaybeArmExpiry();
  void AddAvatar(const std::string& avatar);
  void DropAvatar(const std::string& avatar, std::string_view reason);
  // Commits a hook's patch and queues its alarm changes; false (logged)
  // when the patch does not apply.
  bool RunHook(HookResult result, std::string_view what);
  // Makes the batch durable, then answers and broadcasts it. False when the
  // instance broke (every peer closed).
  bool FlushAndDeliver();
  void Break(const Status& why);
  std::shared_ptr<RealmPeer> Lock(const RealmPeer* peer) const;
  CommitBatch DecodeReplay(const std::vector<LoggedCommit>& commits,
                           Status* error) const;

  RealmHost* const host_;
  const std::shared_ptr<const RealmKindConfig> kind_;
  const std::string key_;
  const std::string id_;  // "<kind>/<key>": the store key

  std::mutex mu_;
  std::vector<Item> inbox_ GUARDED_BY(mu_);
  bool unloading_ GUARDED_BY(mu_) = false;
  // A pass is due then (the end of a batchMs window); 0: none is sure to be.
  int64_t held_until_us_ GUARDED_BY(mu_) = 0;

  // Worker only.
  std::unique_ptr<RealmInstance> realm_;
  bool broken_ = false;
  std::map<const RealmPeer*, Peer> peers_;
  std::unordered_map<std::string, int> avatars_;  // live peers per avatar
  CommitBatch batch_;                             // submitted, not yet durable
  std::vector<Answer> refusals_;
  struct Done {  // an intent's answer, sent after the flush
    const RealmPeer* peer;
    uint64_t seq;
    int64_t version;
  };
  std::vector<Done> intents_done_;
  std::vector<std::pair<std::shared_ptr<std::promise<Result<int64_t>>>,
                        int64_t>>
      updates_;  // resolved after the flush
  // Alarm changes for the clock once the pass's commits are durable.
  struct ClockChange {
    std::string name;
    std::optional<int64_t> due_us;  // none: cancel
    RealmAlarm stored;
  };
  std::vector<ClockChange> clock_changes_;
  std::optional<int64_t> idle_since_us_;
  int64_t now_us_ = 0;  // the running pass's time
  // When the last group commit went out (batchMs holds the next pass back
  // until this + batchMs); none: nothing sent since the open.
  std::optional<int64_t> sent_us_;
  // Every key of every commit sent, for the readers' key plans.
  KeyTable shared_keys_;
  const uint64_t keys_source_ = NewKeySource();
  std::set<std::string> orphans_;
  int64_t orphans_due_us_ = 0;
};

}  // namespace tessera::realm

#endif  // TESSERA_REALM_HOST_INSTANCE_H_
