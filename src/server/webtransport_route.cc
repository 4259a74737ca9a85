#include "server/webtransport_route.h"

#include <nlohmann/json.hpp>

#include "server/env_config.h"

namespace tessera::server {
namespace {

std::string Hex(const std::string& bytes) {
  static const char kDigits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 15]);
  }
  return out;
}

// The host the browser used for the HTTP port (the Host header without its
// port), so the WebTransport URL names the same machine.
std::string HostOf(const net::HttpRequest& request) {
  auto it = request.headers.find("host");
  std::string host = it != request.headers.end() ? it->second : "";
  if (!host.empty() && host.front() == '[') {
    const size_t close = host.find(']');
    return close == std::string::npos ? "127.0.0.1" : host.substr(0, close + 1);
  }
  host = host.substr(0, host.find(':'));
  return host.empty() ? "127.0.0.1" : host;
}

}  // namespace

net::HttpResponse WebTransportRoute::Handle(const net::HttpRequest& request) {
  net::HttpResponse response;
  const std::string path = request.target.substr(0, request.target.find('?'));
  const uint16_t port = source_.port ? source_.port() : 0;
  if (path != kWebTransportPath || port == 0) {
    response.status = 404;
    response.body = R"({"error":"WebTransport is off"})";
    return response;
  }
  if (request.method != "GET") {
    response.status = 405;
    response.body = R"({"error":"use GET"})";
    return response;
  }
  nlohmann::json body;
  body["url"] = "https://" + HostOf(request) + ":" + std::to_string(port);
  body["certHashes"] = nlohmann::json::array(
      {{{"algorithm", "sha-256"}, {"value", Hex(source_.cert_sha256())}}});
  response.body = body.dump();
  response.headers.emplace_back("cache-control", "no-store");
  return response;
}

Result<int> WebTransportPortSetting(bool dev) {
  std::optional<std::string> text = EnvString(kEnvWebTransportPort);
  if (!text) return dev ? 0 : -1;
  if (*text == "off") return -1;
  char* end = nullptr;
  const long value = std::strtol(text->c_str(), &end, 10);
  if (end == text->c_str() || *end != '\0' || value < 0 || value > 65535) {
    return InvalidArgument(std::string(kEnvWebTransportPort) +
                           ": expected \"off\" or a port 0..65535, got \"" +
                           *text + "\"");
  }
  return static_cast<int>(value);
}

}  // namespace tessera::server
