// The shard protocol session (protocol v1, docs/protocol.md): one per
// WebSocket connection to /shard/<id>, on a net::WsConnection. Internal to
// src/net; uses Beast types, so only http_session.cc includes this header.
#ifndef TESSERA_NET_SHARD_SESSION_H_
#define TESSERA_NET_SHARD_SESSION_H_

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
void RunShardSession(
    ServerContext& ctx, boost::beast::tcp_stream stream,
    boost::beast::http::request<boost::beast::http::string_body> request,
    std::string shard_id);

}  // namespace tessera::net

#endif  // TESSERA_NET_SHARD_SESSION_H_
