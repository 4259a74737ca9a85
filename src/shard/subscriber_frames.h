// SubscriberFrames: what each subscriber of one shard receives per tick when
// the module turns on interest management and/or replication (docs/guest-abi.md
// and docs/protocol.md, "Interest and replication").
//
//   after tessera_tick:  tessera_replicated  -> replication::Mirror
//                        tessera_entities (or the mirror's ground plane)
//                        tessera_interest_areas (one call, all subscribers)
//                        interest grid + tessera_filter (one call per tick)
//   then per subscriber: replication: SubscriberStream::Encode -> entities
//                        (once for all in the shared group, see below)
//                        interest only: tessera_snapshot_visible, once per
//                        group of equal visible sets when shared
//
// Replication without interest: every subscriber sees every entity, so all
// clients that hold the same state need the same payload. A subscriber
// starts with its own stream (its BASELINE, and any catching up); once a
// tick leaves it holding exactly the mirror's state (nothing deferred), it
// joins the shared group, whose one stream is encoded once per tick and
// whose payload buffer every member's view points to. When a budget binds
// and the module gives interest areas (nearest first), payloads differ per
// subscriber and nobody shares.
//
// Lag compensation (docs/guest-abi.md, "Lag compensation"; needs
// replication): a replication::SentHistory records the mirror after each
// Apply and what every subscriber's stream (or the shared group's) held
// after each Encode; a subscriber that leaves or starts again from a
// BASELINE is forgotten. Before a tick, PrepareRewinds turns each queued
// input's view tick into the Rewind of what that subscriber drew.
//
// Every guest output is checked; a layout the host cannot read fails the
// shard with an "abi: ..." line. Owned by the shard's worker: not
// thread-safe.
#ifndef TESSERA_SHARD_SUBSCRIBER_FRAMES_H_
#define TESSERA_SHARD_SUBSCRIBER_FRAMES_H_

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "common/status.h"
#include "interest/interest.h"
#include "replication/mirror.h"
#include "replication/sent_history.h"
#include "replication/subscriber_stream.h"
#include "shard/guest_shard.h"
#include "shard/lag_compensation.h"
#include "shard/shard_sink.h"
#include "shard/view_abi.h"

namespace tessera::shard {

// A subscriber's interest-area centre at a tick (spatial notifications).
struct AreaCentre {
  std::string subscriber;
  float x = 0, y = 0;
};
// One tick's centres, ascending by subscriber; shared read-only.
using AreaCentres = std::vector<AreaCentre>;

class SubscriberFrames {
 public:
  // Reads the module's interest, replication and lag compensation configs
  // (right after init or restore). nullptr when it turns on neither
  // interest nor replication. Errors: the failure line when a config call
  // failed the shard, its output is unreadable, or lag compensation is on
  // without replication or tessera_apply_input_at.
  static Result<std::unique_ptr<SubscriberFrames>> Create(GuestShard& guest);

  bool replication() const { return mirror_.has_value(); }
  bool interest() const { return manager_.has_value(); }
  bool lag_compensation() const { return lag_.has_value(); }
  const std::optional<LagCompensationConfig>& lag_config() const {
    return lag_;
  }
  // With lag compensation: what each subscriber was sent; null without.
  const replication::SentHistory* history() const {
    return history_ ? &*history_ : nullptr;
  }
  // Whether the tick needs the shard's (broadcast) snapshot: with
  // replication, or with interest but no tessera_snapshot_visible.
  bool wants_snapshot() const { return wants_snapshot_; }

  // The tick's work after tessera_tick (and tessera_snapshot): fills
  // frame.views (one per subscriber, in the given order: ascending) and
  // frame.replication. `restart` lists subscribers with a new connection:
  // their next payload is a BASELINE. Errors: the failure line (the shard
  // has failed).
  Status Compute(GuestShard& guest, std::span<const std::string> subscribers,
                 const std::set<std::string, std::less<>>& restart,
                 uint64_t tick, ViewFrame& frame);

  // With lag compensation, before the tick after `tick` (the newest one
  // recorded): sets `rewind` of every input with a view tick to the encoded
  // Rewind of what its subscriber drew there, clamped by the history and by
  // the connection's round trip (MaxBackTicks). A subscriber with no
  // history yet gets view_tick = now_tick = `tick` and no entities. Without
  // lag compensation it leaves every input as it is.
  void PrepareRewinds(std::span<PendingInput> inputs, uint64_t tick) const;

  // The interest-area centres of the last Compute (the subscribers the
  // module gave an area); null when the module gives no interest areas.
  // The buffer is never changed: each tick makes a new one.
  std::shared_ptr<const AreaCentres> centres() const { return centres_; }

  // With replication: the snapshot as a shared buffer, the previous one
  // when the bytes are equal (connections then send nil). Without: a new
  // buffer (or null for an empty string).
  std::shared_ptr<const std::string> ShareSnapshot(std::string bytes);

 private:
  SubscriberFrames() = default;

  // Keeps this tick's area centres for centres().
  void KeepCentres(GuestShard& guest, std::span<const std::string> subscribers);
  Status ComputeInterest(GuestShard& guest,
                         std::span<const std::string> subscribers);
  Status EncodeEntities(std::span<const std::string> subscribers,
                        const std::set<std::string, std::less<>>& restart,
                        uint64_t tick, ViewFrame& frame);
  // The shared group's payload for this tick (null without members), after
  // dropping members who left or reconnect.
  std::shared_ptr<const std::string> EncodeShared(
      std::span<const std::string> subscribers,
      const std::set<std::string, std::less<>>& restart, uint64_t tick);
  // After a subscriber's own stream encoded this tick: moves it into the shared
  // group when it holds what the group holds.
  using Streams =
      std::map<std::string, replication::SubscriberStream, std::less<>>;
  void MaybeJoinShared(Streams::iterator it);
  Status SnapshotsVisible(GuestShard& guest,
                          std::span<const std::string> subscribers,
                          ViewFrame& frame);
  // Fails the guest with "abi: <status message>".
  static Status Abi(GuestShard& guest, const Status& status);

  std::optional<interest::InterestManager> manager_;
  bool shared_snapshots_ = false;
  std::optional<replication::Mirror> mirror_;
  bool wants_snapshot_ = true;
  Streams streams_;  // subscribers outside the shared group
  // The shared group (see above): on when replication may share.
  bool share_streams_ = false;
  std::optional<replication::SubscriberStream> shared_;
  std::set<std::string, std::less<>> shared_members_;
  std::shared_ptr<const std::string> last_snapshot_;
  std::optional<LagCompensationConfig> lag_;
  std::optional<replication::SentHistory> history_;
  uint32_t tick_rate_ = 0;
  std::vector<std::string> shared_list_;  // shared_members_ for the history
  // Scratch, reused between ticks.
  std::vector<GuestEntity> guest_entities_;
  std::vector<interest::EntityPos> entities_;
  std::vector<std::optional<GuestArea>> areas_;
  std::shared_ptr<const AreaCentres> centres_;
  std::vector<interest::Subscriber> subscribers_;
  std::vector<interest::View> views_;
  std::string payload_;
};

}  // namespace tessera::shard

#endif  // TESSERA_SHARD_SUBSCRIBER_FRAMES_H_
