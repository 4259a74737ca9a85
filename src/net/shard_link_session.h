// The shard protocol session on any MessageLink (no Beast types here): for
// transports other than the WebSocket one (net/shard_session.h), such as
// WebTransport (net/webtransport/wt_shard_acceptor).
#ifndef TESSERA_NET_SHARD_LINK_SESSION_H_
#define TESSERA_NET_SHARD_LINK_SESSION_H_

#include <functional>
#include <memory>
#include <string>

#include "net/message_link.h"

namespace tessera::net {

struct ServerContext;

// Makes the session's link, given the session as its handler.
using LinkMaker =
    std::function<std::unique_ptr<MessageLink>(MessageLink::Handler&)>;

// A shard session for `shard_id` (percent-decoded) on the link `make`
// returns, registered with `ctx` (so Stop closes it); on the link's strand.
// The caller keeps the returned owner while the link lives and starts
// delivering the link's events. `ctx` must outlive the session.
std::shared_ptr<void> RunShardSessionOn(ServerContext& ctx,
                                        std::string shard_id,
                                        const LinkMaker& make);

}  // namespace tessera::net

#endif  // TESSERA_NET_SHARD_LINK_SESSION_H_
