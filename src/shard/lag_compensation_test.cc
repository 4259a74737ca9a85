// Lag compensation on the host side of the ABI: the config and Rewind
// layouts and the round-trip bound.
#include "shard/lag_compensation.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "tessera/abi.h"

namespace tessera::shard {
namespace {

using ::testing::HasSubstr;

std::string Le(uint64_t v, int n) {
  std::string s;
  for (int i = 0; i < n; ++i) s.push_back(static_cast<char>(v >> (8 * i)));
  return s;
}
std::string F64(double v) {
  uint64_t bits;
  std::memcpy(&bits, &v, 8);
  return Le(bits, 8);
}

TEST(LagCompensationConfigTest, ParsesHistoryAndDelay) {
  Result<LagCompensationConfig> c = ParseLagCompensation(Le(10, 4) + Le(80, 4));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->history_ticks, 10u);
  EXPECT_EQ(c->max_view_delay_ms, 80u);
  // 0 is the default delay; 1 and 256 are the bounds of the history.
  c = ParseLagCompensation(Le(1, 4) + Le(0, 4));
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->max_view_delay_ms, abi::kDefaultMaxViewDelayMs);
  EXPECT_TRUE(ParseLagCompensation(Le(256, 4) + Le(0, 4)).ok());
}

TEST(LagCompensationConfigTest, RefusesOtherSizesAndHistories) {
  EXPECT_THAT(ParseLagCompensation(Le(10, 4)).status().message(),
              HasSubstr("must be 8 bytes"));
  EXPECT_THAT(ParseLagCompensation(Le(10, 4) + Le(0, 5)).status().message(),
              HasSubstr("got 9"));
  EXPECT_THAT(ParseLagCompensation(Le(0, 4) + Le(0, 4)).status().message(),
              HasSubstr("history_ticks must be 1..256, got 0"));
  EXPECT_THAT(ParseLagCompensation(Le(257, 4) + Le(0, 4)).status().message(),
              HasSubstr("history_ticks must be 1..256, got 257"));
}

TEST(LagCompensationConfigTest, RoundTripBoundsHowFarBack) {
  LagCompensationConfig c{10, 250};
  // The anchor: RTT 100 ms, 250 ms of view delay, 50 ms ticks: 7 ticks.
  EXPECT_EQ(MaxBackTicks(c, 100'000, 20), 7.0);
  EXPECT_EQ(MaxBackTicks(c, std::nullopt, 20), std::nullopt);
  c.max_view_delay_ms = 50;
  EXPECT_EQ(MaxBackTicks(c, 25'000, 20), 1.5);  // no rounding
  EXPECT_EQ(MaxBackTicks(c, -5, 20), 1.0);      // a negative RTT counts as 0
  EXPECT_EQ(MaxBackTicks(c, 50'000, 10), 1.0);  // 100 ms ticks
}

TEST(LagCompensationConfigTest, EncodesTheRewindLayout) {
  replication::DrawnPicture p;
  p.view_tick = 12.25;
  p.now_tick = 14;
  p.entities = {{3, 1.5, -2, 0}, {1ull << 40, 0.25, 0.5, 8}};
  EXPECT_EQ(EncodeRewind(p),
            F64(12.25) + Le(14, 8) + Le(2, 4) + Le(3, 8) + F64(1.5) + F64(-2) +
                F64(0) + Le(1ull << 40, 8) + F64(0.25) + F64(0.5) + F64(8));
  replication::DrawnPicture empty;
  empty.view_tick = 7;
  empty.now_tick = 7;
  EXPECT_EQ(EncodeRewind(empty), F64(7) + Le(7, 8) + Le(0, 4));
}

}  // namespace
}  // namespace tessera::shard
