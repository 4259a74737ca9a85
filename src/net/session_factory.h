// What a Router's session route runs (internal to src/net: Beast types).
#ifndef TESSERA_NET_SESSION_FACTORY_H_
#define TESSERA_NET_SESSION_FACTORY_H_

#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>
#include <string>

#include "net/router.h"

namespace tessera::net {

struct ServerContext;

class SessionFactory {
 public:
  virtual ~SessionFactory() = default;
  // Accepts the WebSocket upgrade `request` on `stream` (on the
  // connection's strand) and runs a session for resource `id` (the path
  // after the route's prefix, percent-decoded, not empty) until the
  // connection ends. `ctx` outlives the session. Const: one factory serves
  // every connection, from any io thread.
  virtual void Run(
      ServerContext& ctx, boost::beast::tcp_stream stream,
      boost::beast::http::request<boost::beast::http::string_body> request,
      std::string id) const = 0;
};

}  // namespace tessera::net

#endif  // TESSERA_NET_SESSION_FACTORY_H_
