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
// In detail: consecutive world records share the mirror's ids and
// incarnations while they do not change. A subscriber's record is reused
// as-is for the next tick when its stream spawned, despawned and deferred
// nothing (it holds the same entities, at the mirror's positions), and is
// otherwise built from the previous one and the Encode's spawns, despawns
// and deferrals (SubscriberStream::spawned() ...), in O(changes). A
// deferred position refers to the older world record that has it (the
// newest before the held entity's waiting_since, checked) when that one is
// at most history_ticks back, and is copied otherwise; so at most
// 2 * history_ticks + 1 world records are alive. A BASELINE, or a tick not
// after the subscriber's last one, starts its history again (like the
// client's timeline); RecordWorld with a tick not after the last one
// forgets everything (the shard went back).
//
// Owned by the shard's worker: not thread-safe.
#ifndef TESSERA_REPLICATION_SENT_HISTORY_H_
#define TESSERA_REPLICATION_SENT_HISTORY_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
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
  // `tick` (the one RecordWorld was last called with; another tick is
  // ignored: the stream cannot have encoded that mirror), before the
  // stream encodes again and before the mirror changes.
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

 private:
  // The mirror's ids and incarnations at a tick, shared by the consecutive
  // world records whose mirrors held the same entities.
  struct Membership {
    uint64_t serial = 0;
    std::vector<uint64_t> ids;  // ascending
    std::vector<uint64_t> incarnations;
  };
  struct WorldRecord {
    uint64_t tick = 0;
    double precision = 0;
    // Kept while the newest tick is <= keep_until: its own tick +
    // history_ticks, or that of a subscriber record whose held positions
    // refer to it.
    uint64_t keep_until = 0;
    std::shared_ptr<const Membership> members;
    std::vector<int64_t> q;  // 3 per entity, parallel to members->ids
  };
  // A held position that differs from the world record's (a deferred
  // update): the position that world record `source` ticks back has for
  // the same entity, or, with kExplicit set, explicit_q[3 * slot].
  struct Override {
    uint32_t index = 0;  // in the world record
    uint32_t source = 0;
  };
  static constexpr uint32_t kExplicit = 0x80000000u;
  // What a subscriber holds at one tick, over that tick's world record.
  // Immutable once built; shared by the subscribers (and consecutive
  // ticks) that hold the same.
  struct Record {
    uint64_t members_serial = 0;
    size_t count = 0;                 // of bits set
    std::vector<uint64_t> bits;       // bit i: holds the world's entity i
    std::vector<Override> overrides;  // ascending index
    std::vector<int64_t> explicit_q;
  };
  struct Entry {
    uint64_t tick = 0;
    const void* stream = nullptr;  // the stream it was recorded from
    std::shared_ptr<const Record> record;
  };
  // One subscriber's entries, ascending ticks: a ring of at most
  // history_ticks + 1.
  struct Subscriber {
    std::vector<Entry> ring;
    size_t head = 0;
    size_t count = 0;
    const Entry& at(size_t i) const { return ring[(head + i) % ring.size()]; }
    const Entry& back() const { return at(count - 1); }
  };

  void Clear();
  const WorldRecord* FindWorld(uint64_t tick) const;
  // The positions q of the world entity `index` held by `e` (its override,
  // else the world's).
  const int64_t* HeldQ(const Entry& e, const WorldRecord& w, size_t index,
                       size_t* override_cursor) const;
  // The record `stream` stands for at the newest world tick; `previous` is
  // the entry the subscriber(s) had from it at the previous one, or null.
  std::shared_ptr<const Record> Build(const SubscriberStream& stream,
                                      const Entry* previous);
  // From the previous record and the last Encode's spawns, despawns and
  // deferrals (O(changes)); false when they do not add up.
  bool BuildFrom(const Record& previous, const SubscriberStream& stream,
                 Record& r);
  // From every held entity (O(held)).
  void BuildAll(const SubscriberStream& stream, Record& r);
  // Adds to overrides_ / explicit_q_ the held position of `h`, the world
  // record's entity `m`, when it differs from the world's.
  void AddOverride(const HeldEntity& h, size_t m);
  void Push(std::string_view subscriber, const SubscriberStream& stream,
            uint64_t tick, const std::shared_ptr<const Record>& record);
  // The subscriber's last entry when `stream` recorded it at the previous
  // world tick (so a record of it may be reused), else null.
  const Entry* Previous(std::string_view subscriber,
                        const SubscriberStream& stream) const;

  uint32_t history_ticks_;
  std::deque<WorldRecord> world_;  // ascending ticks
  std::optional<uint64_t> previous_world_tick_;
  uint64_t next_serial_ = 1;
  std::map<std::string, Subscriber, std::less<>> subscribers_;
  // Scratch, reused between calls.
  std::vector<Override> overrides_;
  std::vector<int64_t> explicit_q_;
  std::vector<size_t> source_cursors_;  // per world_ record, for AddOverride
  std::vector<std::vector<int64_t>> spare_q_;
};

}  // namespace tessera::replication

#endif  // TESSERA_REPLICATION_SENT_HISTORY_H_
