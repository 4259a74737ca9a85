#include "net/client/url.h"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace tessera::net::client {
namespace {

uint16_t DefaultPort(const std::string& scheme) {
  return scheme == "https" || scheme == "wss" ? 443 : 80;
}

std::string Lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return out;
}

// Names, IPv4 and (unbracketed) IPv6 literals with a zone: no spaces,
// controls or delimiters.
bool ValidHost(std::string_view host) {
  return std::all_of(host.begin(), host.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~' ||
           c == ':' || c == '%';
  });
}

// No spaces or control characters (they would break the request line).
Status CheckPath(std::string_view path, std::string_view text) {
  for (unsigned char c : path) {
    if (c <= 0x20 || c == 0x7f) {
      return InvalidArgument("a space or control character in the path of \"" +
                             std::string(text) + "\" (percent-encode it)");
    }
  }
  return Status::Ok();
}

}  // namespace

std::string Url::HostHeader() const {
  std::string out =
      host.find(':') != std::string::npos ? "[" + host + "]" : host;
  if (port != DefaultPort(scheme)) out += ":" + std::to_string(port);
  return out;
}

std::string Url::ToString() const {
  return scheme + "://" + HostHeader() + path;
}

Result<Url> ParseUrl(std::string_view text) {
  const size_t sep = text.find("://");
  if (sep == std::string_view::npos) {
    return InvalidArgument("\"" + std::string(text) +
                           "\" is not an absolute URL (expected "
                           "http://HOST[:PORT][/PATH])");
  }
  Url url;
  url.scheme = Lower(text.substr(0, sep));
  if (url.scheme != "http" && url.scheme != "https" && url.scheme != "ws" &&
      url.scheme != "wss") {
    return InvalidArgument("unsupported scheme \"" + url.scheme + "\" in " +
                           std::string(text) + " (use http, https, ws or wss)");
  }
  std::string_view rest = text.substr(sep + 3);
  rest = rest.substr(0, rest.find('#'));
  const size_t slash = std::min(rest.find('/'), rest.find('?'));
  std::string_view authority = rest.substr(0, slash);
  if (slash != std::string_view::npos) {
    url.path = std::string(rest.substr(slash));
    if (url.path.front() == '?') url.path = "/" + url.path;
    TESSERA_RETURN_IF_ERROR(CheckPath(url.path, text));
  }
  if (authority.find('@') != std::string_view::npos) {
    return InvalidArgument("credentials in URLs are not supported: " +
                           std::string(text));
  }
  std::string_view port_text;
  bool has_port = false;
  if (!authority.empty() && authority.front() == '[') {
    const size_t close = authority.find(']');
    if (close == std::string_view::npos) {
      return InvalidArgument("unclosed [ in " + std::string(text));
    }
    url.host = std::string(authority.substr(1, close - 1));
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') {
        return InvalidArgument("bad host in " + std::string(text));
      }
      has_port = true;
      port_text = after.substr(1);
    }
  } else {
    const size_t colon = authority.rfind(':');
    url.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) {
      has_port = true;
      port_text = authority.substr(colon + 1);
    }
  }
  if (url.host.empty()) {
    return InvalidArgument("no host in " + std::string(text));
  }
  if (!ValidHost(url.host)) {
    return InvalidArgument("bad host \"" + url.host + "\" in " +
                           std::string(text));
  }
  url.port = DefaultPort(url.scheme);
  if (has_port) {
    unsigned value = 0;
    auto [end, ec] = std::from_chars(
        port_text.data(), port_text.data() + port_text.size(), value);
    if (ec != std::errc() || end != port_text.data() + port_text.size() ||
        value == 0 || value > 65535) {
      return InvalidArgument("bad port \"" + std::string(port_text) + "\" in " +
                             std::string(text));
    }
    url.port = static_cast<uint16_t>(value);
  }
  return url;
}

Result<Url> ResolveUrl(const Url& base, std::string_view ref) {
  if (ref.find("://") != std::string_view::npos) return ParseUrl(ref);
  if (ref.empty() || ref.front() != '/') {
    return InvalidArgument("\"" + std::string(ref) +
                           "\" is neither an absolute URL nor a path "
                           "starting with /");
  }
  TESSERA_RETURN_IF_ERROR(CheckPath(ref, ref));
  Url url = base;
  url.path = std::string(ref);
  return url;
}

std::string PercentEncode(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

}  // namespace tessera::net::client
