// What the HTTP handlers may ask of the live WebSocket connections
// (implemented by the network layer). Thread-safe; every call only queues
// work on the network threads and returns at once.
#ifndef TESSERA_NET_CONNECTIONS_H_
#define TESSERA_NET_CONNECTIONS_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace tessera::net {

// WebSocket close codes of docs/protocol.md.
enum CloseCode : int {
  kCloseGoingAway = 1001,
  kCloseMessageTooBig = 1009,
  kCloseBadFrame = 4000,
  kCloseTicketInvalid = 4001,
  kCloseTicketExpired = 4002,
  kCloseTicketWrongShard = 4003,
  kCloseShardNotFound = 4004,
  kCloseKicked = 4005,
  kCloseShardStopped = 4006,
  kCloseRateLimited = 4007,
  kCloseHelloTimeout = 4008,
  kCloseUnsupportedVersion = 4009,
  kCloseHelloExpected = 4010,
  kCloseTransferred = 4011,   // after TRANSFER: the player moved
  kCloseUnresponsive = 4015,  // nothing heard from the peer for too long
};

class Connections {
 public:
  virtual ~Connections() = default;
  // Closes every connection of `subscriber` on `shard_id`; returns how many.
  virtual size_t CloseSubscriber(std::string_view shard_id,
                                 std::string_view subscriber, int code,
                                 std::string_view reason) = 0;
  // Closes every connection of the shard; returns how many.
  virtual size_t CloseShard(std::string_view shard_id, int code,
                            std::string_view reason) = 0;
  // Distinct subscriber ids connected to the shard.
  virtual std::vector<std::string> Subscribers(
      std::string_view shard_id) const = 0;
  virtual size_t ConnectionCount() const = 0;
};

}  // namespace tessera::net

#endif  // TESSERA_NET_CONNECTIONS_H_
