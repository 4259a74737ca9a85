#include "compute/egress_budget.h"

#include <gtest/gtest.h>

#include "common/clock.h"

namespace tessera::compute {
namespace {

// 2023-11-14T22:13:00Z: a minute boundary.
constexpr int64_t kMinuteStartMs = 1'699'999'980'000;

class EgressBudgetTest : public ::testing::Test {
 protected:
  int64_t Now() const { return clock_.UnixNowMs(); }
  void AdvanceMs(int64_t ms) { clock_.Advance(ms * 1000); }
  FakeWallClock clock_{kMinuteStartMs * 1000};
};

TEST_F(EgressBudgetTest, ChargesUntilTheMessageBudgetIsUsed) {
  EgressBudget budget(3, 1000);
  std::string why;
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(budget.Charge(Now(), 10, &why));
  EXPECT_EQ(budget.msgs_this_minute(), 3);
  EXPECT_EQ(budget.bytes_this_minute(), 30);
  AdvanceMs(48'000);
  EXPECT_FALSE(budget.Charge(Now(), 10, &why));
  EXPECT_EQ(why,
            "egress budget: 3 messages per minute used; next minute starts in "
            "12 s");
  EXPECT_EQ(budget.msgs_this_minute(), 3);  // nothing charged
  EXPECT_EQ(budget.bytes_this_minute(), 30);
}

TEST_F(EgressBudgetTest, ChargesUntilTheByteBudgetIsUsed) {
  EgressBudget budget(100, 1000);
  std::string why;
  EXPECT_TRUE(budget.Charge(Now(), 990, &why));
  EXPECT_TRUE(budget.Charge(Now(), 10, &why));  // exactly the budget
  AdvanceMs(59'001);
  EXPECT_FALSE(budget.Charge(Now(), 1, &why));
  EXPECT_EQ(why,
            "egress budget: 1000 of 1000 bytes per minute used, this message "
            "needs 1; next minute starts in 1 s");
  EXPECT_EQ(budget.msgs_this_minute(), 2);
}

TEST_F(EgressBudgetTest, AMessageTooBigForTheRestIsRefusedButSmallerPass) {
  EgressBudget budget(100, 1000);
  std::string why;
  EXPECT_TRUE(budget.Charge(Now(), 900, &why));
  EXPECT_FALSE(budget.Charge(Now(), 200, &why));
  EXPECT_NE(why.find("900 of 1000 bytes"), std::string::npos) << why;
  EXPECT_NE(why.find("needs 200"), std::string::npos) << why;
  EXPECT_TRUE(budget.Charge(Now(), 100, &why));
}

TEST_F(EgressBudgetTest, TheNextCalendarMinuteStartsAfresh) {
  EgressBudget budget(2, 100);
  std::string why;
  AdvanceMs(59'000);  // late in the minute
  EXPECT_TRUE(budget.Charge(Now(), 50, &why));
  EXPECT_TRUE(budget.Charge(Now(), 50, &why));
  EXPECT_FALSE(budget.Charge(Now(), 1, &why));
  AdvanceMs(999);  // 59.999 s: still the same minute
  EXPECT_FALSE(budget.Charge(Now(), 1, &why));
  EXPECT_EQ(why,
            "egress budget: 2 messages per minute used; next minute starts in "
            "1 s");
  AdvanceMs(1);  // the boundary: not a sliding window of 60 s
  EXPECT_TRUE(budget.Charge(Now(), 50, &why));
  EXPECT_EQ(budget.msgs_this_minute(), 1);
  EXPECT_EQ(budget.bytes_this_minute(), 50);
}

TEST_F(EgressBudgetTest, AnIdleMinuteDoesNotCarryOver) {
  EgressBudget budget(1, 100);
  std::string why;
  EXPECT_TRUE(budget.Charge(Now(), 1, &why));
  AdvanceMs(10 * 60'000 + 5);
  EXPECT_TRUE(budget.Charge(Now(), 1, &why));
  EXPECT_FALSE(budget.Charge(Now(), 1, &why));
  EXPECT_NE(why.find("next minute starts in 60 s"), std::string::npos) << why;
}

TEST_F(EgressBudgetTest, ZeroBudgetsSayWaitingDoesNotHelp) {
  EgressBudget none(0, 1000);
  std::string why;
  EXPECT_FALSE(none.Charge(Now(), 1, &why));
  EXPECT_EQ(why,
            "egress budget: 0 messages per minute used; maxEgressMsgsPerMin is "
            "0, so no minute allows one");
  EgressBudget small(10, 100);
  EXPECT_FALSE(small.Charge(Now(), 101, &why));
  EXPECT_EQ(why,
            "egress budget: 0 of 100 bytes per minute used, this message needs "
            "101; the message is larger than maxEgressBytesPerMin");
  EXPECT_TRUE(small.Charge(Now(), 0, &why));  // an empty payload still counts
  EXPECT_EQ(small.msgs_this_minute(), 1);
}

TEST_F(EgressBudgetTest, SetLimitsAppliesToTheCurrentMinute) {
  EgressBudget budget(10, 1000);
  std::string why;
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(budget.Charge(Now(), 1, &why));
  budget.SetLimits(5, 1000);
  EXPECT_FALSE(budget.Charge(Now(), 1, &why));
  budget.SetLimits(6, 1000);
  EXPECT_TRUE(budget.Charge(Now(), 1, &why));
}

TEST_F(EgressBudgetTest, RefusalWithoutWhyStillRefuses) {
  EgressBudget budget(1, 10);
  EXPECT_TRUE(budget.Charge(Now(), 1, nullptr));
  EXPECT_FALSE(budget.Charge(Now(), 1, nullptr));
}

TEST_F(EgressBudgetTest, MinutesBefore1970AreCalendarMinutesToo) {
  EgressBudget budget(1, 10);
  std::string why;
  EXPECT_TRUE(budget.Charge(-30'000, 1, &why));  // minute [-60 s, 0)
  EXPECT_FALSE(budget.Charge(-1, 1, &why));
  EXPECT_NE(why.find("next minute starts in 1 s"), std::string::npos) << why;
  EXPECT_TRUE(budget.Charge(0, 1, &why));
}

}  // namespace
}  // namespace tessera::compute
