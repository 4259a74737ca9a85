#include "server/request_target.h"

#include <gtest/gtest.h>

namespace tessera::server {
namespace {

TEST(ParseQueryTest, DecodesNamesAndValues) {
  auto q = ParseQuery(
      "/api/compute/runs?module=world-sim&success=false&"
      "flowId=a%2Bb&note=two+words&flag");
  ASSERT_TRUE(q.has_value());
  EXPECT_EQ(q->at("module"), "world-sim");
  EXPECT_EQ(q->at("success"), "false");
  EXPECT_EQ(q->at("flowId"), "a+b");
  EXPECT_EQ(q->at("note"), "two words");
  EXPECT_EQ(q->at("flag"), "");
  EXPECT_EQ(q->size(), 5u);
}

TEST(ParseQueryTest, NoQueryIsEmptyAndBadOnesAreRefused) {
  ASSERT_TRUE(ParseQuery("/api/compute/runs").has_value());
  EXPECT_TRUE(ParseQuery("/api/compute/runs")->empty());
  EXPECT_TRUE(ParseQuery("/x?&&")->empty());
  EXPECT_FALSE(ParseQuery("/x?a=%zz").has_value());
  EXPECT_FALSE(ParseQuery("/x?a=1&a=2").has_value());
  EXPECT_FALSE(ParseQuery("/x?=1").has_value());
}

}  // namespace
}  // namespace tessera::server
