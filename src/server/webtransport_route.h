// GET /webtransport: where and how a browser opens the WebTransport port
// (docs/protocol.md "WebTransport"): {"url": "https://<host>:<udp port>",
// "certHashes": [{"algorithm": "sha-256", "value": "<hex>"}]}, the hashes
// for `serverCertificateHashes` (the development certificate is
// self-signed). 404 when the port is off. No token needed: the certificate
// hash and the port are public.
#ifndef TESSERA_SERVER_WEBTRANSPORT_ROUTE_H_
#define TESSERA_SERVER_WEBTRANSPORT_ROUTE_H_

#include <cstdint>
#include <functional>
#include <string>

#include "common/status.h"
#include "net/http_types.h"

namespace tessera::server {

inline constexpr char kWebTransportPath[] = "/webtransport";
// The variable of the UDP port: a number (0: any free port), or "off".
inline constexpr char kEnvWebTransportPort[] = "TESSERA_WEBTRANSPORT_PORT";

class WebTransportRoute final : public net::HttpHandler {
 public:
  struct Source {
    std::function<uint16_t()> port;            // 0: off
    std::function<std::string()> cert_sha256;  // 32 bytes
  };
  explicit WebTransportRoute(Source source) : source_(std::move(source)) {}
  net::HttpResponse Handle(const net::HttpRequest& request) override;

 private:
  Source source_;
};

// The WebTransport port setting: -1 off, else the UDP port (0: any free
// one). Unset: on (0) for `tessera dev`, off for `tessera serve`. Errors:
// kInvalidArgument for a value that is neither "off" nor 0..65535.
Result<int> WebTransportPortSetting(bool dev);

}  // namespace tessera::server

#endif  // TESSERA_SERVER_WEBTRANSPORT_ROUTE_H_
