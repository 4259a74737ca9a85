#include "server/request_target.h"

namespace tessera::server {
namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::optional<std::string> PercentDecode(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      out.push_back(text[i]);
      continue;
    }
    if (i + 2 >= text.size()) return std::nullopt;
    const int hi = HexValue(text[i + 1]);
    const int lo = HexValue(text[i + 2]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out.push_back(static_cast<char>(hi * 16 + lo));
    i += 2;
  }
  return out;
}

std::optional<std::map<std::string, std::string>> ParseQuery(
    std::string_view target) {
  std::map<std::string, std::string> out;
  const size_t q = target.find('?');
  if (q == std::string_view::npos) return out;
  std::string_view query = target.substr(q + 1);
  if (const size_t hash = query.find('#'); hash != std::string_view::npos) {
    query = query.substr(0, hash);
  }
  while (!query.empty()) {
    const size_t amp = query.find('&');
    std::string pair(query.substr(0, amp));
    query = amp == std::string_view::npos ? std::string_view()
                                          : query.substr(amp + 1);
    if (pair.empty()) continue;
    for (char& c : pair) {
      if (c == '+') c = ' ';
    }
    const size_t eq = pair.find('=');
    std::optional<std::string> name = PercentDecode(pair.substr(0, eq));
    std::optional<std::string> value =
        PercentDecode(eq == std::string::npos ? "" : pair.substr(eq + 1));
    if (!name || !value || name->empty()) return std::nullopt;
    if (!out.emplace(std::move(*name), std::move(*value)).second) {
      return std::nullopt;
    }
  }
  return out;
}

std::optional<RequestTarget> ParseTarget(std::string_view target) {
  RequestTarget parsed;
  const size_t query = target.find_first_of("?#");
  parsed.path = std::string(target.substr(0, query));
  if (parsed.path.empty() || parsed.path.front() != '/') return std::nullopt;
  size_t start = 1;
  while (start <= parsed.path.size()) {
    size_t end = parsed.path.find('/', start);
    if (end == std::string::npos) end = parsed.path.size();
    std::string_view raw =
        std::string_view(parsed.path).substr(start, end - start);
    if (!raw.empty()) {
      std::optional<std::string> decoded = PercentDecode(raw);
      if (!decoded || decoded->find('\0') != std::string::npos) {
        return std::nullopt;
      }
      parsed.segments.push_back(std::move(*decoded));
    }
    start = end + 1;
  }
  return parsed;
}

bool IsValidShardId(std::string_view id) {
  if (id.empty() || id.size() > kMaxIdBytes) return false;
  for (char c : id) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                    (c >= '0' && c <= '9') || c == '.' || c == '_' ||
                    c == ':' || c == '-';
    if (!ok) return false;
  }
  return true;
}

bool IsValidSubscriberId(std::string_view id) {
  if (id.empty() || id.size() > kMaxIdBytes) return false;
  for (char c : id) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) return false;
  }
  return true;
}

}  // namespace tessera::server
