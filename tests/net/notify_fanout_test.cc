// NotifyFanout (compute::NotifySink over the shard connections): channels,
// spatial, counts, ordering with the ticks and the one shared buffer, with
// fake receivers and an io_context run on the test thread (no sockets; the
// real-socket path is in server_test.cc).
#include "net/notify_fanout.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <cmath>
#include <map>
#include <mutex>

#include "net/hub.h"
#include "net/protocol_v1.h"
#include "tessera/compute_abi.h"

namespace tessera::net {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
namespace abi = compute_abi;

// Records what reaches it: "frame <tick>" or the NOTIFY's decoded fields.
class Receiver final : public ShardReceiver {
 public:
  void PostFrame(uint64_t tick, std::shared_ptr<const std::string>,
                 std::shared_ptr<const Results>) override {
    std::lock_guard<std::mutex> lock(mu);
    log.push_back("frame " + std::to_string(tick));
  }
  void PostView(uint64_t tick, bool, std::shared_ptr<const std::string>,
                std::shared_ptr<const std::string>, bool,
                std::shared_ptr<const Results>) override {
    std::lock_guard<std::mutex> lock(mu);
    log.push_back("view " + std::to_string(tick));
  }
  void PostTransfer(std::shared_ptr<const std::string>, std::string,
                    int64_t) override {}
  void PostMessage(std::shared_ptr<const std::string> message) override {
    std::lock_guard<std::mutex> lock(mu);
    buffers.push_back(message.get());
    auto decoded = v1::DecodeServerMessage(std::span<const uint8_t>(
        reinterpret_cast<const uint8_t*>(message->data()), message->size()));
    if (!decoded.ok()) {
      log.push_back("bad: " + decoded.status().message());
      return;
    }
    const v1::Notify& n = std::get<v1::Notify>(*decoded);
    log.push_back(n.module + "|" + n.channel + "|" + n.payload + "|" +
                  n.flow_id);
  }
  void PostClose(int, std::string) override {}

  std::mutex mu;
  std::vector<std::string> log;
  std::vector<const std::string*> buffers;
};

class FakeShards final : public NotifyShards {
 public:
  std::vector<std::string> ShardsOfKind(std::string_view kind) const override {
    auto it = kinds.find(std::string(kind));
    return it == kinds.end() ? std::vector<std::string>() : it->second;
  }
  std::vector<std::string> ShardsInGroup(
      std::string_view group) const override {
    auto it = groups.find(std::string(group));
    return it == groups.end() ? std::vector<std::string>() : it->second;
  }
  Result<std::vector<std::string>> SubscribersWithin(
      std::string_view shard, float x, float y, float radius) const override {
    last_query = {x, y, radius};
    auto it = near.find(std::string(shard));
    if (it == near.end()) return NotFound("no shard");
    return it->second;
  }
  std::map<std::string, std::vector<std::string>> kinds, groups, near;
  mutable std::tuple<float, float, float> last_query;
};

compute::Notification Note(std::string_view channel,
                           std::string_view payload = "{\"x\":1}") {
  return compute::Notification{"sim", channel, payload, "f-1"};
}

class NotifyFanoutTest : public ::testing::Test {
 protected:
  void SetUp() override {
    shards_.kinds["zone"] = {"z1", "z2"};
    shards_.groups["north"] = {"z2", "lobby"};
    Join("z1", "alice", a1_);
    Join("z1", "alice", a2_);
    Join("z1", "bob", b_);
    Join("z2", "carol", c_);
    Join("lobby", "alice", a3_);
  }
  void Join(const std::string& shard, const std::string& sub,
            std::shared_ptr<Receiver>& r) {
    r = std::make_shared<Receiver>();
    ASSERT_TRUE(fanout_.Add(shard, sub, r));
  }
  void Run() {
    ioc_.restart();
    ioc_.run();
  }
  int32_t Reached(std::string_view channel) {
    compute::HostCallResult r = notify_.NotifyChannel(Note(channel));
    EXPECT_GE(r.code, 0) << r.message;
    Run();
    return r.code;
  }
  static size_t Count(Receiver& r) { return r.log.size(); }

  boost::asio::io_context ioc_;
  Hub hub_{ioc_};
  FakeWallClock wall_{1'700'000'000'000'000};
  ShardFanout fanout_{hub_, "secret", wall_};
  FakeShards shards_;
  NotifyFanout notify_{fanout_, &shards_};
  std::shared_ptr<Receiver> a1_, a2_, b_, c_, a3_;
};

TEST_F(NotifyFanoutTest, ChannelsReachTheirConnections) {
  EXPECT_EQ(notify_.SessionCount(), 5u);
  EXPECT_EQ(Reached("shard:z1"), 3);
  EXPECT_THAT(a1_->log, ElementsAre("sim|shard:z1|{\"x\":1}|f-1"));
  EXPECT_EQ(Count(*c_), 0u);
  EXPECT_EQ(Reached("kind:zone"), 4);  // z1 (3) + z2 (1)
  EXPECT_EQ(Count(*c_), 1u);
  EXPECT_EQ(Count(*a3_), 0u);
  EXPECT_EQ(Reached("group:north"), 2);  // z2 + lobby
  EXPECT_EQ(Count(*a3_), 1u);
  EXPECT_EQ(Count(*b_), 2u);
  EXPECT_EQ(Reached("player:alice"), 3);  // both on z1, one on lobby
  EXPECT_EQ(Count(*a1_), 3u);
  EXPECT_EQ(Count(*a2_), 3u);
  EXPECT_EQ(Count(*a3_), 2u);
  EXPECT_EQ(Count(*b_), 2u);
  EXPECT_EQ(Reached("all"), 5);
  EXPECT_EQ(Count(*c_), 3u);
  EXPECT_EQ(a3_->log.back(), "sim|all|{\"x\":1}|f-1");
  // Nobody there: 0, not an error.
  EXPECT_EQ(Reached("shard:empty"), 0);
  EXPECT_EQ(Reached("kind:none"), 0);
  EXPECT_EQ(Reached("group:south"), 0);
  EXPECT_EQ(Reached("player:zed"), 0);
  EXPECT_EQ(Count(*a1_), 4u);
}

TEST_F(NotifyFanoutTest, OneBufferForEveryConnection) {
  EXPECT_EQ(Reached("all"), 5);
  EXPECT_EQ(a1_->buffers[0], b_->buffers[0]);
  EXPECT_EQ(a1_->buffers[0], c_->buffers[0]);
  EXPECT_EQ(a1_->buffers[0], a3_->buffers[0]);
}

TEST_F(NotifyFanoutTest, UnknownChannelFormsAreInvalid) {
  for (std::string_view bad : {"", "al", "All", "shard:", "kind:", "group:",
                               "player:", "zone:1", "spatial:z1", " all"}) {
    SCOPED_TRACE(bad);
    compute::HostCallResult r = notify_.NotifyChannel(Note(bad));
    EXPECT_EQ(r.code, abi::kErrInvalid);
    EXPECT_THAT(r.message, HasSubstr("unknown channel"));
  }
  Run();
  EXPECT_EQ(Count(*a1_), 0u);
}

TEST_F(NotifyFanoutTest, PayloadOverTheLimitIsTooLarge) {
  const std::string big(abi::kMaxNotifyPayloadBytes + 1, 'x');
  EXPECT_EQ(notify_.NotifyChannel(Note("all", big)).code, abi::kErrTooLarge);
  EXPECT_EQ(notify_.NotifySpatial("z1", 0, 0, 1, Note("", big)).code,
            abi::kErrTooLarge);
  const std::string max(abi::kMaxNotifyPayloadBytes, 'x');
  EXPECT_EQ(notify_.NotifyChannel(Note("all", max)).code, 5);
  Run();
  ASSERT_EQ(Count(*a1_), 1u);
  EXPECT_THAT(a1_->log[0], HasSubstr(max));
}

TEST_F(NotifyFanoutTest, SpatialReachesTheSubscribersNearOnThatShard) {
  shards_.near["z1"] = {"alice"};
  shards_.near["z2"] = {};
  compute::HostCallResult r =
      notify_.NotifySpatial("z1", 1.5f, -2, 30, Note("spatial"));
  EXPECT_EQ(r.code, 2) << r.message;  // alice's two connections
  EXPECT_EQ(shards_.last_query, std::make_tuple(1.5f, -2.0f, 30.0f));
  Run();
  EXPECT_THAT(a1_->log, ElementsAre("sim|spatial:z1|{\"x\":1}|f-1"));
  EXPECT_EQ(Count(*a2_), 1u);
  EXPECT_EQ(Count(*b_), 0u);
  EXPECT_EQ(Count(*a3_), 0u);  // alice on another shard
  // A shard without areas: 0 reached. An unknown shard: not found.
  EXPECT_EQ(notify_.NotifySpatial("z2", 0, 0, 1e6f, Note("")).code, 0);
  r = notify_.NotifySpatial("gone", 0, 0, 1, Note(""));
  EXPECT_EQ(r.code, abi::kErrNotFound);
  EXPECT_THAT(r.message, HasSubstr("\"gone\""));
  for (auto [x, y, radius] : {std::tuple<float, float, float>{NAN, 0, 1},
                              {0, INFINITY, 1},
                              {0, 0, -1},
                              {0, 0, NAN}}) {
    EXPECT_EQ(notify_.NotifySpatial("z1", x, y, radius, Note("")).code,
              abi::kErrInvalid);
  }
  NotifyFanout blind(fanout_, nullptr);
  EXPECT_EQ(blind.NotifySpatial("z1", 0, 0, 1, Note("")).code,
            abi::kErrNotFound);
  EXPECT_EQ(blind.NotifyChannel(Note("kind:zone")).code, 0);
  Run();
  EXPECT_EQ(Count(*a1_), 1u);
}

// A NOTIFY is published on the shard's topic: between the ticks published
// before and after it, for every connection.
TEST_F(NotifyFanoutTest, NotificationsKeepTheirPlaceAmongTheTicks) {
  fanout_.OnFrame("z1", 1, "s", {});
  EXPECT_EQ(notify_.NotifyChannel(Note("shard:z1")).code, 3);
  fanout_.OnFrame("z1", 2, "s", {});
  EXPECT_EQ(notify_.NotifyChannel(Note("player:bob")).code, 1);
  fanout_.OnFrame("z1", 3, "s", {});
  Run();
  EXPECT_THAT(a1_->log, ElementsAre("frame 1", "sim|shard:z1|{\"x\":1}|f-1",
                                    "frame 2", "frame 3"));
  EXPECT_THAT(b_->log,
              ElementsAre("frame 1", "sim|shard:z1|{\"x\":1}|f-1", "frame 2",
                          "sim|player:bob|{\"x\":1}|f-1", "frame 3"));
}

TEST_F(NotifyFanoutTest, LeftConnectionsAreNotCounted) {
  fanout_.Remove("z1", "alice", a1_.get());
  EXPECT_EQ(Reached("shard:z1"), 2);
  EXPECT_EQ(Count(*a1_), 0u);
  EXPECT_EQ(notify_.SessionCount(), 4u);
  hub_.Shutdown();
  EXPECT_EQ(notify_.NotifyChannel(Note("all")).code, 0);
  EXPECT_EQ(notify_.SessionCount(), 0u);
}

}  // namespace
}  // namespace tessera::net
