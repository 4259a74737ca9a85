// The admin API's bearer token check. Pure functions; any thread.
#ifndef TESSERA_SERVER_BEARER_AUTH_H_
#define TESSERA_SERVER_BEARER_AUTH_H_

#include <optional>
#include <string_view>

#include "net/http_types.h"

namespace tessera::server {

// Compares in time that depends only on the lengths, never on where the
// first difference is.
bool ConstantTimeEquals(std::string_view a, std::string_view b);

// The token of the request's "Authorization: Bearer <token>" (scheme
// case-insensitive, surrounding blanks trimmed), or nullopt without one.
std::optional<std::string_view> BearerToken(const net::HttpRequest& request);

// True when `request` carries "Authorization: Bearer <token>" (scheme
// case-insensitive) with exactly `token`. An empty `token` admits nobody.
bool HasBearerToken(const net::HttpRequest& request, std::string_view token);

}  // namespace tessera::server

#endif  // TESSERA_SERVER_BEARER_AUTH_H_
