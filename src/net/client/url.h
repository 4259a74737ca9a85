// The one URL parser of the clients: http(s):// and ws(s):// origins and
// endpoints, with IPv6 literals, as given to `tessera bench`, to onStop
// and to the tests. Pure functions.
#ifndef TESSERA_NET_CLIENT_URL_H_
#define TESSERA_NET_CLIENT_URL_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace tessera::net::client {

struct Url {
  std::string scheme;      // "http", "https", "ws" or "wss" (lower case)
  std::string host;        // without brackets for IPv6 literals
  uint16_t port = 0;       // the scheme's default when the URL names none
  std::string path = "/";  // with the query, if any; never the fragment

  // https:// and wss://.
  bool tls() const { return scheme == "https" || scheme == "wss"; }
  // The Host header: "host", or "host:port" when the port is not the
  // scheme's default; IPv6 literals in brackets.
  std::string HostHeader() const;
  // scheme://host[:port]path
  std::string ToString() const;
};

// Parses an absolute URL. Errors: kInvalidArgument naming what is wrong
// (not absolute, unsupported scheme, credentials, missing host, bad port).
Result<Url> ParseUrl(std::string_view text);

// `ref` if it is absolute; a path ("/api/dev/join") is taken relative to
// `base`'s origin. Errors: as ParseUrl.
Result<Url> ResolveUrl(const Url& base, std::string_view ref);

// "a/b c" -> "a%2Fb%20c": every byte but RFC 3986 unreserved characters.
std::string PercentEncode(std::string_view text);

}  // namespace tessera::net::client

#endif  // TESSERA_NET_CLIENT_URL_H_
