// HTTP/1.1 connections: each accepted TCP connection reads requests
// (keep-alive) and answers them through the HttpHandler the server's Router
// gives for the path, or, on a WebSocket upgrade to a session route's
// prefix + <percent-encoded id>, hands the connection to that route's
// SessionFactory. Internal to src/net.
#ifndef TESSERA_NET_HTTP_SESSION_H_
#define TESSERA_NET_HTTP_SESSION_H_

#include <boost/asio/ip/tcp.hpp>
#include <string>
#include <string_view>

namespace tessera::net {

struct ServerContext;

// Serves `socket`, whose executor must be a strand of the server's
// io_context (everything of the connection runs on it). Any thread. `ctx`
// must outlive the connection.
void RunHttpSession(ServerContext& ctx, boost::asio::ip::tcp::socket socket);

// Percent-decodes a URL path segment into `out`; false if a '%' is not
// followed by two hex digits.
bool PercentDecode(std::string_view in, std::string* out);

}  // namespace tessera::net

#endif  // TESSERA_NET_HTTP_SESSION_H_
