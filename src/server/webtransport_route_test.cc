// GET /webtransport and the TESSERA_WEBTRANSPORT_PORT setting.
#include "server/webtransport_route.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <nlohmann/json.hpp>

namespace tessera::server {
namespace {

net::HttpRequest Get(std::string target, std::string host) {
  net::HttpRequest r;
  r.method = "GET";
  r.target = std::move(target);
  if (!host.empty()) r.headers["host"] = std::move(host);
  return r;
}

WebTransportRoute::Source On(uint16_t port) {
  return {
      [port] { return port; },
      [] { return std::string("\x00\x01\xfe\xff", 4) + std::string(28, 'A'); }};
}

TEST(WebTransportRoute, GivesTheUrlOnTheBrowsersHostAndTheCertificateHash) {
  WebTransportRoute route(On(4433));
  net::HttpResponse r = route.Handle(Get("/webtransport", "localhost:4321"));
  ASSERT_EQ(r.status, 200) << r.body;
  nlohmann::json body = nlohmann::json::parse(r.body);
  EXPECT_EQ(body["url"], "https://localhost:4433");
  ASSERT_EQ(body["certHashes"].size(), 1u);
  EXPECT_EQ(body["certHashes"][0]["algorithm"], "sha-256");
  std::string hex = "0001feff";
  for (int i = 0; i < 28; ++i) hex += "41";  // 'A'
  EXPECT_EQ(body["certHashes"][0]["value"], hex);
  // No Host header: loopback.
  nlohmann::json plain =
      nlohmann::json::parse(route.Handle(Get("/webtransport?x=1", "")).body);
  EXPECT_EQ(plain["url"], "https://127.0.0.1:4433");
  nlohmann::json v6 = nlohmann::json::parse(
      route.Handle(Get("/webtransport", "[::1]:4321")).body);
  EXPECT_EQ(v6["url"], "https://[::1]:4433");
}

TEST(WebTransportRoute, SaysSoWhenOffAndRefusesOtherMethods) {
  WebTransportRoute off(On(0));
  EXPECT_EQ(off.Handle(Get("/webtransport", "")).status, 404);
  WebTransportRoute on(On(4433));
  EXPECT_EQ(on.Handle(Get("/webtransport/more", "")).status, 404);
  net::HttpRequest post = Get("/webtransport", "");
  post.method = "POST";
  EXPECT_EQ(on.Handle(post).status, 405);
}

TEST(WebTransportPortSetting, OnInDevOffInServeUnlessSet) {
  unsetenv(kEnvWebTransportPort);
  EXPECT_EQ(WebTransportPortSetting(true).value(), 0);
  EXPECT_EQ(WebTransportPortSetting(false).value(), -1);
  setenv(kEnvWebTransportPort, "4433", 1);
  EXPECT_EQ(WebTransportPortSetting(false).value(), 4433);
  setenv(kEnvWebTransportPort, "off", 1);
  EXPECT_EQ(WebTransportPortSetting(true).value(), -1);
  for (const char* bad : {"70000", "-1", "udp", "12x"}) {
    setenv(kEnvWebTransportPort, bad, 1);
    Result<int> r = WebTransportPortSetting(true);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().message().find(kEnvWebTransportPort),
              std::string::npos);
  }
  unsetenv(kEnvWebTransportPort);
}

}  // namespace
}  // namespace tessera::server
