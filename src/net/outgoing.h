// One message waiting in a WebSocket connection's send queue
// (net/send_queue.h).
#ifndef TESSERA_NET_OUTGOING_H_
#define TESSERA_NET_OUTGOING_H_

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace tessera::net {

struct Outgoing {
  // The message is head + *body + mid + *body2 (absent parts empty).
  std::string head;  // a whole message, or a FRAME's header
  std::shared_ptr<const std::string> body;   // a FRAME's shared snapshot
  std::string mid;                           // replication: entities' header
  std::shared_ptr<const std::string> body2;  // replication: entities
  bool is_frame = false;
  uint64_t tick = 0;  // with is_frame: the tick it shows
  // What may happen to a frame still waiting to be written when the client
  // falls behind: nothing (the client is closed), replaced by a newer
  // whole-snapshot frame, or dropped for a new replication baseline.
  enum class Skip { kNever, kSupersede, kResync } skip = Skip::kNever;
  bool is_close = false;
  int close_code = 0;  // with is_close; the reason is in `head`

  // The message's four parts, in order (absent ones empty).
  std::array<std::string_view, 4> Parts() const {
    return {head, body ? std::string_view(*body) : std::string_view(), mid,
            body2 ? std::string_view(*body2) : std::string_view()};
  }
};

}  // namespace tessera::net

#endif  // TESSERA_NET_OUTGOING_H_
