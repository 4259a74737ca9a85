// The shard session's admission rules, without sockets: our subprotocol,
// and whether a HELLO (its version and its ticket, verified) lets
// the connection join, or the close code and reason that refuse it.
#ifndef TESSERA_NET_HELLO_CHECK_H_
#define TESSERA_NET_HELLO_CHECK_H_

#include <optional>
#include <string>
#include <string_view>

#include "net/protocol_v1.h"
#include "net/ticket.h"

namespace tessera::net {

inline constexpr std::string_view kSubprotocol = "tessera.v1";

struct HelloRefusal {
  int code = 0;
  std::string reason;
};

// nullopt when `hello` (with `check`, its ticket verified for this shard)
// may join; else the close that refuses it: 4009 for another protocol
// version, 4001/4002/4003 for an invalid, expired or other-shard ticket,
// 4001 for a ticket without a subscriber id.
std::optional<HelloRefusal> CheckHello(const v1::Hello& hello,
                                       const TicketCheck& check);

}  // namespace tessera::net

#endif  // TESSERA_NET_HELLO_CHECK_H_
