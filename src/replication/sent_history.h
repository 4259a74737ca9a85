// SentHistory: for lag compensation, what each subscriber of one shard was
// sent over the last `history_ticks` ticks, and the picture its client drew
// at a (fractional) view tick (docs/guest-abi.md, "Lag compensation").
//
// What is kept is what was *sent*: only the entities the subscriber's stream
// held after each tick's payload (interest decides), at the positions it
// held (an update the byte budget deferred leaves the old position). The
// client draws exactly that (clients/ts EntityTimeline): at render tick r it
// takes the last received tick A <= r and the next one B, keeps the entities
// of A, and moves each one that B holds as the same incarnation linearly
// from its A position to its B position by t = clamp((r - A) / (B - A), 0,
// 1); without B it holds A. Positions are q * precision, computed in double
// exactly as the client computes them (tests/fixtures/lagcomp proves it).
//
// Compact: positions live once per tick in a shared world record (the
// mirror's quantised positions); each subscriber's tick record is a bitset
// over that world record's entities plus the few held positions that differ
// from the world's (deferred updates). Records of subscribers that hold the
// same (the shared replication group, or an unchanged in-step tick) are
// shared, not copied.
//
// Owned by the shard's worker: not thread-safe.
#ifndef TESSERA_REPLICATION_SENT_HISTORY_H_
#define TESSERA_REPLICATION_SENT_HISTORY_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "replication/mirror.h"
#include "replication/subscriber_stream.h"

namespace tessera::replication {

// One entity as a subscriber drew it.
struct DrawnEntity {
  uint64_t id = 0;
  double x = 0;
  double y = 0;
  double z = 0;
};

// The picture a subscriber's client drew at a clamped view tick.
struct DrawnPicture {
  double view_tick = 0;               // after clamping
  uint64_t now_tick = 0;              // the newest tick sent to this subscriber
  std::vector<DrawnEntity> entities;  // ascending id
};

class SentHistory {
 public:
  // Keeps `history_ticks` + 1 ticks (the newest and history_ticks before
  // it). history_ticks >= 1.
  explicit SentHistory(uint32_t history_ticks);

  uint32_t history_ticks() const;

  // Records the mirror's state after its Apply for `tick`. Once per tick,
  // before the RecordSent calls of that tick; ticks ascend.
  void RecordWorld(const Mirror& mirror, uint64_t tick);

  // Records what `subscriber` holds after `stream` encoded its payload for
  // `tick` (the one RecordWorld was last called with).
  void RecordSent(std::string_view subscriber, const SubscriberStream& stream,
                  uint64_t tick);
  // The same for every member of a shared group (one stream, one record).
  void RecordShared(std::span<const std::string> subscribers,
                    const SubscriberStream& stream, uint64_t tick);

  // Forgets a subscriber (it left, or its client starts again from a
  // BASELINE and no longer draws what it was sent before).
  void Forget(std::string_view subscriber);

  // The picture `subscriber` drew at `view_tick`, clamped to [newest -
  // history_ticks, newest] (and never before its oldest record), and, when
  // `max_back_ticks` is given (the round trip plus the allowed view delay,
  // in ticks), never before newest - max_back_ticks. nullopt when nothing
  // was recorded for it. A non-finite view tick means newest.
  std::optional<DrawnPicture> Draw(std::string_view subscriber,
                                   double view_tick,
                                   std::optional<double> max_back_ticks) const;

  // Bytes held by the history (world records, subscriber records and their
  // bookkeeping), for the benchmark and the metrics.
  size_t memory_bytes() const;
};

}  // namespace tessera::replication

#endif  // TESSERA_REPLICATION_SENT_HISTORY_H_
