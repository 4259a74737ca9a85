#include "server/web_mounts.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace tessera::server {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

TEST(WebMountsTest, ParsesPrefixAndDirectory) {
  Result<WebMount> m = ParseWebMount("/sdk/=clients/ts/dist");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->prefix, "/sdk");
  EXPECT_EQ(m->dir, "clients/ts/dist");
  EXPECT_EQ(ParseWebMount("/=x")->prefix, "/");
  EXPECT_THAT(ParseWebMount("sdk").status().message(), HasSubstr("PREFIX=DIR"));
  EXPECT_THAT(ParseWebMount("sdk=x").status().message(),
              HasSubstr("must start with"));
  EXPECT_THAT(ParseWebMount("/sdk=").status().message(), HasSubstr("empty"));
  EXPECT_THAT(ParseWebMount("/a/../b=x").status().message(),
              HasSubstr("segment"));
  EXPECT_THAT(ParseWebMount("/a//b=x").status().message(),
              HasSubstr("segment"));
}

class WebMountsServeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("tessera-mounts-" + std::to_string(::getpid()));
    fs::remove_all(root_);
    Write(root_ / "web/index.html", "home");
    Write(root_ / "sdk/tessera-client.js", "sdk");
    Write(root_ / "zone/index.html", "zone");
  }
  void TearDown() override { fs::remove_all(root_); }
  static void Write(const fs::path& p, const std::string& text) {
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
  }
  fs::path root_;
};

TEST_F(WebMountsServeTest, LongestPrefixWinsOnWholeSegments) {
  WebMounts mounts({{"/", root_ / "web"},
                    {"/sdk", root_ / "sdk"},
                    {"/zone", root_ / "zone"}});
  EXPECT_EQ(mounts.Serve("/").body, "home");
  EXPECT_EQ(mounts.Serve("/index.html").body, "home");
  EXPECT_EQ(mounts.Serve("/sdk/tessera-client.js").body, "sdk");
  EXPECT_EQ(mounts.Serve("/zone/").body, "zone");
  // "/zone" alone redirects so that the page's relative links work.
  net::HttpResponse redirect = mounts.Serve("/zone");
  EXPECT_EQ(redirect.status, 301);
  ASSERT_EQ(redirect.headers.size(), 1u);
  EXPECT_EQ(redirect.headers[0].second, "/zone/");
  // "/sdkx" is not under "/sdk": it falls through to the root (missing).
  EXPECT_EQ(mounts.Serve("/sdkx/tessera-client.js").status, 404);
  EXPECT_EQ(mounts.Serve("/sdk/../web/index.html").status, 404);
}

TEST_F(WebMountsServeTest, WithoutARootMountUnknownPathsAre404) {
  WebMounts mounts({{"/sdk", root_ / "sdk"}});
  EXPECT_EQ(mounts.Serve("/").status, 404);
  EXPECT_EQ(mounts.Serve("/sdk/tessera-client.js").body, "sdk");
}

}  // namespace
}  // namespace tessera::server
