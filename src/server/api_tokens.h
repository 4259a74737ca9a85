// Scoped API tokens (docs/compute.md "Tokens"): which bearer tokens may do
// what. TESSERA_API_TOKENS lists scope=token entries, comma-separated
// ("manage_compute=tok1,view_compute_diagnostics=tok2"; "a+b=tok" gives one
// token several scopes); the admin token has every scope, and
// manage_compute implies view_compute_diagnostics.
//
// Tokens are compared in constant time, each against every configured
// token (no early exit), so the time reveals neither which token matched
// nor a matching prefix.
//
// Thread-safety: immutable after Parse; any thread.
#ifndef TESSERA_SERVER_API_TOKENS_H_
#define TESSERA_SERVER_API_TOKENS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "net/http_types.h"
#include "server/env_config.h"

namespace tessera::server {

enum class Scope : uint8_t {
  kManageCompute = 1 << 0,           // "manage_compute"
  kViewComputeDiagnostics = 1 << 1,  // "view_compute_diagnostics"
  kManageData = 1 << 2,              // "manage_data" (implies view_data)
  kViewData = 1 << 3,                // "view_data"
};
const char* ScopeName(Scope scope);
// By name; nullopt for an unknown one.
std::optional<Scope> ScopeFromName(std::string_view name);

// A set of scopes (bits of Scope).
class Scopes {
 public:
  Scopes() = default;
  static Scopes All();
  // `scope` and what it implies (manage_compute: view too).
  void Add(Scope scope);
  bool Has(Scope scope) const {
    return (bits_ & static_cast<uint8_t>(scope)) != 0;
  }
  bool empty() const { return bits_ == 0; }
  bool operator==(const Scopes&) const = default;

 private:
  uint8_t bits_ = 0;
};

class ApiTokens {
 public:
  ApiTokens() = default;
  // Parses `spec` (empty: no scoped tokens) beside `admin_token` (empty:
  // none). Errors: kInvalidArgument naming the entry ("TESSERA_API_TOKENS
  // entry 2 (\"manage=...\"): unknown scope \"manage\" (scopes:
  // manage_compute, view_compute_diagnostics)"): an entry without "=", an
  // empty scope or token, an unknown scope, a token with whitespace, a
  // token given twice or equal to the admin token. The message never
  // contains a token.
  static Result<ApiTokens> Parse(std::string_view spec,
                                 std::string admin_token);

  // The scopes of `token` (the admin token: All()); empty when unknown.
  Scopes ScopesOf(std::string_view token) const;
  // The scopes of the request's "Authorization: Bearer <token>"; empty
  // without one.
  Scopes ScopesOf(const net::HttpRequest& request) const;

  size_t size() const { return entries_.size(); }

 private:
  struct Entry {
    std::string token;
    Scopes scopes;
  };
  std::string admin_token_;
  std::vector<Entry> entries_;
};

}  // namespace tessera::server

#endif  // TESSERA_SERVER_API_TOKENS_H_
