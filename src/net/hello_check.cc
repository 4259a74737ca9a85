#include "net/hello_check.h"

#include "net/connections.h"

namespace tessera::net {

std::optional<HelloRefusal> CheckHello(const v1::Hello& hello,
                                       const TicketCheck& check) {
  auto refuse = [&](int code, std::string_view fallback) {
    return HelloRefusal{
        code, check.message.empty() ? std::string(fallback) : check.message};
  };
  if (hello.version != v1::kVersion) {
    return HelloRefusal{kCloseUnsupportedVersion,
                        "protocol version " + std::to_string(hello.version) +
                            " is not supported; this server speaks " +
                            std::to_string(v1::kVersion)};
  }
  switch (check.error) {
    case TicketError::kNone:
      break;
    case TicketError::kInvalid:
      return refuse(kCloseTicketInvalid, "invalid ticket");
    case TicketError::kExpired:
      return refuse(kCloseTicketExpired, "ticket expired");
    case TicketError::kWrongShard:
      return refuse(kCloseTicketWrongShard, "ticket is for another shard");
  }
  // An empty subscriber id is the server's own (inputs a function sends):
  // never a connection's. ParseTicket refuses it too; this holds for any
  // ticket check.
  if (check.ticket.subscriber_id.empty()) {
    return HelloRefusal{kCloseTicketInvalid,
                        "invalid ticket: subscriber id is empty"};
  }
  return std::nullopt;
}

}  // namespace tessera::net
