// InputGate and ShardStream: a connection's ingress rules on a FakeClock,
// and what it sends of a tick (no sockets, no sleeps).
#include "net/input_gate.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <span>
#include <variant>

#include "common/clock.h"
#include "net/connections.h"
#include "net/protocol_v1.h"
#include "net/shard_stream.h"

namespace tessera::net {
namespace {

using ::testing::ElementsAre;

TEST(InputGateTest, TheBucketRefillsWithTheInjectedClock) {
  FakeClock clock(1'000'000);
  InputGate gate(/*rate_per_sec=*/10, /*burst=*/2, /*max_strikes=*/0, clock);
  EXPECT_TRUE(gate.Check(1).accept);
  EXPECT_TRUE(gate.Check(2).accept);
  InputVerdict refused = gate.Check(3);
  EXPECT_FALSE(refused.accept);
  EXPECT_EQ(refused.reject, "rate limited");
  EXPECT_EQ(refused.close_code, 0);  // no strike limit
  clock.Advance(99'999);             // not quite one token (10/s)
  EXPECT_FALSE(gate.Check(4).accept);
  clock.Advance(1);
  EXPECT_TRUE(gate.Check(5).accept);
  clock.Advance(10'000'000);  // refills to the burst, not beyond
  EXPECT_TRUE(gate.Check(6).accept);
  EXPECT_TRUE(gate.Check(7).accept);
  EXPECT_FALSE(gate.Check(8).accept);
  EXPECT_EQ(gate.strikes(), 3);
}

TEST(InputGateTest, TimeGoingBackwardsAddsNothing) {
  FakeClock clock(5'000'000);
  InputGate gate(1000, 1, 0, clock);
  EXPECT_TRUE(gate.Check(1).accept);
  clock.Set(1'000'000);
  EXPECT_FALSE(gate.Check(2).accept);
}

TEST(InputGateTest, StrikesCloseTheConnection) {
  FakeClock clock;
  InputGate gate(/*rate_per_sec=*/0, /*burst=*/1, /*max_strikes=*/3, clock);
  EXPECT_TRUE(gate.Check(1).accept);
  EXPECT_EQ(gate.Check(2).close_code, 0);
  EXPECT_EQ(gate.Check(3).close_code, 0);
  InputVerdict third = gate.Check(4);
  EXPECT_EQ(third.reject, "rate limited");  // answered, then closed
  EXPECT_EQ(third.close_code, kCloseRateLimited);
  EXPECT_EQ(third.close_reason, "too many inputs: 3 strikes");
}

TEST(InputGateTest, SeqsMustIncreaseAndStayWithin2To53) {
  FakeClock clock;
  InputGate gate(100, 100, 0, clock);
  EXPECT_TRUE(gate.Check(5).accept);
  InputVerdict again = gate.Check(5);
  EXPECT_FALSE(again.accept);
  EXPECT_TRUE(again.reject.empty());
  EXPECT_EQ(again.close_code, kCloseBadFrame);
  EXPECT_EQ(again.close_reason, "input seq 5 is not above the previous 5");
  InputVerdict huge = gate.Check(kMaxInputSeq + 1);
  EXPECT_EQ(huge.close_code, kCloseBadFrame);
  EXPECT_EQ(huge.close_reason, "input seq 9007199254740993 is above 2^53");
  EXPECT_TRUE(gate.Check(kMaxInputSeq).accept);
}

// ---- ShardStream ----

v1::ServerMessage Decode(const Outgoing& o) {
  std::string bytes;
  for (std::string_view p : o.Parts()) bytes += p;
  auto decoded = v1::DecodeServerMessage(std::span<const uint8_t>(
      reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
  EXPECT_TRUE(decoded.ok()) << decoded.status().ToString();
  return decoded.ok() ? *decoded : v1::ServerMessage();
}

v1::ServerMessage Decode(const std::string& message) {
  Outgoing o;
  o.head = message;
  return Decode(o);
}

shard::InputResult Result(uint64_t id, bool accepted, std::string why = "") {
  shard::InputResult r;
  r.subscriber = "alice";
  r.seq = id;
  r.accepted = accepted;
  r.rejection = std::move(why);
  return r;
}

TEST(ShardStreamTest, ResultsFindTheirConnectionAndTheFrameAcksThem) {
  ShardStream stream;
  stream.Submitted(/*input_id=*/100, /*seq=*/1);
  stream.Submitted(101, 2);
  std::vector<shard::InputResult> results = {
      Result(100, true), Result(55, true) /* another connection's */,
      Result(101, false, "no")};
  std::vector<SendQueue::Reply> replies;
  auto snapshot = std::make_shared<const std::string>("snap");
  Outgoing frame = stream.Frame(7, snapshot, &results, &replies);
  EXPECT_TRUE(frame.is_frame);
  EXPECT_EQ(frame.skip, Outgoing::Skip::kSupersede);
  EXPECT_EQ(frame.body.get(), snapshot.get());  // shared, not copied
  auto decoded = std::get<v1::Frame>(Decode(frame));
  EXPECT_EQ(decoded.tick, 7u);
  EXPECT_EQ(decoded.last_seq, 2u);
  ASSERT_EQ(replies.size(), 2u);
  EXPECT_TRUE(replies[0].ack);
  EXPECT_EQ(std::get<v1::Ack>(Decode(replies[0].message)).seq, 1u);
  EXPECT_FALSE(replies[1].ack);
  EXPECT_EQ(std::get<v1::Reject>(Decode(replies[1].message)).error, "no");
  // Each result is answered once.
  replies.clear();
  stream.Frame(8, snapshot, &results, &replies);
  EXPECT_TRUE(replies.empty());
}

TEST(ShardStreamTest, ReplicationStartsAtABaselineAndAfterAResync) {
  ShardStream stream;
  std::vector<SendQueue::Reply> replies;
  auto world = std::make_shared<const std::string>("world");
  auto delta = std::make_shared<const std::string>("d");
  EXPECT_FALSE(
      stream.View(1, true, world, delta, false, nullptr, &replies).is_frame);
  Outgoing base = stream.View(2, true, world, delta, true, nullptr, &replies);
  ASSERT_TRUE(base.is_frame);
  EXPECT_EQ(base.skip, Outgoing::Skip::kResync);
  EXPECT_EQ(std::get<v1::Frame>(Decode(base)).snapshot, "world");
  // The same snapshot buffer is not sent again.
  Outgoing next = stream.View(3, true, world, delta, false, nullptr, &replies);
  EXPECT_TRUE(std::get<v1::Frame>(Decode(next)).snapshot_nil);
  stream.Resynced();
  EXPECT_FALSE(
      stream.View(4, true, world, delta, false, nullptr, &replies).is_frame);
  Outgoing again = stream.View(5, true, world, delta, true, nullptr, &replies);
  EXPECT_EQ(std::get<v1::Frame>(Decode(again)).snapshot, "world");
}

TEST(ShardStreamTest, InterestFramesAreNeverSkippedAndNullViewsSendNothing) {
  ShardStream stream;
  std::vector<SendQueue::Reply> replies;
  auto mine = std::make_shared<const std::string>("mine");
  Outgoing f = stream.View(1, false, mine, nullptr, false, nullptr, &replies);
  EXPECT_TRUE(f.is_frame);
  EXPECT_EQ(f.skip, Outgoing::Skip::kNever);
  stream.Submitted(9, 3);
  std::vector<shard::InputResult> results = {Result(9, true)};
  Outgoing none =
      stream.View(2, false, nullptr, nullptr, false, &results, &replies);
  EXPECT_FALSE(none.is_frame);
  ASSERT_EQ(replies.size(), 1u);
  EXPECT_EQ(stream.last_applied_seq(), 3u);
}

TEST(ShardStreamTest, AForgottenInputGetsNoReply) {
  ShardStream stream;
  stream.Submitted(1, 1);
  stream.Forget(1);
  std::vector<shard::InputResult> results = {Result(1, true)};
  std::vector<SendQueue::Reply> replies;
  stream.Frame(1, std::make_shared<const std::string>(""), &results, &replies);
  EXPECT_TRUE(replies.empty());
  EXPECT_EQ(stream.last_applied_seq(), 0u);
}

}  // namespace
}  // namespace tessera::net
