// RttEstimator on a FakeClock: samples, the 1/8 smoothing, and the pongs it
// must ignore.
#include "net/rtt_estimator.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/clock.h"

namespace tessera::net {
namespace {

TEST(RttEstimatorTest, UnknownUntilAPongAnswersAPing) {
  FakeClock clock(5'000'000);
  RttEstimator rtt(clock);
  EXPECT_FALSE(rtt.srtt_us().has_value());
  const std::string ping = rtt.NextPing();
  EXPECT_LE(ping.size(), 125u);  // fits a control frame
  clock.Advance(40'000);
  EXPECT_FALSE(rtt.srtt_us().has_value());
  EXPECT_EQ(rtt.OnPong(ping), 40'000);
  EXPECT_EQ(rtt.srtt_us(), 40'000);  // the first sample as it is
  EXPECT_EQ(rtt.outstanding(), 0u);
}

TEST(RttEstimatorTest, LaterSamplesMoveAnEighthOfTheWay) {
  FakeClock clock;
  RttEstimator rtt(clock);
  std::string ping = rtt.NextPing();
  clock.Advance(100'000);
  ASSERT_EQ(rtt.OnPong(ping), 100'000);
  ping = rtt.NextPing();
  clock.Advance(180'000);
  EXPECT_EQ(rtt.OnPong(ping), 180'000);
  EXPECT_EQ(rtt.srtt_us(), 110'000);  // 100 + (180 - 100) / 8
  ping = rtt.NextPing();
  clock.Advance(30'000);
  EXPECT_EQ(rtt.OnPong(ping), 30'000);
  EXPECT_EQ(rtt.srtt_us(), 100'000);  // 110 + (30 - 110) / 8
}

TEST(RttEstimatorTest, PongsThatMatchNoOutstandingPingAreIgnored) {
  FakeClock clock;
  RttEstimator rtt(clock);
  const std::string ping = rtt.NextPing();
  clock.Advance(20'000);
  // Unsolicited or garbled pongs (a browser may send some; any peer can).
  for (const std::string& stray :
       {std::string(), std::string("rtt:"), std::string("rtt:2"),
        std::string("rtt:01"), std::string("rtt:1x"), std::string("rtt:-1"),
        std::string("rtt:+1"), std::string("RTT:1"), std::string("xrtt:1"),
        std::string("rtt:18446744073709551616"), std::string("\0\1", 2)}) {
    EXPECT_FALSE(rtt.OnPong(stray).has_value()) << stray;
  }
  EXPECT_FALSE(rtt.srtt_us().has_value());
  EXPECT_EQ(rtt.outstanding(), 1u);
  ASSERT_EQ(rtt.OnPong(ping), 20'000);
  // Its second answer (a duplicate) matches nothing any more.
  clock.Advance(500'000);
  EXPECT_FALSE(rtt.OnPong(ping).has_value());
  EXPECT_EQ(rtt.srtt_us(), 20'000);
}

TEST(RttEstimatorTest, APongForgetsThePingsBeforeIt) {
  FakeClock clock;
  RttEstimator rtt(clock);
  const std::string first = rtt.NextPing();
  clock.Advance(1'000'000);
  const std::string second = rtt.NextPing();
  clock.Advance(1'000'000);
  const std::string third = rtt.NextPing();
  clock.Advance(60'000);
  // The peer answered only the latest: its own round trip, not the oldest's.
  EXPECT_EQ(rtt.OnPong(second), 1'060'000);
  EXPECT_EQ(rtt.outstanding(), 1u);
  EXPECT_FALSE(rtt.OnPong(first).has_value());
  EXPECT_EQ(rtt.srtt_us(), 1'060'000);
  EXPECT_EQ(rtt.OnPong(third), 60'000);
}

TEST(RttEstimatorTest, RemembersABoundedNumberOfPings) {
  FakeClock clock;
  RttEstimator rtt(clock);
  std::vector<std::string> pings;
  for (size_t i = 0; i < RttEstimator::kMaxOutstanding + 3; ++i) {
    pings.push_back(rtt.NextPing());
    clock.Advance(1'000);
  }
  EXPECT_EQ(rtt.outstanding(), RttEstimator::kMaxOutstanding);
  // The three oldest were forgotten (a peer that never answers costs
  // nothing); the oldest remembered still counts.
  EXPECT_FALSE(rtt.OnPong(pings[2]).has_value());
  EXPECT_EQ(rtt.OnPong(pings[3]),
            static_cast<int64_t>(RttEstimator::kMaxOutstanding) * 1'000);
  // Every ping has its own payload.
  EXPECT_NE(pings[0], pings[1]);
}

}  // namespace
}  // namespace tessera::net
