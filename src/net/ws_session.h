// WebSocket sessions of protocol v1 (docs/protocol.md): one per connection
// to /shard/<id>. Internal to src/net; uses Beast, so only http_session.cc
// includes this header.
#ifndef TESSERA_NET_WS_SESSION_H_
#define TESSERA_NET_WS_SESSION_H_

#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>
#include <string>

namespace tessera::net {

struct ServerContext;

// Accepts the WebSocket upgrade `request` on `stream` (whose executor must
// be the connection's strand; call on it) and runs the session for
// `shard_id` (already percent-decoded) until the connection ends. The
// session owns itself (shared_ptr held by its pending operations); `ctx`
// must outlive it.
void RunWebSocketSession(
    ServerContext& ctx, boost::beast::tcp_stream stream,
    boost::beast::http::request<boost::beast::http::string_body> request,
    std::string shard_id);

// `reason` cut to at most 123 bytes (the WebSocket close reason limit)
// without splitting a UTF-8 sequence.
std::string TruncateCloseReason(std::string_view reason);

}  // namespace tessera::net

#endif  // TESSERA_NET_WS_SESSION_H_
