// Where compute modules' notifications to players go: a port the compute
// layer declares and the network implements (net/notify_fanout.h: a NOTIFY
// message, docs/protocol.md, on the players' shard connections).
//
// Channels (docs/compute-abi.md "Channels"):
//   "all"              every connected player of the app
//   "shard:<id>"       the players connected to shard <id>
//   "kind:<kind>"      the players of every shard of that kind
//   "group:<name>"     the players of every shard in message group <name>
//                      (tessera_groups, docs/shards-that-talk.md)
//   "player:<id>"      every connection of subscriber <id>
// Anything else is kErrInvalid.
//
// Thread-safe; calls only queue writes and return at once.
#ifndef TESSERA_COMPUTE_NOTIFY_SINK_H_
#define TESSERA_COMPUTE_NOTIFY_SINK_H_

#include <cstdint>
#include <string_view>

#include "compute/host_calls.h"

namespace tessera::compute {

// One notification: what the NOTIFY message carries besides the payload.
struct Notification {
  std::string_view module;   // the emitting module's name
  std::string_view channel;  // the channel as emitted, or "spatial"
  std::string_view payload;  // <= kMaxNotifyPayloadBytes
  std::string_view flow_id;
};

class NotifySink {
 public:
  virtual ~NotifySink() = default;
  // Returns Ok(connections reached) or kErrInvalid (unknown channel form).
  virtual HostCallResult NotifyChannel(const Notification& note) = 0;
  // The players of `shard` whose interest-area centre (its last tick) is
  // within `radius` of (x, y). kErrNotFound: no such shard running.
  virtual HostCallResult NotifySpatial(std::string_view shard, float x, float y,
                                       float radius,
                                       const Notification& note) = 0;
  // Realtime sessions of the app now (activation: modules load while this
  // is above 0).
  virtual size_t SessionCount() const = 0;
};

}  // namespace tessera::compute

#endif  // TESSERA_COMPUTE_NOTIFY_SINK_H_
