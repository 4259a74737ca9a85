#include "server/bearer_auth.h"

#include <cstdint>

namespace tessera::server {

bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  // Walk the longer length so the time does not reveal a matching prefix.
  const size_t n = a.size() > b.size() ? a.size() : b.size();
  uint8_t diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < n; ++i) {
    const uint8_t x = i < a.size() ? static_cast<uint8_t>(a[i]) : 0;
    const uint8_t y = i < b.size() ? static_cast<uint8_t>(b[i]) : 0;
    diff |= static_cast<uint8_t>(x ^ y);
  }
  return diff == 0;
}

std::optional<std::string_view> BearerToken(const net::HttpRequest& request) {
  auto it = request.headers.find("authorization");
  if (it == request.headers.end()) return std::nullopt;
  std::string_view value = it->second;
  constexpr std::string_view kScheme = "bearer ";
  if (value.size() < kScheme.size()) return std::nullopt;
  for (size_t i = 0; i < kScheme.size(); ++i) {
    char c = value[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != kScheme[i]) return std::nullopt;
  }
  value.remove_prefix(kScheme.size());
  while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) {
    value.remove_suffix(1);
  }
  return value;
}

bool HasBearerToken(const net::HttpRequest& request, std::string_view token) {
  if (token.empty()) return false;
  std::optional<std::string_view> given = BearerToken(request);
  return given && ConstantTimeEquals(*given, token);
}

}  // namespace tessera::server
