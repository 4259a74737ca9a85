#include "loadtest/transfer_tracker.h"

#include <gtest/gtest.h>

namespace tessera::loadtest {
namespace {

using Clock = TransferTracker::Clock;
using std::chrono::milliseconds;

const Clock::time_point kT0{};

TEST(TransferTrackerTest, MoveStartsAtTheLastAnswerAndEndsAtTheFirstFrame) {
  TransferTracker t;
  EXPECT_FALSE(t.Frame(kT0).has_value()) << "no move yet";
  t.Answered(kT0 + milliseconds(10));
  t.Answered(kT0 + milliseconds(30));  // the moving input, sent last
  ASSERT_TRUE(t.Transfer(kT0 + milliseconds(45)));
  EXPECT_TRUE(t.moving());
  std::optional<TransferTracker::Move> move = t.Frame(kT0 + milliseconds(100));
  ASSERT_TRUE(move.has_value());
  EXPECT_EQ(move->total, milliseconds(70));
  EXPECT_EQ(move->reconnect, milliseconds(55));
  EXPECT_FALSE(t.moving());
  EXPECT_FALSE(t.Frame(kT0 + milliseconds(150)).has_value())
      << "only the first FRAME ends the move";
}

TEST(TransferTrackerTest, WithoutAnAnswerTheMoveStartsAtTheTransfer) {
  TransferTracker t;
  t.Answered(kT0);
  ASSERT_TRUE(t.Transfer(kT0 + milliseconds(5)));
  t.Frame(kT0 + milliseconds(20));
  // The target's connection answered nothing before the next TRANSFER
  // (a move by the admin API): the source's old answer does not count.
  ASSERT_TRUE(t.Transfer(kT0 + milliseconds(500)));
  std::optional<TransferTracker::Move> move = t.Frame(kT0 + milliseconds(530));
  ASSERT_TRUE(move.has_value());
  EXPECT_EQ(move->total, milliseconds(30));
  EXPECT_EQ(move->reconnect, milliseconds(30));
}

TEST(TransferTrackerTest, TransfersWithoutAFrameInBetweenAreOneMove) {
  TransferTracker t;
  t.Answered(kT0);
  ASSERT_TRUE(t.Transfer(kT0 + milliseconds(10)));
  // The target answers HELLO with a TRANSFER of its own.
  ASSERT_TRUE(t.Transfer(kT0 + milliseconds(20)));
  std::optional<TransferTracker::Move> move = t.Frame(kT0 + milliseconds(50));
  ASSERT_TRUE(move.has_value());
  EXPECT_EQ(move->total, milliseconds(50));
  EXPECT_EQ(move->reconnect, milliseconds(30));
}

TEST(TransferTrackerTest, ALoopOfTransfersIsRefused) {
  TransferTracker t;
  for (int i = 0; i < TransferTracker::kMaxUnframedTransfers; ++i) {
    ASSERT_TRUE(t.Transfer(kT0 + milliseconds(i))) << i;
  }
  EXPECT_FALSE(t.Transfer(kT0 + milliseconds(100)));
  // A FRAME resets the count.
  ASSERT_TRUE(t.Frame(kT0 + milliseconds(200)).has_value());
  EXPECT_TRUE(t.Transfer(kT0 + milliseconds(300)));
}

}  // namespace
}  // namespace tessera::loadtest
