#include "server/api_tokens.h"

#include <utility>

#include "server/bearer_auth.h"

namespace tessera::server {
namespace {

constexpr Scope kAllScopes[] = {Scope::kManageCompute,
                                Scope::kViewComputeDiagnostics,
                                Scope::kManageData, Scope::kViewData};

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) {
    s.remove_prefix(1);
  }
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) {
    s.remove_suffix(1);
  }
  return s;
}

std::string ScopeList() {
  std::string list;
  for (Scope s : kAllScopes) {
    if (!list.empty()) list += ", ";
    list += ScopeName(s);
  }
  return list;
}

}  // namespace

const char* ScopeName(Scope scope) {
  switch (scope) {
    case Scope::kManageCompute:
      return "manage_compute";
    case Scope::kViewComputeDiagnostics:
      return "view_compute_diagnostics";
    case Scope::kManageData:
      return "manage_data";
    case Scope::kViewData:
      return "view_data";
  }
  return "unknown";
}

std::optional<Scope> ScopeFromName(std::string_view name) {
  for (Scope s : kAllScopes) {
    if (name == ScopeName(s)) return s;
  }
  return std::nullopt;
}

Scopes Scopes::All() {
  Scopes all;
  for (Scope s : kAllScopes) all.Add(s);
  return all;
}

void Scopes::Add(Scope scope) {
  bits_ |= static_cast<uint8_t>(scope);
  if (scope == Scope::kManageCompute) {
    bits_ |= static_cast<uint8_t>(Scope::kViewComputeDiagnostics);
  }
  if (scope == Scope::kManageData) {
    bits_ |= static_cast<uint8_t>(Scope::kViewData);
  }
}

Result<ApiTokens> ApiTokens::Parse(std::string_view spec,
                                   std::string admin_token) {
  ApiTokens tokens;
  tokens.admin_token_ = std::move(admin_token);
  if (Trim(spec).empty()) return tokens;
  size_t index = 0;
  while (true) {
    const size_t comma = spec.find(',');
    const std::string_view raw = spec.substr(0, comma);
    ++index;
    // The entry as shown in errors: its scope part only (never a token).
    const std::string_view entry = Trim(raw);
    const size_t eq = entry.find('=');
    const std::string shown =
        std::string(
            entry.substr(0, eq == std::string_view::npos ? entry.size() : eq)) +
        (eq == std::string_view::npos ? "" : "=...");
    auto fail = [&](const std::string& what) {
      return InvalidArgument(std::string(kEnvApiTokens) + " entry " +
                             std::to_string(index) + " (\"" + shown +
                             "\"): " + what);
    };
    if (entry.empty()) return fail("is empty (a stray comma?)");
    if (eq == std::string_view::npos) {
      return fail("expected scope=token (e.g. manage_compute=TOKEN)");
    }
    const std::string_view scope_part = Trim(entry.substr(0, eq));
    const std::string_view token = Trim(entry.substr(eq + 1));
    if (scope_part.empty()) return fail("no scope before \"=\"");
    if (token.empty()) return fail("no token after \"=\"");
    for (char c : token) {
      if (c == ' ' || c == '\t' || c == '=' || c == '\r' || c == '\n') {
        return fail("the token contains whitespace or \"=\"");
      }
    }
    Entry parsed;
    parsed.token = std::string(token);
    std::string_view rest = scope_part;
    while (true) {
      const size_t plus = rest.find('+');
      const std::string_view name = Trim(rest.substr(0, plus));
      std::optional<Scope> scope = ScopeFromName(name);
      if (!scope) {
        return fail("unknown scope \"" + std::string(name) +
                    "\" (scopes: " + ScopeList() + ")");
      }
      parsed.scopes.Add(*scope);
      if (plus == std::string_view::npos) break;
      rest = rest.substr(plus + 1);
    }
    if (!tokens.admin_token_.empty() &&
        ConstantTimeEquals(parsed.token, tokens.admin_token_)) {
      return fail(
          "the token is the admin token (which has every scope already)");
    }
    for (size_t i = 0; i < tokens.entries_.size(); ++i) {
      if (ConstantTimeEquals(parsed.token, tokens.entries_[i].token)) {
        return fail("the same token as entry " + std::to_string(i + 1) +
                    " (give one entry scope1+scope2=token)");
      }
    }
    tokens.entries_.push_back(std::move(parsed));
    if (comma == std::string_view::npos) break;
    spec = spec.substr(comma + 1);
  }
  return tokens;
}

Scopes ApiTokens::ScopesOf(std::string_view token) const {
  Scopes found;
  if (token.empty()) return found;
  // Every comparison runs, whatever matched.
  bool admin = !admin_token_.empty() && ConstantTimeEquals(token, admin_token_);
  for (const Entry& e : entries_) {
    if (ConstantTimeEquals(token, e.token)) found = e.scopes;
  }
  return admin ? Scopes::All() : found;
}

Scopes ApiTokens::ScopesOf(const net::HttpRequest& request) const {
  std::optional<std::string_view> token = BearerToken(request);
  return token ? ScopesOf(*token) : Scopes();
}

}  // namespace tessera::server
