#include "net/router.h"

#include <gtest/gtest.h>

#include <string>

#include "net/session_factory.h"

namespace tessera::net {
namespace {

class NoSessions final : public SessionFactory {
 public:
  void Run(ServerContext&, boost::beast::tcp_stream,
           boost::beast::http::request<boost::beast::http::string_body>,
           std::string) const override {}
};

class Named final : public HttpHandler {
 public:
  HttpResponse Handle(const HttpRequest&) override { return {}; }
};

TEST(RouterTest, SessionsByLongestPrefixWithTheRestOfThePath) {
  NoSessions realm;
  NoSessions sub;
  Router router;
  router.AddSession(kShardPathPrefix, ShardSessions());
  router.AddSession("/realm/", realm);
  router.AddSession("/realm/sub/", sub);
  std::string_view rest;
  EXPECT_EQ(router.FindSession("/shard/a%2Fb", &rest), &ShardSessions());
  EXPECT_EQ(rest, "a%2Fb");
  EXPECT_EQ(router.FindSession("/realm/r1", &rest), &realm);
  EXPECT_EQ(rest, "r1");
  EXPECT_EQ(router.FindSession("/realm/sub/x", &rest), &sub);
  EXPECT_EQ(rest, "x");
  EXPECT_EQ(router.FindSession("/shard/", &rest), &ShardSessions());
  EXPECT_EQ(rest, "");  // the server answers 400: no id
  EXPECT_EQ(router.FindSession("/shards/a", &rest), nullptr);
  EXPECT_EQ(router.FindSession("/shard", &rest), nullptr);
  EXPECT_EQ(router.FindSession("/", &rest), nullptr);
}

TEST(RouterTest, HttpByLongestWholeSegmentPrefix) {
  Named api;
  Named metrics;
  Router router;
  EXPECT_EQ(router.FindHttp("/api/shards"), nullptr);  // 404
  router.AddHttp("/", api);
  router.AddHttp("/metrics", metrics);
  EXPECT_EQ(router.FindHttp("/api/shards"), &api);
  EXPECT_EQ(router.FindHttp("/"), &api);
  EXPECT_EQ(router.FindHttp("/metrics"), &metrics);
  EXPECT_EQ(router.FindHttp("/metrics/x"), &metrics);
  EXPECT_EQ(router.FindHttp("/metricsx"), &api);
}

}  // namespace
}  // namespace tessera::net
