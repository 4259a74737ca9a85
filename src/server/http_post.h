// A minimal blocking HTTP/1.1 client for onStop notifications: one POST of
// a JSON body to an http:// URL over a fresh connection ("Connection:
// close"), returning the response's status code. No TLS, no redirects, no
// keep-alive. POSIX sockets.
//
// Thread-safety: PostJson may be called from any thread; it blocks for at
// most `timeout_ms` once the name is resolved (getaddrinfo has its own).
#ifndef TESSERA_SERVER_HTTP_POST_H_
#define TESSERA_SERVER_HTTP_POST_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace tessera::server {

struct HttpUrl {
  std::string host;  // a name, an IPv4 address or a bracketed IPv6 one
  uint16_t port = 80;
  std::string target = "/";  // path and query
};

// Parses "http://host[:port][/path][?query]". Errors: kInvalidArgument
// (another scheme such as https, a bad port, userinfo, an empty host).
Result<HttpUrl> ParseHttpUrl(std::string_view url);

// POSTs `body` as application/json to `url`; returns the HTTP status code.
// Errors: kInvalidArgument for a bad URL, kIo for resolution, connection,
// timeout or a response that is not HTTP.
Result<int> PostJson(const std::string& url, const std::string& body,
                     int timeout_ms);

}  // namespace tessera::server

#endif  // TESSERA_SERVER_HTTP_POST_H_
