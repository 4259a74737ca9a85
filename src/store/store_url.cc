#include "store/store_url.h"

#include <cctype>
#include <string_view>

namespace tessera::store {
namespace {

// The scheme of "scheme://...", lower-cased, or "" when there is none.
std::string SchemeOf(std::string_view url) {
  size_t sep = url.find("://");
  if (sep == std::string_view::npos || sep == 0) return "";
  std::string scheme;
  for (size_t i = 0; i < sep; ++i) {
    unsigned char c = static_cast<unsigned char>(url[i]);
    bool ok = std::isalpha(c) ||
              (i > 0 && (std::isdigit(c) || c == '+' || c == '-' || c == '.'));
    if (!ok) return "";
    scheme.push_back(static_cast<char>(std::tolower(c)));
  }
  return scheme;
}

bool StartsWithNoCase(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(s[i])) != prefix[i]) {
      return false;
    }
  }
  return true;
}

}  // namespace

std::string RedactStoreUrl(const std::string& url) {
  const size_t sep = url.find("://");
  if (sep == std::string::npos) return url;
  const size_t begin = sep + 3;
  // The authority ends at the first '/', '?' or '#'; its userinfo at the
  // last '@' before that (a password may hold '@' unescaped).
  size_t end = url.find_first_of("/?#", begin);
  if (end == std::string::npos) end = url.size();
  const size_t at = url.rfind('@', end == 0 ? 0 : end - 1);
  if (at == std::string::npos || at < begin) return url;
  const size_t colon = url.find(':', begin);
  if (colon == std::string::npos || colon > at) return url;
  return url.substr(0, colon + 1) + "***" + url.substr(at);
}

Result<StoreUrl> ParseStoreUrl(const std::string& url) {
  std::string scheme = SchemeOf(url);
  if (scheme == "postgres" || scheme == "postgresql") {
    StoreUrl parsed;
    parsed.backend = StoreUrl::Backend::kPostgres;
    parsed.url = scheme + url.substr(scheme.size());
    parsed.redacted = RedactStoreUrl(parsed.url);
    return parsed;
  }
  StoreUrl parsed;
  if (scheme == "sqlite") {
    parsed.path = url.substr(std::string_view("sqlite://").size());
  } else if (!scheme.empty()) {
    return InvalidArgument("unsupported store URL scheme \"" + scheme +
                           "://\"; use sqlite:PATH");
  } else if (StartsWithNoCase(url, "sqlite:")) {
    parsed.path = url.substr(std::string_view("sqlite:").size());
  } else {
    parsed.path = url;
  }
  if (parsed.path.empty()) {
    return InvalidArgument("the store URL names no file; use sqlite:PATH");
  }
  return parsed;
}

}  // namespace tessera::store
