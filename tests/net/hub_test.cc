// Hub and ShardFanout: the registry and the fan-out of shard ticks by
// topic, with fake sessions and an io_context run on the test thread (no
// sockets).
#include "net/hub.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <mutex>

#include "net/protocol_v1.h"
#include "net/shard_fanout.h"
#include "net/ticket.h"

namespace tessera::net {
namespace {

using ::testing::ElementsAre;
using ::testing::UnorderedElementsAre;

class FakeSession final : public ShardReceiver {
 public:
  struct Frame {
    uint64_t tick;
    std::shared_ptr<const std::string> snapshot;
    std::vector<uint64_t> seqs;  // of the results handed to this session
    // PostView only:
    bool view = false;
    std::shared_ptr<const std::string> entities;
    bool baseline = false;
  };
  void PostFrame(
      uint64_t tick, std::shared_ptr<const std::string> snapshot,
      std::shared_ptr<const std::vector<shard::InputResult>> results) override {
    std::lock_guard<std::mutex> lock(mu);
    Frame f{tick, std::move(snapshot), {}, false, nullptr, false};
    if (results != nullptr) {
      for (const auto& r : *results) f.seqs.push_back(r.seq);
    }
    frames.push_back(std::move(f));
  }
  void PostView(
      uint64_t tick, bool /*replication*/,
      std::shared_ptr<const std::string> snapshot,
      std::shared_ptr<const std::string> entities, bool baseline,
      std::shared_ptr<const std::vector<shard::InputResult>> results) override {
    std::lock_guard<std::mutex> lock(mu);
    Frame f{tick, std::move(snapshot), {}, true, std::move(entities), baseline};
    if (results != nullptr) {
      for (const auto& r : *results) f.seqs.push_back(r.seq);
    }
    frames.push_back(std::move(f));
  }
  void PostTransfer(std::shared_ptr<const std::string> transfer, std::string to,
                    int64_t moved_unix_ms) override {
    std::lock_guard<std::mutex> lock(mu);
    transfers.push_back(
        {std::move(transfer), std::move(to), moved_unix_ms, frames.size()});
  }
  void PostMessage(std::shared_ptr<const std::string> message) override {
    std::lock_guard<std::mutex> lock(mu);
    messages.push_back({std::move(message), frames.size()});
  }
  void PostClose(int code, std::string reason) override {
    std::lock_guard<std::mutex> lock(mu);
    closes.emplace_back(code, std::move(reason));
  }
  struct Message {
    std::shared_ptr<const std::string> bytes;
    size_t frames_before;  // frames posted to this session before it
  };
  std::vector<Message> messages;
  struct Transfer {
    std::shared_ptr<const std::string> message;
    std::string to;
    int64_t moved_unix_ms;
    size_t frames_before;  // frames posted to this session before it
  };
  std::mutex mu;
  std::vector<Frame> frames;
  std::vector<Transfer> transfers;
  std::vector<std::pair<int, std::string>> closes;
};

shard::InputResult Result(std::string subscriber, uint64_t seq) {
  shard::InputResult r;
  r.subscriber = std::move(subscriber);
  r.seq = seq;
  r.accepted = true;
  return r;
}

class HubTest : public ::testing::Test {
 protected:
  void Run() {
    ioc_.restart();
    ioc_.run();
  }
  boost::asio::io_context ioc_;
  Hub topics_{ioc_};
  FakeWallClock wall_{1'700'000'000'000'000};
  ShardFanout hub_{topics_, "hub-secret", wall_};
};

TEST_F(HubTest, FanOutSharesOneSnapshotAndRoutesResultsBySubscriber) {
  auto a1 = std::make_shared<FakeSession>();
  auto a2 = std::make_shared<FakeSession>();
  auto b = std::make_shared<FakeSession>();
  auto other = std::make_shared<FakeSession>();
  ASSERT_TRUE(hub_.Add("s", "alice", a1));
  ASSERT_TRUE(hub_.Add("s", "alice", a2));
  ASSERT_TRUE(hub_.Add("s", "bob", b));
  ASSERT_TRUE(hub_.Add("t", "carol", other));
  EXPECT_EQ(hub_.session_count(), 4u);
  EXPECT_THAT(hub_.Subscribers("s"), UnorderedElementsAre("alice", "bob"));

  hub_.OnFrame("s", 7, "snap",
               {Result("alice", 1), Result("", 99), Result("bob", 2),
                Result("alice", 3)});
  Run();
  ASSERT_EQ(a1->frames.size(), 1u);
  ASSERT_EQ(a2->frames.size(), 1u);
  ASSERT_EQ(b->frames.size(), 1u);
  EXPECT_TRUE(other->frames.empty());
  EXPECT_EQ(a1->frames[0].tick, 7u);
  EXPECT_EQ(*a1->frames[0].snapshot, "snap");
  // One buffer for everyone.
  EXPECT_EQ(a1->frames[0].snapshot.get(), b->frames[0].snapshot.get());
  EXPECT_EQ(a1->frames[0].snapshot.get(), a2->frames[0].snapshot.get());
  EXPECT_THAT(a1->frames[0].seqs, ElementsAre(1u, 3u));
  EXPECT_THAT(a2->frames[0].seqs, ElementsAre(1u, 3u));
  EXPECT_THAT(b->frames[0].seqs, ElementsAre(2u));
}

TEST_F(HubTest, ViewsGoToTheirSubscribersAndUnknownOnesGetOnlyResults) {
  auto a1 = std::make_shared<FakeSession>();
  auto a2 = std::make_shared<FakeSession>();
  auto b = std::make_shared<FakeSession>();
  auto newcomer = std::make_shared<FakeSession>();
  ASSERT_TRUE(hub_.Add("s", "alice", a1));
  ASSERT_TRUE(hub_.Add("s", "alice", a2));
  ASSERT_TRUE(hub_.Add("s", "bob", b));
  ASSERT_TRUE(hub_.Add("s", "zed", newcomer));

  shard::ViewFrame frame;
  frame.tick = 9;
  frame.replication = true;
  frame.snapshot = std::make_shared<const std::string>("world");
  auto alice_bytes = std::make_shared<const std::string>("A");
  auto bob_bytes = std::make_shared<const std::string>("B");
  frame.views.push_back({"alice", nullptr, alice_bytes, true});
  frame.views.push_back({"bob", nullptr, bob_bytes, false});
  frame.inputs = {Result("alice", 4), Result("zed", 5), Result("", 6)};
  hub_.OnViews("s", std::make_shared<const shard::ViewFrame>(frame));
  Run();
  ASSERT_EQ(a1->frames.size(), 1u);
  ASSERT_EQ(a2->frames.size(), 1u);
  ASSERT_EQ(b->frames.size(), 1u);
  ASSERT_EQ(newcomer->frames.size(), 1u);
  // Both of alice's connections share her payload; the snapshot is shared.
  EXPECT_TRUE(a1->frames[0].view);
  EXPECT_EQ(a1->frames[0].entities.get(), alice_bytes.get());
  EXPECT_EQ(a2->frames[0].entities.get(), alice_bytes.get());
  EXPECT_TRUE(a1->frames[0].baseline);
  EXPECT_EQ(b->frames[0].entities.get(), bob_bytes.get());
  EXPECT_FALSE(b->frames[0].baseline);
  EXPECT_EQ(b->frames[0].snapshot.get(), frame.snapshot.get());
  EXPECT_THAT(a1->frames[0].seqs, ElementsAre(4u));
  // zed has no view yet: no payload, but its input result arrives.
  EXPECT_EQ(newcomer->frames[0].entities, nullptr);
  EXPECT_EQ(newcomer->frames[0].snapshot, nullptr);
  EXPECT_THAT(newcomer->frames[0].seqs, ElementsAre(5u));
}

TEST_F(HubTest, InterestViewsCarryEachSubscribersSnapshot) {
  auto a = std::make_shared<FakeSession>();
  auto b = std::make_shared<FakeSession>();
  ASSERT_TRUE(hub_.Add("s", "alice", a));
  ASSERT_TRUE(hub_.Add("s", "bob", b));
  shard::ViewFrame frame;
  frame.tick = 3;
  auto shared = std::make_shared<const std::string>("same");
  frame.views.push_back({"alice", shared, nullptr, false});
  frame.views.push_back({"bob", shared, nullptr, false});
  hub_.OnViews("s", std::make_shared<const shard::ViewFrame>(frame));
  Run();
  ASSERT_EQ(a->frames.size(), 1u);
  EXPECT_EQ(a->frames[0].snapshot.get(), shared.get());
  EXPECT_EQ(b->frames[0].snapshot.get(), shared.get());
}

TEST_F(HubTest, FramesKeepTheirOrder) {
  auto a = std::make_shared<FakeSession>();
  ASSERT_TRUE(hub_.Add("s", "alice", a));
  for (uint64_t t = 1; t <= 100; ++t) hub_.OnFrame("s", t, "x", {});
  Run();
  ASSERT_EQ(a->frames.size(), 100u);
  for (uint64_t t = 1; t <= 100; ++t) EXPECT_EQ(a->frames[t - 1].tick, t);
}

// A move reaches only the connections of the player that left, after the
// ticks published before it, as one TRANSFER buffer with a ticket for the
// target (same subscriber, the move's claims, 600 s, issued now).
TEST_F(HubTest, ATransferGoesToThePlayersConnectionsAfterTheirFrames) {
  auto a1 = std::make_shared<FakeSession>();
  auto a2 = std::make_shared<FakeSession>();
  auto b = std::make_shared<FakeSession>();
  ASSERT_TRUE(hub_.Add("s", "alice", a1));
  ASSERT_TRUE(hub_.Add("s", "alice", a2));
  ASSERT_TRUE(hub_.Add("s", "bob", b));
  shard::MovedTo moved;
  moved.subscriber = "alice";
  moved.to = "t";
  moved.claims_json = R"({"party":"red"})";
  moved.moved_unix_ms = 1'699'999'999'000;
  hub_.OnFrame("s", 1, "x", {});
  hub_.OnTransfer("s", moved);
  hub_.OnTransfer("other", moved);  // a shard nobody is connected to
  Run();
  ASSERT_EQ(a1->transfers.size(), 1u);
  ASSERT_EQ(a2->transfers.size(), 1u);
  EXPECT_TRUE(b->transfers.empty());
  EXPECT_EQ(b->frames.size(), 1u);
  EXPECT_EQ(a1->transfers[0].frames_before, 1u);
  EXPECT_EQ(a1->transfers[0].to, "t");
  EXPECT_EQ(a1->transfers[0].moved_unix_ms, 1'699'999'999'000);
  EXPECT_EQ(a1->transfers[0].message.get(), a2->transfers[0].message.get());

  const std::string& bytes = *a1->transfers[0].message;
  auto decoded = v1::DecodeServerMessage(std::span<const uint8_t>(
      reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  const v1::Transfer& transfer = std::get<v1::Transfer>(*decoded);
  EXPECT_EQ(transfer.shard_id, "t");
  TicketCheck check =
      VerifyTicket("hub-secret", transfer.ticket, "t", wall_.UnixNowSecs());
  ASSERT_EQ(check.error, TicketError::kNone) << check.message;
  EXPECT_EQ(check.ticket.subscriber_id, "alice");
  EXPECT_EQ(check.ticket.claims_json, R"({"party":"red"})");
  EXPECT_EQ(check.ticket.expires_unix, wall_.UnixNowSecs() + 600);
  EXPECT_EQ(check.ticket.issued_unix_ms, wall_.UnixNowMs());
}

TEST_F(HubTest, RemoveAndCloses) {
  auto a = std::make_shared<FakeSession>();
  auto a2 = std::make_shared<FakeSession>();
  auto b = std::make_shared<FakeSession>();
  hub_.Add("s", "alice", a);
  hub_.Add("s", "alice", a2);
  hub_.Add("s", "bob", b);
  EXPECT_EQ(hub_.CloseSubscriber("s", "alice", 4005, "kicked"), 2u);
  EXPECT_EQ(hub_.CloseSubscriber("s", "nobody", 4005, "kicked"), 0u);
  EXPECT_EQ(hub_.CloseSubscriber("nope", "alice", 4005, "kicked"), 0u);
  ASSERT_EQ(a->closes.size(), 1u);
  EXPECT_EQ(a->closes[0].first, 4005);
  EXPECT_TRUE(b->closes.empty());

  hub_.Remove("s", "alice", a.get());
  hub_.Remove("s", "alice", a2.get());
  EXPECT_THAT(hub_.Subscribers("s"), ElementsAre("bob"));
  EXPECT_EQ(hub_.session_count(), 1u);
  hub_.OnFrame("s", 1, "x", {});
  Run();
  EXPECT_TRUE(a->frames.empty());
  EXPECT_EQ(b->frames.size(), 1u);
  EXPECT_EQ(hub_.CloseShard("s", 4006, "stopped"), 1u);
}

TEST_F(HubTest, StopClosesAfterPendingFramesAndForgetsTheShard) {
  auto a = std::make_shared<FakeSession>();
  hub_.Add("s", "alice", a);
  hub_.OnFrame("s", 1, "x", {});
  hub_.OnStopped("s", 4006, "finished: done");
  Run();
  ASSERT_EQ(a->frames.size(), 1u);
  ASSERT_EQ(a->closes.size(), 1u);
  EXPECT_EQ(a->closes[0], std::make_pair(4006, std::string("finished: done")));
  EXPECT_TRUE(hub_.Subscribers("s").empty());
  EXPECT_EQ(hub_.session_count(), 0u);
  hub_.Remove("s", "alice", a.get());  // the session's own cleanup: no-op
}

TEST_F(HubTest, ShutdownDropsEverything) {
  auto a = std::make_shared<FakeSession>();
  hub_.Add("s", "alice", a);
  hub_.Shutdown();
  EXPECT_FALSE(hub_.Add("s", "bob", std::make_shared<FakeSession>()));
  hub_.OnFrame("s", 1, "x", {});
  hub_.OnStopped("s", 4006, "stopped");
  Run();
  EXPECT_TRUE(a->frames.empty());
  EXPECT_TRUE(a->closes.empty());
  EXPECT_EQ(hub_.session_count(), 0u);
  EXPECT_EQ(a.use_count(), 1);
}

// ---- The topic hub itself ----

// A message with parts for some members (sorted), like a realm patch with
// per-member extras.
struct Note final : TopicMessage {
  std::string text;
  std::vector<std::pair<std::string, bool>> parts;  // member, first
  size_t part_count() const override { return parts.size(); }
  std::string_view part_member(size_t i) const override {
    return parts[i].first;
  }
  bool part_first(size_t i) const override { return parts[i].second; }
};

class FakeSubscriber final : public TopicSubscriber {
 public:
  explicit FakeSubscriber(std::vector<std::string>* order = nullptr,
                          std::string name = "")
      : order_(order), name_(std::move(name)) {}
  void Post(const std::shared_ptr<const TopicMessage>& message,
            size_t part) override {
    if (order_ != nullptr) order_->push_back(name_);
    got.emplace_back(message, part);
  }
  void PostClose(int code, std::string reason) override {
    closes.emplace_back(code, std::move(reason));
  }
  std::vector<std::pair<std::shared_ptr<const TopicMessage>, size_t>> got;
  std::vector<std::pair<int, std::string>> closes;

 private:
  std::vector<std::string>* order_;
  std::string name_;
};

class TopicHubTest : public ::testing::Test {
 protected:
  void Run() {
    ioc_.restart();
    ioc_.run();
  }
  static Hub::MakeMessage Make(std::shared_ptr<Note> note) {
    return [note] { return std::shared_ptr<const TopicMessage>(note); };
  }
  boost::asio::io_context ioc_;
  Hub hub_{ioc_};
};

TEST_F(TopicHubTest, OneSharedMessageWithEachMembersPart) {
  auto a = std::make_shared<FakeSubscriber>();
  auto b = std::make_shared<FakeSubscriber>();
  auto c = std::make_shared<FakeSubscriber>();
  auto elsewhere = std::make_shared<FakeSubscriber>();
  ASSERT_TRUE(hub_.Add("realm/r", "ann", a));
  ASSERT_TRUE(hub_.Add("realm/r", "bea", b));
  ASSERT_TRUE(hub_.Add("realm/r", "cid", c));
  ASSERT_TRUE(hub_.Add("shard/r", "ann", elsewhere));
  auto note = std::make_shared<Note>();
  note->text = "patch";
  note->parts = {{"ann", false}, {"zoe", false}, {"cid", false}};
  std::sort(note->parts.begin(), note->parts.end());
  EXPECT_TRUE(hub_.Publish("realm/r", Make(note)));
  Run();
  ASSERT_EQ(a->got.size(), 1u);
  ASSERT_EQ(b->got.size(), 1u);
  ASSERT_EQ(c->got.size(), 1u);
  EXPECT_TRUE(elsewhere->got.empty());
  EXPECT_EQ(a->got[0].first.get(), note.get());  // the one buffer
  EXPECT_EQ(b->got[0].first.get(), note.get());
  EXPECT_EQ(note->parts[a->got[0].second].first, "ann");
  EXPECT_EQ(b->got[0].second, TopicMessage::kNoPart);
  EXPECT_EQ(note->parts[c->got[0].second].first, "cid");
}

TEST_F(TopicHubTest, MembersWithAnswersFirstOrderOtherwiseKept) {
  std::vector<std::string> order;
  for (const char* m : {"a", "b", "c", "d"}) {
    ASSERT_TRUE(hub_.Add("t", m, std::make_shared<FakeSubscriber>(&order, m)));
  }
  auto note = std::make_shared<Note>();
  note->parts = {{"b", false}, {"c", true}, {"d", true}};
  hub_.Publish("t", Make(note));
  Run();
  EXPECT_THAT(order, ElementsAre("c", "d", "a", "b"));
}

TEST_F(TopicHubTest, NothingIsBuiltForATopicWithoutSubscribers) {
  bool built = false;
  EXPECT_FALSE(hub_.Publish("t", [&built] {
    built = true;
    return std::shared_ptr<const TopicMessage>();
  }));
  auto a = std::make_shared<FakeSubscriber>();
  hub_.Add("t", "a", a);
  hub_.Remove("t", "a", a.get());
  EXPECT_FALSE(hub_.HasSubscribers("t"));
  EXPECT_FALSE(hub_.Publish("t", [&built] {
    built = true;
    return std::shared_ptr<const TopicMessage>();
  }));
  Run();
  EXPECT_FALSE(built);
}

TEST_F(TopicHubTest, EndTopicClosesAfterThePublishedMessages) {
  auto a = std::make_shared<FakeSubscriber>();
  hub_.Add("t", "a", a);
  for (int i = 0; i < 3; ++i) {
    auto note = std::make_shared<Note>();
    note->text = std::to_string(i);
    hub_.Publish("t", Make(note));
  }
  hub_.EndTopic("t", 4006, "over");
  Run();
  ASSERT_EQ(a->got.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(static_cast<const Note&>(*a->got[i].first).text,
              std::to_string(i));
  }
  EXPECT_THAT(a->closes,
              ElementsAre(std::make_pair(4006, std::string("over"))));
  EXPECT_TRUE(hub_.Members("t").empty());
  EXPECT_EQ(hub_.subscription_count(), 0u);
}

TEST_F(TopicHubTest, ClosesByMemberTopicAndAll) {
  auto a = std::make_shared<FakeSubscriber>();
  auto b = std::make_shared<FakeSubscriber>();
  auto c = std::make_shared<FakeSubscriber>();
  hub_.Add("t", "a", a);
  hub_.Add("t", "b", b);
  hub_.Add("u", "a", c);
  EXPECT_EQ(hub_.CloseMember("t", "a", 4005, "kicked"), 1u);
  EXPECT_EQ(hub_.CloseTopic("u", 4006, "gone"), 1u);
  EXPECT_EQ(hub_.CloseAll(1001, "bye"), 3u);
  EXPECT_EQ(a->closes.size(), 2u);
  EXPECT_EQ(b->closes.size(), 1u);
  EXPECT_EQ(c->closes.size(), 2u);
  EXPECT_THAT(hub_.Members("t"), ElementsAre("a", "b"));
}

}  // namespace
}  // namespace tessera::net
