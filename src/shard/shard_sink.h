// What leaves the shard host: frames and stop notices, published to
// observers. The network layer's fan-out, the server's shard directory and
// its onStop notices each implement ShardSink and register with the
// ShardObservers the host reports to; the host knows none of them.
//
// Threading: called on worker threads, concurrently for different shards,
// and in order for any one shard (frames of a shard never overlap and its
// OnStopped comes after its last OnFrame). Implementations must be quick
// (they run inside the tick loop), must not throw, and must not call back
// into the ShardHost synchronously except for the thread-safe read-only
// Get/List and SubmitInput/Stop, which only queue.
#ifndef TESSERA_SHARD_SHARD_SINK_H_
#define TESSERA_SHARD_SHARD_SINK_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "shard/shard_types.h"
#include "shard/talk_types.h"

namespace tessera::shard {

// One subscriber's part of a tick of a shard with interest management or
// replication (see docs/protocol.md, "Interest and replication").
struct SubscriberView {
  std::string subscriber;
  // Interest only: this subscriber's snapshot (subscribers with equal
  // visible sets may share one buffer). Null with replication.
  std::shared_ptr<const std::string> snapshot;
  // Replication: the entities payload for this subscriber's connections.
  std::shared_ptr<const std::string> entities;
  bool baseline = false;  // `entities` is a BASELINE
};

// A tick of a shard with interest management or replication.
struct ViewFrame {
  uint64_t tick = 0;
  bool replication = false;
  // Replication: the shard's snapshot; the very same pointer as the
  // previous tick's when the bytes did not change (connections then send
  // nil). Null without replication.
  std::shared_ptr<const std::string> snapshot;
  std::vector<SubscriberView> views;  // ascending by subscriber
  std::vector<InputResult> inputs;    // as OnFrame's
};

class ShardSink {
 public:
  virtual ~ShardSink() = default;
  // One tick's output: the snapshot bytes in the kind's codec (borrowed for
  // the call) and the results of the inputs applied before that tick, in
  // the order they were submitted, each with the caller's seq. `tick` counts
  // the shard's ticks from 1.
  virtual void OnFrame(std::string_view shard_id, uint64_t tick,
                       std::string_view snapshot,
                       const std::vector<InputResult>& inputs) = 0;
  // A tick of a shard with interest or replication: one view per current
  // subscriber. The default forwards to OnFrame with the shard's snapshot
  // (or nothing), for sinks that do not send per-subscriber frames.
  // The frame is shared, not copied, on its way to the connections.
  virtual void OnViews(std::string_view shard_id,
                       std::shared_ptr<const ViewFrame> frame) {
    OnFrame(shard_id, frame->tick,
            frame->snapshot ? std::string_view(*frame->snapshot)
                            : std::string_view(),
            frame->inputs);
  }
  // The shard stopped; `message` is the failure line (kFailed), the
  // module's reason (kFinished, may be empty) or a short description.
  virtual void OnStopped(std::string_view shard_id, StopReason reason,
                         std::string_view message) = 0;
  // A player left shard `from` for `moved.to` (the target has committed;
  // the network tells the player's connections to `from` and closes them).
  // On the target's worker.
  virtual void OnTransfer(std::string_view from, const MovedTo& moved) {
    (void)from;
    (void)moved;
  }
};

// The observer list a host publishes to: a ShardSink passing every event
// to each registered observer, in the order they were added (so an earlier
// observer has handled a stop before a later one sees it).
//
// Threading: Add is not synchronised with the events; add every observer
// before the host reporting here creates or restores its first shard (the
// composition root fills the list, then starts). The events themselves may
// come from any worker thread, as ShardSink's. Observers are not owned and
// must outlive the host's workers.
class ShardObservers final : public ShardSink {
 public:
  ShardObservers() = default;
  explicit ShardObservers(std::vector<ShardSink*> observers)
      : observers_(std::move(observers)) {}

  // See the class comment; null is ignored.
  void Add(ShardSink* observer) {
    if (observer != nullptr) observers_.push_back(observer);
  }

  void OnFrame(std::string_view shard_id, uint64_t tick,
               std::string_view snapshot,
               const std::vector<InputResult>& inputs) override {
    for (ShardSink* o : observers_)
      o->OnFrame(shard_id, tick, snapshot, inputs);
  }
  void OnViews(std::string_view shard_id,
               std::shared_ptr<const ViewFrame> frame) override {
    for (ShardSink* o : observers_) o->OnViews(shard_id, frame);
  }
  void OnStopped(std::string_view shard_id, StopReason reason,
                 std::string_view message) override {
    for (ShardSink* o : observers_) o->OnStopped(shard_id, reason, message);
  }
  void OnTransfer(std::string_view from, const MovedTo& moved) override {
    for (ShardSink* o : observers_) o->OnTransfer(from, moved);
  }

 private:
  std::vector<ShardSink*> observers_;
};

}  // namespace tessera::shard

#endif  // TESSERA_SHARD_SHARD_SINK_H_
