// SendQueue: the slow-reader policy of a connection, driven by hand (no
// sockets, no clock, no sleeps): a "writer" takes what Next() names, and the
// tests decide when each write finishes.
#include "net/send_queue.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

namespace tessera::net {
namespace {

using ::testing::ElementsAre;
using Outcome = SendQueue::FrameOutcome;
using Reply = SendQueue::Reply;

// A frame named `name` (its body), of the given kind.
Outgoing Frame(const std::string& name,
               Outgoing::Skip skip = Outgoing::Skip::kSupersede) {
  Outgoing f;
  f.head = "F:";
  f.body = std::make_shared<const std::string>(name);
  f.is_frame = true;
  f.skip = skip;
  return f;
}
Outgoing Delta(const std::string& name) {
  return Frame(name, Outgoing::Skip::kResync);
}
Outgoing NoFrame() { return Outgoing(); }

// What a message reads as: head + parts.
std::string Text(const Outgoing& o) {
  if (o.is_close) return "close " + std::to_string(o.close_code) + " " + o.head;
  std::string s;
  for (std::string_view p : o.Parts()) s += p;
  return s;
}

std::vector<Reply> Replies(std::vector<std::pair<std::string, bool>> list) {
  std::vector<Reply> out;
  for (auto& [m, ack] : list) out.push_back(Reply{m, ack});
  return out;
}

// Writes (synchronously) everything waiting; returns it in order.
std::vector<std::string> Drain(SendQueue& q) {
  std::vector<std::string> out;
  while (const Outgoing* next = q.Next()) {
    out.push_back(Text(*next));
    q.Finished();
  }
  return out;
}

SendQueue::FramePush Push(SendQueue& q, Outgoing frame,
                          std::vector<Reply> replies = {}) {
  return q.PushFrame(std::move(frame), replies);
}

TEST(SendQueueTest, MessagesGoOutInOrderOneWriteAtATime) {
  SendQueue q(4);
  EXPECT_EQ(q.Next(), nullptr);
  EXPECT_FALSE(q.Push("a").has_value());
  EXPECT_FALSE(q.Push("b").has_value());
  const Outgoing& writing = q.Started();
  EXPECT_EQ(Text(writing), "a");
  EXPECT_TRUE(q.writing());
  EXPECT_EQ(q.Next(), nullptr);  // one write at a time
  EXPECT_EQ(q.size(), 2u);       // the one in flight counts
  q.Finished();
  EXPECT_THAT(Drain(q), ElementsAre("b"));
  EXPECT_EQ(q.size(), 0u);
}

TEST(SendQueueTest, UrgentMessageJumpsTheQueueAndOnlyTheLatestWaits) {
  SendQueue q(4);
  ASSERT_FALSE(q.Push("welcome").has_value());
  q.SetUrgent("pong1");
  q.SetUrgent("pong2");
  EXPECT_TRUE(q.next_is_urgent());
  EXPECT_EQ(Text(q.Started()), "pong2");
  q.SetUrgent("pong3");  // waits while pong2 is written
  EXPECT_EQ(q.Next(), nullptr);
  EXPECT_EQ(q.size(), 1u);  // urgent messages do not count
  q.Finished();
  EXPECT_THAT(Drain(q), ElementsAre("pong3", "welcome"));
}

TEST(SendQueueTest, CloseForgetsThePendingUrgentMessage) {
  SendQueue q(4);
  q.SetUrgent("pong");
  q.PushClose(1000, "bye", false);
  EXPECT_THAT(Drain(q), ElementsAre("close 1000 bye"));
}

TEST(SendQueueTest, RepliesFollowTheirFrameWithoutFrameAcks) {
  SendQueue q(4);
  auto r = Push(q, Frame("t1"), Replies({{"ack1", true}, {"rej2", false}}));
  EXPECT_EQ(r.outcome, Outcome::kQueued);
  EXPECT_EQ(q.queued_frames(), 1u);
  EXPECT_THAT(Drain(q), ElementsAre("F:t1", "ack1", "rej2"));
  EXPECT_EQ(q.queued_frames(), 0u);
}

TEST(SendQueueTest, WithFrameAcksRejectsGoFirstAndTheFrameCarriesTheAcks) {
  SendQueue q(4);
  q.set_frame_acks(true);
  Push(q, Frame("t1"), Replies({{"ack1", true}, {"rej2", false}}));
  // A tick without a frame for this connection sends its ACKs.
  Push(q, NoFrame(), Replies({{"ack3", true}}));
  EXPECT_THAT(Drain(q), ElementsAre("rej2", "F:t1", "ack3"));
}

TEST(SendQueueTest, ANewerSnapshotSupersedesTheUnsentOneInPlace) {
  SendQueue q(8);
  Push(q, Frame("t1"), Replies({{"ack1", true}}));
  auto r = Push(q, Frame("t2"), Replies({{"ack2", true}}));
  EXPECT_EQ(r.outcome, Outcome::kSuperseded);
  EXPECT_EQ(q.queued_frames(), 1u);
  // In place: ack1 still follows the frame, which is now t2.
  EXPECT_THAT(Drain(q), ElementsAre("F:t2", "ack1", "ack2"));
}

TEST(SendQueueTest, WithFrameAcksTheSupersedingFrameMovesAfterNewRejects) {
  SendQueue q(8);
  q.set_frame_acks(true);
  Push(q, Frame("t1"));
  auto r = Push(q, Frame("t2"), Replies({{"rej5", false}, {"ack6", true}}));
  EXPECT_EQ(r.outcome, Outcome::kSuperseded);
  // The REJECT must precede the frame whose last_seq covers it.
  EXPECT_THAT(Drain(q), ElementsAre("rej5", "F:t2"));
}

TEST(SendQueueTest, TheFrameBeingWrittenIsNeverSuperseded) {
  SendQueue q(8);
  Push(q, Frame("t1"));
  const Outgoing& writing = q.Started();
  auto r = Push(q, Frame("t2"));
  EXPECT_EQ(r.outcome, Outcome::kQueued);
  EXPECT_EQ(Text(writing), "F:t1");  // untouched
  EXPECT_EQ(Push(q, Frame("t3")).outcome, Outcome::kSuperseded);
  EXPECT_EQ(Text(writing), "F:t1");
  q.Finished();
  EXPECT_THAT(Drain(q), ElementsAre("F:t3"));
}

TEST(SendQueueTest, TooManySkipsWithoutAWrittenFrameIsTooSlow) {
  SendQueue q(3);
  Push(q, Frame("t1"));
  EXPECT_EQ(Push(q, Frame("t2")).outcome, Outcome::kSuperseded);
  EXPECT_EQ(Push(q, Frame("t3")).outcome, Outcome::kSuperseded);
  auto r = Push(q, Frame("t4"));
  EXPECT_EQ(r.outcome, Outcome::kTooSlow);
  EXPECT_TRUE(r.superseded);  // counted as skipped all the same
  EXPECT_EQ(r.reason, "too slow: 3 frames skipped without one written");
}

TEST(SendQueueTest, WritingAFrameResetsTheSkipCount) {
  SendQueue q(3);
  for (int round = 0; round < 5; ++round) {
    Push(q, Frame("a"));
    EXPECT_EQ(Push(q, Frame("b")).outcome, Outcome::kSuperseded);
    EXPECT_EQ(Push(q, Frame("c")).outcome, Outcome::kSuperseded);
    EXPECT_THAT(Drain(q), ElementsAre("F:c"));
  }
}

TEST(SendQueueTest, PerSubscriberSnapshotsAreNeverSkippedButBounded) {
  SendQueue q(2);
  const auto kNever = Outgoing::Skip::kNever;
  EXPECT_EQ(Push(q, Frame("v1", kNever)).outcome, Outcome::kQueued);
  EXPECT_EQ(Push(q, Frame("v2", kNever)).outcome, Outcome::kQueued);
  auto r = Push(q, Frame("v3", kNever));
  EXPECT_EQ(r.outcome, Outcome::kTooSlow);
  EXPECT_EQ(r.reason, "too slow: 2 frames queued");
}

TEST(SendQueueTest, ASnapshotAfterAPerSubscriberFrameIsNotSuperseded) {
  SendQueue q(4);
  Push(q, Frame("v1", Outgoing::Skip::kNever));
  EXPECT_EQ(Push(q, Frame("t2")).outcome, Outcome::kQueued);
  EXPECT_EQ(q.queued_frames(), 2u);
}

TEST(SendQueueTest, ReplicationFallsBehindAndIsRebaselined) {
  SendQueue q(2);
  Push(q, Delta("d1"));
  const Outgoing& writing = q.Started();  // d1 is being written
  Push(q, Delta("d2"), Replies({{"ack1", true}}));
  auto r = Push(q, Delta("d3"), Replies({{"ack2", true}}));
  EXPECT_EQ(r.outcome, Outcome::kResync);
  // d2 and d3 are gone, the replies stay, the frame in flight too.
  EXPECT_EQ(q.queued_frames(), 1u);
  EXPECT_EQ(Text(writing), "F:d1");
  q.Finished();
  EXPECT_THAT(Drain(q), ElementsAre("ack1", "ack2"));
  EXPECT_EQ(q.queued_frames(), 0u);
}

TEST(SendQueueTest, TwoResyncsWithNothingWrittenAreTooSlow) {
  SendQueue q(1);
  Push(q, Delta("d1"));
  EXPECT_EQ(Push(q, Delta("d2")).outcome, Outcome::kResync);
  Push(q, Delta("baseline"));
  auto r = Push(q, Delta("d3"));
  EXPECT_EQ(r.outcome, Outcome::kTooSlow);
  EXPECT_EQ(r.reason, "too slow: 1 frames queued");
}

TEST(SendQueueTest, AResyncIsAllowedAgainOnceAFrameWasWritten) {
  SendQueue q(1);
  Push(q, Delta("d1"));
  EXPECT_EQ(Push(q, Delta("d2")).outcome, Outcome::kResync);
  Push(q, Delta("baseline"));
  EXPECT_THAT(Drain(q), ElementsAre("F:baseline"));
  Push(q, Delta("d3"));
  EXPECT_EQ(Push(q, Delta("d4")).outcome, Outcome::kResync);
}

TEST(SendQueueTest, MessagesAreBoundedToo) {
  SendQueue q(2);  // 32 messages
  ASSERT_EQ(q.max_queued_messages(), 32u);
  ASSERT_FALSE(q.Push("m").has_value());
  q.Started();  // the one in flight counts
  for (int i = 1; i < 32; ++i) ASSERT_FALSE(q.Push("m").has_value()) << i;
  std::optional<std::string> refused = q.Push("m");
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ(*refused, "too slow: 32 messages queued");
  EXPECT_EQ(q.size(), 32u);
  SendQueue none(0);  // still room for 16
  EXPECT_EQ(none.max_queued_messages(), 16u);
}

TEST(SendQueueTest, CloseWithDropKeepsOnlyTheMessageBeingWritten) {
  SendQueue q(4);
  Push(q, Frame("t1"));
  Push(q, Frame("t2", Outgoing::Skip::kNever));
  ASSERT_FALSE(q.Push("m").has_value());
  EXPECT_EQ(Text(q.Started()), "F:t1");
  q.PushClose(1008, "too slow", /*drop_queued=*/true);
  EXPECT_EQ(q.queued_frames(), 1u);  // t1, in flight
  q.Finished();
  EXPECT_EQ(q.queued_frames(), 0u);
  EXPECT_THAT(Drain(q), ElementsAre("close 1008 too slow"));
}

TEST(SendQueueTest, CloseWithoutDropGoesAfterTheQueuedMessages) {
  SendQueue q(4);
  ASSERT_FALSE(q.Push("m").has_value());
  Push(q, Frame("t1"));
  q.PushClose(4006, "stopped", false);
  EXPECT_THAT(Drain(q), ElementsAre("m", "F:t1", "close 4006 stopped"));
}

TEST(SendQueueTest, ClearForgetsEverything) {
  SendQueue q(4);
  Push(q, Frame("t1"));
  Push(q, Frame("t2", Outgoing::Skip::kNever));
  q.Started();
  q.Clear();
  EXPECT_FALSE(q.writing());
  EXPECT_EQ(q.size(), 0u);
  EXPECT_EQ(q.queued_frames(), 0u);
  EXPECT_EQ(q.Next(), nullptr);
}

TEST(SendQueueTest, DropQueuedKeepsTheFrameCountRight) {
  SendQueue q(2);
  Push(q, Frame("v1", Outgoing::Skip::kNever));
  Push(q, Frame("v2", Outgoing::Skip::kNever));
  q.DropQueued();
  EXPECT_EQ(q.queued_frames(), 0u);
  EXPECT_EQ(Push(q, Frame("v3", Outgoing::Skip::kNever)).outcome,
            Outcome::kQueued);
}

}  // namespace
}  // namespace tessera::net
