// Plain HTTP request/response values between the network layer (Beast,
// src/net/server.cc) and the handlers (admin API, dev join, static files,
// metrics), so handlers are tested without sockets.
#ifndef TESSERA_NET_HTTP_TYPES_H_
#define TESSERA_NET_HTTP_TYPES_H_

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace tessera::net {

struct HttpRequest {
  std::string method;  // "GET", "POST", ...
  std::string target;  // path and query, as received ("/api/shards?x=1")
  // Header names lower-cased.
  std::map<std::string, std::string> headers;
  std::string body;
  std::string remote_address;  // "127.0.0.1"
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // extra ones
};

// Answers every HTTP request that is not a WebSocket upgrade to /shard/...
// Called on network threads, concurrently; must not block for long.
class HttpHandler {
 public:
  virtual ~HttpHandler() = default;
  virtual HttpResponse Handle(const HttpRequest& request) = 0;
};

}  // namespace tessera::net

#endif  // TESSERA_NET_HTTP_TYPES_H_
