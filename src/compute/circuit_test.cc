#include "compute/circuit.h"

#include <gtest/gtest.h>

#include "common/clock.h"

namespace tessera::compute {
namespace {

using Admit = Circuit::Admit;

constexpr int64_t kStartUs = 1'700'000'000'000'000;  // a unix time in us

class CircuitTest : public ::testing::Test {
 protected:
  int64_t Now() const { return clock_.UnixNowMs(); }
  void AdvanceMs(int64_t ms) { clock_.Advance(ms * 1000); }
  // One whole run: admitted, then its outcome. Returns the circuit action.
  std::string Run(Circuit& c, bool success) {
    EXPECT_EQ(c.Before(Now()), Admit::kRun);
    return c.After(success, Now());
  }
  // Fails `n` closed runs, returning the last run's action.
  std::string FailTimes(Circuit& c, int n) {
    std::string action;
    for (int i = 0; i < n; ++i) action = Run(c, false);
    return action;
  }

  FakeWallClock clock_{kStartUs};
};

TEST_F(CircuitTest, StartsClosedAndRunsEverything) {
  Circuit c(3, 1000);
  EXPECT_EQ(c.state(), CircuitState::kClosed);
  EXPECT_EQ(c.consecutive_failures(), 0);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(Run(c, true), "");
  EXPECT_EQ(c.state(), CircuitState::kClosed);
}

TEST_F(CircuitTest, OpensAfterThresholdConsecutiveFailures) {
  Circuit c(3, 1000);
  EXPECT_EQ(FailTimes(c, 2), "");
  EXPECT_EQ(c.state(), CircuitState::kClosed);
  EXPECT_EQ(c.consecutive_failures(), 2);
  AdvanceMs(5);
  EXPECT_EQ(Run(c, false), "opened");
  EXPECT_EQ(c.state(), CircuitState::kOpen);
  EXPECT_EQ(c.consecutive_failures(), 3);
  EXPECT_EQ(c.opened_ms(), Now());
  EXPECT_EQ(c.probe_at_ms(), Now() + 1000);
}

TEST_F(CircuitTest, SuccessResetsTheConsecutiveCount) {
  Circuit c(3, 1000);
  FailTimes(c, 2);
  EXPECT_EQ(Run(c, true), "");
  EXPECT_EQ(c.consecutive_failures(), 0);
  EXPECT_EQ(FailTimes(c, 2), "");
  EXPECT_EQ(c.state(), CircuitState::kClosed);
  EXPECT_EQ(Run(c, false), "opened");
}

TEST_F(CircuitTest, OpenRefusesUntilTheCooldownEnds) {
  Circuit c(1, 1000);
  EXPECT_EQ(Run(c, false), "opened");
  EXPECT_EQ(c.Before(Now()), Admit::kRefused);
  AdvanceMs(999);
  EXPECT_EQ(c.Before(Now()), Admit::kRefused);
  EXPECT_EQ(c.state(), CircuitState::kOpen);
  AdvanceMs(1);
  EXPECT_EQ(c.Before(Now()), Admit::kProbe);
  EXPECT_EQ(c.state(), CircuitState::kHalfOpen);
}

TEST_F(CircuitTest, RefusesOtherRunsWhileTheProbeRuns) {
  Circuit c(1, 1000);
  Run(c, false);
  AdvanceMs(1000);
  ASSERT_EQ(c.Before(Now()), Admit::kProbe);
  EXPECT_EQ(c.Before(Now()), Admit::kRefused);
  AdvanceMs(60'000);  // however long the probe takes
  EXPECT_EQ(c.Before(Now()), Admit::kRefused);
  EXPECT_EQ(c.state(), CircuitState::kHalfOpen);
}

TEST_F(CircuitTest, ProbeSuccessCloses) {
  Circuit c(2, 1000);
  FailTimes(c, 2);
  AdvanceMs(1500);
  ASSERT_EQ(c.Before(Now()), Admit::kProbe);
  EXPECT_EQ(c.After(true, Now()), "closed");
  EXPECT_EQ(c.state(), CircuitState::kClosed);
  EXPECT_EQ(c.consecutive_failures(), 0);
  EXPECT_EQ(c.Before(Now()), Admit::kRun);
  // Closed again for real: it takes the whole threshold to reopen.
  c.After(false, Now());
  EXPECT_EQ(c.state(), CircuitState::kClosed);
}

TEST_F(CircuitTest, ProbeFailureReopensForAnotherCooldown) {
  Circuit c(2, 1000);
  FailTimes(c, 2);
  AdvanceMs(1000);
  ASSERT_EQ(c.Before(Now()), Admit::kProbe);
  AdvanceMs(30);  // the probe ran 30 ms
  EXPECT_EQ(c.After(false, Now()), "reopened");
  EXPECT_EQ(c.state(), CircuitState::kOpen);
  EXPECT_EQ(c.consecutive_failures(), 3);
  EXPECT_EQ(c.opened_ms(), Now());
  AdvanceMs(999);
  EXPECT_EQ(c.Before(Now()), Admit::kRefused);
  AdvanceMs(1);
  ASSERT_EQ(c.Before(Now()), Admit::kProbe);
  EXPECT_EQ(c.After(true, Now()), "closed");
}

TEST_F(CircuitTest, RunsEndingWhileOpenDoNotCloseIt) {
  // Two runs admitted while closed; the first failure opens the circuit,
  // the second run's success afterwards leaves it open.
  Circuit c(1, 1000);
  ASSERT_EQ(c.Before(Now()), Admit::kRun);
  ASSERT_EQ(c.Before(Now()), Admit::kRun);
  EXPECT_EQ(c.After(false, Now()), "opened");
  EXPECT_EQ(c.After(true, Now()), "");
  EXPECT_EQ(c.state(), CircuitState::kOpen);
  EXPECT_EQ(c.consecutive_failures(), 1);
  // A late failure counts but does not move the cooldown.
  const int64_t opened = c.opened_ms();
  AdvanceMs(10);
  EXPECT_EQ(c.After(false, Now()), "");
  EXPECT_EQ(c.consecutive_failures(), 2);
  EXPECT_EQ(c.opened_ms(), opened);
}

TEST_F(CircuitTest, ResetClosesFromEveryState) {
  Circuit c(1, 1000);
  Run(c, false);
  c.Reset();
  EXPECT_EQ(c.state(), CircuitState::kClosed);
  EXPECT_EQ(c.consecutive_failures(), 0);
  EXPECT_EQ(c.opened_ms(), 0);
  EXPECT_EQ(c.Before(Now()), Admit::kRun);
  c.After(false, Now());
  AdvanceMs(1000);
  ASSERT_EQ(c.Before(Now()), Admit::kProbe);
  c.Reset();  // re-enabled during the probe
  EXPECT_EQ(c.state(), CircuitState::kClosed);
  EXPECT_EQ(c.Before(Now()), Admit::kRun);
  FailTimes(c, 1);  // closed with a failure count: Reset clears it too
  c.Reset();
  EXPECT_EQ(c.consecutive_failures(), 0);
}

TEST_F(CircuitTest, LoweringTheThresholdOpensOnTheNextFailure) {
  Circuit c(5, 1000);
  FailTimes(c, 3);
  c.SetLimits(2, 1000);
  EXPECT_EQ(c.state(), CircuitState::kClosed);  // no run, no change
  EXPECT_EQ(Run(c, false), "opened");
  EXPECT_EQ(c.consecutive_failures(), 4);
}

TEST_F(CircuitTest, RaisingTheThresholdKeepsItClosedLonger) {
  Circuit c(2, 1000);
  FailTimes(c, 1);
  c.SetLimits(4, 1000);
  EXPECT_EQ(FailTimes(c, 2), "");
  EXPECT_EQ(Run(c, false), "opened");
}

TEST_F(CircuitTest, CooldownChangesApplyToTheCurrentOpening) {
  Circuit c(1, 10'000);
  Run(c, false);
  const int64_t opened = c.opened_ms();
  AdvanceMs(2000);
  EXPECT_EQ(c.Before(Now()), Admit::kRefused);
  c.SetLimits(1, 2000);
  EXPECT_EQ(c.probe_at_ms(), opened + 2000);
  EXPECT_EQ(c.Before(Now()), Admit::kProbe);
  EXPECT_EQ(c.After(false, Now()), "reopened");
  c.SetLimits(1, 60'000);
  AdvanceMs(59'999);
  EXPECT_EQ(c.Before(Now()), Admit::kRefused);
  AdvanceMs(1);
  EXPECT_EQ(c.Before(Now()), Admit::kProbe);
}

TEST_F(CircuitTest, LimitsBelowTheMinimumsAreRaised) {
  Circuit c(0, -5);  // threshold 1, cooldown 0
  EXPECT_EQ(Run(c, false), "opened");
  EXPECT_EQ(c.probe_at_ms(), Now());
  EXPECT_EQ(c.Before(Now()), Admit::kProbe);
}

TEST_F(CircuitTest, RestorePicksUpAStoredState) {
  Circuit c(3, 1000);
  c.Restore(CircuitState::kOpen, 3, Now() - 400);
  EXPECT_EQ(c.state(), CircuitState::kOpen);
  EXPECT_EQ(c.consecutive_failures(), 3);
  EXPECT_EQ(c.Before(Now()), Admit::kRefused);
  AdvanceMs(600);
  EXPECT_EQ(c.Before(Now()), Admit::kProbe);

  Circuit closed(3, 1000);
  closed.Restore(CircuitState::kClosed, 2, 0);
  EXPECT_EQ(Run(closed, false), "opened");  // the stored count carries on
}

TEST_F(CircuitTest, RestoredHalfOpenIsAProbeThatNeverReported) {
  Circuit c(3, 1000);
  c.Restore(CircuitState::kHalfOpen, 4, Now() - 5000);
  EXPECT_EQ(c.state(), CircuitState::kOpen);
  ASSERT_EQ(c.Before(Now()), Admit::kProbe);
  EXPECT_EQ(c.After(true, Now()), "closed");
  EXPECT_EQ(c.consecutive_failures(), 0);
}

TEST_F(CircuitTest, RestoreClampsANegativeCount) {
  Circuit c(2, 1000);
  c.Restore(CircuitState::kClosed, -7, 0);
  EXPECT_EQ(c.consecutive_failures(), 0);
  EXPECT_EQ(Run(c, false), "");
  EXPECT_EQ(Run(c, false), "opened");
}

}  // namespace
}  // namespace tessera::compute
