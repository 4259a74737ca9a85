// Internal to ShardHost: one hosted shard's record and one worker's queues.
//
// A HostedShard has two halves:
//   - worker-owned fields (guest, schedule, ...): touched only by the thread
//     that owns the shard: the starting thread until it is handed to its
//     worker (through Worker::mu), then that worker (or, after Shutdown has
//     joined the workers, the thread calling Shutdown). No lock.
//   - the mailbox under `mu`: inputs, subscribers, the stop request and the
//     published ShardInfo, shared with API threads.
// Lock order: ShardHost::mu_, then HostedShard::mu, then Worker::mu; no
// lock is held while calling into the guest or the sink.
#ifndef TESSERA_SHARD_HOSTED_SHARD_H_
#define TESSERA_SHARD_HOSTED_SHARD_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <queue>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "shard/guest_shard.h"
#include "shard/kind_registry.h"
#include "shard/shard_host.h"
#include "shard/subscriber_frames.h"
#include "common/thread_annotations.h"
#include "shard/tick_schedule.h"

namespace tessera::shard {

class Worker;

class HostedShard {
 public:
  HostedShard(std::string id_in, std::shared_ptr<const KindEntry> kind_in)
      : id(std::move(id_in)), kind(std::move(kind_in)) {
    info.id = id;
    info.kind = kind->config.name;
  }

  const std::string id;
  const std::shared_ptr<const KindEntry> kind;
  // Set once when handed to a worker; read by any thread to poke it.
  std::atomic<Worker*> worker{nullptr};

  // Worker-owned.
  std::unique_ptr<GuestShard> guest;
  std::unique_ptr<SubscriberFrames> views;  // null: one broadcast snapshot
  std::optional<TickSchedule> schedule;
  int64_t last_save_us = 0;
  bool done = false;     // stopped; waiting for removal
  bool removed = false;  // gone from the host
  int64_t stopped_at_us = 0;
  uint64_t event_gen = 0;  // events with another generation are stale

  // Mailbox.
  mutable std::mutex mu;
  std::deque<PendingInput> inputs GUARDED_BY(mu);
  std::map<std::string, int, std::less<>> subscribers GUARDED_BY(mu);
  // Subscribers with a new connection since the last tick (baselines).
  std::set<std::string, std::less<>> restart GUARDED_BY(mu);
  int64_t idle_since_us GUARDED_BY(mu) = 0;
  bool stop_requested GUARDED_BY(mu) = false;
  ShardInfo info GUARDED_BY(mu);
};

class Worker {
 public:
  struct Event {
    int64_t at_us;
    uint64_t gen;
    std::shared_ptr<HostedShard> shard;
    bool operator>(const Event& o) const { return at_us > o.at_us; }
  };

  // Shared with other threads.
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::shared_ptr<HostedShard>> incoming GUARDED_BY(mu);
  std::vector<std::shared_ptr<HostedShard>> poked GUARDED_BY(mu);
  bool wake GUARDED_BY(mu) = false;
  std::atomic<size_t> load{0};  // shards owned, for placement

  // Worker-thread only.
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> events;
  std::thread thread;

  void Schedule(const std::shared_ptr<HostedShard>& shard, int64_t at_us) {
    events.push(Event{at_us, ++shard->event_gen, shard});
  }
};

}  // namespace tessera::shard

#endif  // TESSERA_SHARD_HOSTED_SHARD_H_
