// PendingInputs and the FRAME header peek (v1_inputs.h).
#include "net/client/v1_inputs.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "net/protocol_v1.h"

namespace tessera::net::client {
namespace {

using TimePoint = PendingInputs::TimePoint;

TimePoint At(int ms) { return TimePoint(std::chrono::milliseconds(ms)); }

TEST(PendingInputsTest, AnswersEachInputOnce) {
  PendingInputs p;
  EXPECT_EQ(p.Sent(At(1)), 1u);
  EXPECT_EQ(p.Sent(At(2)), 2u);
  EXPECT_EQ(p.Sent(At(3)), 3u);
  EXPECT_EQ(p.count(), 3u);
  EXPECT_EQ(p.Answer(2), At(2));
  EXPECT_EQ(p.Answer(2), std::nullopt) << "a second answer";
  EXPECT_EQ(p.Answer(0), std::nullopt) << "never sent";
  EXPECT_EQ(p.Answer(4), std::nullopt) << "not sent yet";
  EXPECT_EQ(p.Answer(1), At(1));
  EXPECT_EQ(p.Answer(1), std::nullopt);
  EXPECT_EQ(p.count(), 1u);
  EXPECT_EQ(p.Answer(3), At(3));
  EXPECT_EQ(p.count(), 0u);
  EXPECT_EQ(p.next_seq(), 4u);
}

TEST(PendingInputsTest, FrameAcksAnswerEverythingUpToLastSeq) {
  PendingInputs p;
  for (int i = 1; i <= 5; ++i) p.Sent(At(i));
  ASSERT_TRUE(p.Answer(2).has_value());  // a REJECT before the FRAME
  std::vector<uint64_t> answered;
  p.AnswerUpTo(4, [&](uint64_t seq, TimePoint at) {
    answered.push_back(seq);
    EXPECT_EQ(at, At(static_cast<int>(seq)));
  });
  EXPECT_EQ(answered, (std::vector<uint64_t>{1, 3, 4}));
  EXPECT_EQ(p.count(), 1u);
  p.AnswerUpTo(4, [&](uint64_t, TimePoint) { ADD_FAILURE() << "again"; });
  EXPECT_EQ(p.Answer(4), std::nullopt);
  EXPECT_EQ(p.Abandon(), 1u);
  EXPECT_EQ(p.count(), 0u);
  EXPECT_EQ(p.Answer(5), std::nullopt) << "abandoned";
  EXPECT_EQ(p.Sent(At(6)), 6u) << "numbering goes on";
  EXPECT_EQ(p.Answer(6), At(6));
}

TEST(FramePeekTest, ReadsTheHeaderOnly) {
  const std::string frame = v1::EncodeFrameHeader(12, 34, 3) + "abc";
  const auto* p = reinterpret_cast<const uint8_t*>(frame.data());
  EXPECT_TRUE(IsFrame(p, frame.size()));
  EXPECT_EQ(FrameLastSeq(p, frame.size()), 34u);
  EXPECT_EQ(FrameLastSeq(p, 2), std::nullopt) << "cut short";
  const std::string ack = v1::EncodeAck(5);
  EXPECT_FALSE(
      IsFrame(reinterpret_cast<const uint8_t*>(ack.data()), ack.size()));
  EXPECT_FALSE(IsFrame(p, 1));
}

}  // namespace
}  // namespace tessera::net::client
