// The URL parser (url.h): what it accepts, and a clear error for the rest.
#include "net/client/url.h"

#include <gtest/gtest.h>

namespace tessera::net::client {
namespace {

TEST(UrlTest, ParsesOriginsAndPaths) {
  Result<Url> u = ParseUrl("http://localhost:4321");
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->scheme, "http");
  EXPECT_EQ(u->host, "localhost");
  EXPECT_EQ(u->port, 4321);
  EXPECT_EQ(u->path, "/");
  EXPECT_FALSE(u->tls());
  EXPECT_EQ(u->HostHeader(), "localhost:4321");

  u = ParseUrl("HTTPS://example.com/api/join?x=1");
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->scheme, "https");
  EXPECT_EQ(u->port, 443);
  EXPECT_EQ(u->path, "/api/join?x=1");
  EXPECT_TRUE(u->tls());
  EXPECT_EQ(u->HostHeader(), "example.com");
  EXPECT_EQ(u->ToString(), "https://example.com/api/join?x=1");

  u = ParseUrl("ws://[::1]:9000/shard/a");
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->host, "::1");
  EXPECT_EQ(u->port, 9000);
  EXPECT_EQ(u->HostHeader(), "[::1]:9000");
  EXPECT_TRUE(ParseUrl("wss://h").ok() && ParseUrl("wss://h")->tls());
}

TEST(UrlTest, RefusesBadUrls) {
  EXPECT_FALSE(ParseUrl("localhost:4321").ok());
  EXPECT_FALSE(ParseUrl("ftp://h").ok());
  EXPECT_FALSE(ParseUrl("http://:80").ok());
  EXPECT_FALSE(ParseUrl("http://h:0").ok());
  EXPECT_FALSE(ParseUrl("http://h:70000").ok());
  EXPECT_FALSE(ParseUrl("http://h:12ab").ok());
  EXPECT_FALSE(ParseUrl("http://u:p@h").ok());
}

TEST(UrlTest, ResolvesPathsAgainstTheBase) {
  const Url base = ParseUrl("http://127.0.0.1:4321").value();
  Result<Url> join = ResolveUrl(base, "/api/dev/join");
  ASSERT_TRUE(join.ok());
  EXPECT_EQ(join->ToString(), "http://127.0.0.1:4321/api/dev/join");
  join = ResolveUrl(base, "https://app.example/join");
  ASSERT_TRUE(join.ok());
  EXPECT_EQ(join->host, "app.example");
  EXPECT_FALSE(ResolveUrl(base, "api/dev/join").ok());
  EXPECT_EQ(PercentEncode("a/b c~"), "a%2Fb%20c~");
}

TEST(UrlTest, StripsTheFragmentAndKeepsTheQuery) {
  Result<Url> u = ParseUrl("http://[::1]:8080/a/b?c=d#frag");
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->host, "::1");
  EXPECT_EQ(u->port, 8080);
  EXPECT_EQ(u->path, "/a/b?c=d");
  u = ParseUrl("http://h?q=1");
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->path, "/?q=1");
  u = ParseUrl("http://example.com");
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->port, 80);
  EXPECT_EQ(u->path, "/");
  EXPECT_EQ(u->HostHeader(), "example.com");
}

TEST(UrlTest, BadInputGivesAnErrorSayingWhatIsWrong) {
  const struct {
    const char* url;
    const char* says;
  } kCases[] = {
      {"example.com", "not an absolute URL"},
      {"", "not an absolute URL"},
      {"ftp://x", "unsupported scheme \"ftp\""},
      {"http://", "no host"},
      {"http://:80/", "no host"},
      {"http://h:0/", "bad port \"0\""},
      {"http://h:/", "bad port \"\""},
      {"http://h:99999/", "bad port"},
      {"http://h:8x/", "bad port \"8x\""},
      {"http://user:pw@h/", "credentials"},
      {"http://[::1/", "unclosed ["},
      {"http://[::1]x/", "bad host"},
      {"http://a b/", "bad host \"a b\""},
      {"http://h/a b", "space or control character"},
      {"http://h/\x01", "space or control character"},
  };
  for (const auto& c : kCases) {
    Result<Url> u = ParseUrl(c.url);
    ASSERT_FALSE(u.ok()) << c.url;
    EXPECT_EQ(u.status().code(), StatusCode::kInvalidArgument) << c.url;
    EXPECT_NE(u.status().message().find(c.says), std::string::npos)
        << c.url << ": " << u.status().message();
  }
  EXPECT_NE(ResolveUrl(Url{}, "api/join")
                .status()
                .message()
                .find("neither an absolute URL nor a path"),
            std::string::npos);
}

}  // namespace
}  // namespace tessera::net::client
