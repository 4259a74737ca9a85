// Messages between shards (docs/guest-abi.md, "Transfers and messages"):
// where a message from outbox() goes. The members a shard class defines
// (groups(), outbox(), on_message()) are described in tessera/shard.h.
#ifndef TESSERA_MESSAGES_H_
#define TESSERA_MESSAGES_H_

#include <cstdint>
#include <string>
#include <utility>

#include "tessera/abi.h"

namespace tessera {

enum class TargetKind : std::uint8_t {
  kShard = abi::kTargetShard,  // one shard, by id
  kGroup = abi::kTargetGroup,  // every shard whose groups() has the name
  kAll = abi::kTargetAll,      // every shard with on_message()
};

// The sender never receives its own Group or All message.
struct Target {
  TargetKind kind = TargetKind::kShard;
  std::string name;  // the shard id or group name; empty for kAll

  static Target shard(std::string id) {
    return Target{TargetKind::kShard, std::move(id)};
  }
  static Target group(std::string name) {
    return Target{TargetKind::kGroup, std::move(name)};
  }
  static Target all() { return Target{TargetKind::kAll, std::string()}; }
};

// One message. topic: 1..128 bytes; data: up to 64 KiB, any bytes. The host
// refuses (counts and logs) messages over the limits, and more than 64 per
// tick.
struct Outgoing {
  Target to;
  std::string topic;
  std::string data;
};

}  // namespace tessera

#endif  // TESSERA_MESSAGES_H_
