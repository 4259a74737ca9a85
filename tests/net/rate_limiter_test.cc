// TokenBucket, PercentDecode and close-reason truncation: pure helpers of
// the server.
#include "net/rate_limiter.h"

#include <gtest/gtest.h>

#include "common/text.h"
#include "net/http_session.h"
#include "net/ws_connection.h"

namespace tessera::net {
namespace {

constexpr int64_t kSecond = 1'000'000;

TEST(TokenBucketTest, StartsFullAndEmptiesAfterBurst) {
  TokenBucket bucket(100, 200, 0);
  for (int i = 0; i < 200; ++i) EXPECT_TRUE(bucket.TryTake(0)) << i;
  EXPECT_FALSE(bucket.TryTake(0));
  EXPECT_FALSE(bucket.TryTake(0));
}

TEST(TokenBucketTest, RefillsAtTheRate) {
  TokenBucket bucket(100, 200, 0);
  for (int i = 0; i < 200; ++i) ASSERT_TRUE(bucket.TryTake(0));
  // 100/s: one token every 10 ms.
  EXPECT_FALSE(bucket.TryTake(9'000));
  EXPECT_TRUE(bucket.TryTake(10'000));
  EXPECT_FALSE(bucket.TryTake(10'000));
  // Half a second later: 50 tokens.
  int taken = 0;
  while (bucket.TryTake(510'000)) ++taken;
  EXPECT_EQ(taken, 50);
}

TEST(TokenBucketTest, NeverExceedsBurst) {
  TokenBucket bucket(100, 5, 0);
  int taken = 0;
  while (bucket.TryTake(3600 * kSecond)) ++taken;
  EXPECT_EQ(taken, 5);
}

TEST(TokenBucketTest, TimeGoingBackwardsAddsNothing) {
  TokenBucket bucket(1000, 1, 10 * kSecond);
  EXPECT_TRUE(bucket.TryTake(10 * kSecond));
  EXPECT_FALSE(bucket.TryTake(5 * kSecond));
  EXPECT_FALSE(bucket.TryTake(10 * kSecond));
  EXPECT_TRUE(bucket.TryTake(10 * kSecond + 1000));
}

TEST(TokenBucketTest, SteadyRateWithinLimitIsNeverRefused) {
  TokenBucket bucket(100, 200, 0);
  // 99 inputs a second for a minute.
  for (int i = 0; i < 99 * 60; ++i) {
    ASSERT_TRUE(bucket.TryTake(static_cast<int64_t>(i) * kSecond / 99)) << i;
  }
}

TEST(PercentDecodeTest, DecodesAndRefusesMalformed) {
  std::string out;
  EXPECT_TRUE(PercentDecode("room%2F1%20a", &out));
  EXPECT_EQ(out, "room/1 a");
  EXPECT_TRUE(PercentDecode("plain", &out));
  EXPECT_EQ(out, "plain");
  EXPECT_TRUE(PercentDecode("%e2%82%AC", &out));
  EXPECT_EQ(out, "\xe2\x82\xac");
  EXPECT_FALSE(PercentDecode("bad%2", &out));
  EXPECT_FALSE(PercentDecode("bad%", &out));
  EXPECT_FALSE(PercentDecode("bad%zz", &out));
}

TEST(CloseReasonTest, KeepsShortAndCutsOnCharacterBoundary) {
  EXPECT_EQ(Utf8Prefix("short", kMaxCloseReasonBytes), "short");
  std::string ascii(200, 'a');
  EXPECT_EQ(Utf8Prefix(ascii, kMaxCloseReasonBytes).size(), 123u);
  // 122 ASCII bytes then a 3-byte character straddling the limit.
  std::string text = std::string(122, 'a') + "\xe2\x82\xac" + "tail";
  EXPECT_EQ(Utf8Prefix(text, kMaxCloseReasonBytes), std::string(122, 'a'));
}

}  // namespace
}  // namespace tessera::net
