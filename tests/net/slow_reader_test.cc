// Clients that read slower than the shard ticks: they skip whole-snapshot
// frames, and a replication client that falls too far behind starts again
// from a new BASELINE, instead of being disconnected.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <set>
#include <string>

#include "replication/decoder.h"
#include "tests/net/server_fixture.h"

namespace tessera::net::server_test {
namespace {

// The value of a counter in the metrics text, 0 when absent.
double Counter(Metrics& metrics, const std::string& name) {
  const std::string text = "\n" + metrics.Render();
  const size_t at = text.find("\n" + name + " ");
  if (at == std::string::npos) return 0;
  return std::stod(text.substr(at + name.size() + 2));
}

class SlowReaderTest : public ServerTest {
 protected:
  // Small socket buffers, so that a client that stops reading soon makes
  // frames wait on the server.
  ServerOptions SlowOptions(size_t max_queued_frames) {
    ServerOptions options = Options();
    options.max_queued_frames = max_queued_frames;
    options.socket_send_buffer_bytes = 8192;
    return options;
  }
  std::unique_ptr<TestClient> JoinSlow(const std::string& shard,
                                       const std::string& subscriber,
                                       uint64_t hello_flags = 0) {
    ClientOptions slow = ClientOpts();
    slow.receive_buffer_bytes = 4096;
    slow.hello_flags = hello_flags;
    auto connected = TestClient::Connect(slow, shard);
    EXPECT_TRUE(connected.ok()) << connected.status().ToString();
    if (!connected.ok()) return nullptr;
    auto welcome = (*connected)->Join(Ticket(shard, subscriber));
    EXPECT_TRUE(welcome.ok()) << welcome.status().ToString();
    if (!welcome.ok()) return nullptr;
    return std::move(connected).value();
  }
};

TEST_F(SlowReaderTest, ASlowClientSkipsSnapshotFramesAndStaysConnected) {
  StartServer(SlowOptions(1000));
  CreateShard("a");
  // ~2.5 KB snapshots (the counter's snapshot holds the last sender's id).
  const std::string big_id(2'500, 's');
  auto slow = JoinSlow("a", big_id);
  ASSERT_NE(slow, nullptr);
  ASSERT_TRUE(slow->SendInput(1, AddInput(1)).ok());
  // It reads nothing until frames have been skipped.
  ASSERT_TRUE(WaitFor([&] {
    return Counter(metrics_, "tessera_ws_frames_superseded_total") >= 10;
  }));
  // Then it reads on: everything is there, ticks skip ahead, no close.
  uint64_t last_tick = 0;
  uint64_t largest_gap = 0;
  bool acked = false;
  bool saw_frame_before_ack = false;
  for (int i = 0; i < 400 && !(acked && largest_gap > 1 && i > 60); ++i) {
    auto message = slow->ReadMessage(kGiveUpMs);
    ASSERT_TRUE(message.ok()) << message.status().ToString();
    if (const auto* frame = std::get_if<v1::Frame>(&*message)) {
      if (last_tick != 0)
        largest_gap = std::max(largest_gap, frame->tick - last_tick);
      EXPECT_GT(frame->tick, last_tick);
      last_tick = frame->tick;
      if (frame->last_seq >= 1) saw_frame_before_ack = true;
    } else if (const auto* ack = std::get_if<v1::Ack>(&*message)) {
      EXPECT_EQ(ack->seq, 1u);
      EXPECT_TRUE(saw_frame_before_ack) << "ACK before a frame showing it";
      acked = true;
    }
  }
  EXPECT_TRUE(acked);
  EXPECT_GT(largest_gap, 1u);
  EXPECT_EQ(server_->shards().ConnectionCount(), 1u);
  EXPECT_EQ(Counter(metrics_, "tessera_ws_closes_total{code=\"1008\"}"), 0);
}

// With frame acks a skipped frame's place goes to a newer one after the
// REJECTs queued meanwhile: no frame may cover a refusal not yet sent.
TEST_F(SlowReaderTest, SkippedFramesKeepFrameAcksInOrder) {
  StartServer(SlowOptions(1000));
  CreateShard("a");
  const std::string big_id(2'500, 's');
  auto slow = JoinSlow("a", big_id, v1::kHelloFrameAcks);
  ASSERT_NE(slow, nullptr);
  // Inputs while frames are being skipped, one per tick (each waits for
  // the shard's tick to move on, not for a guessed time): every other one
  // refused.
  uint64_t seq = 0;
  uint64_t sent_at_tick = 0;
  ASSERT_TRUE(WaitFor([&] {
    const uint64_t tick = host_->Get("a")->tick;
    if (tick != sent_at_tick) {
      sent_at_tick = tick;
      ++seq;
      EXPECT_TRUE(slow->SendInput(seq, AddInput(seq % 2 ? 1 : -1)).ok());
    }
    return Counter(metrics_, "tessera_ws_frames_superseded_total") >= 10;
  }));
  std::set<uint64_t> rejected;
  uint64_t last_seq = 0;
  while (last_seq < seq) {
    auto message = slow->ReadMessage(kGiveUpMs);
    ASSERT_TRUE(message.ok()) << message.status().ToString();
    ASSERT_FALSE(std::holds_alternative<v1::Ack>(*message));
    if (const auto* reject = std::get_if<v1::Reject>(&*message)) {
      EXPECT_GT(reject->seq, last_seq) << "REJECT after a FRAME covering it";
      rejected.insert(reject->seq);
    } else if (const auto* frame = std::get_if<v1::Frame>(&*message)) {
      ASSERT_GE(frame->last_seq, last_seq);
      last_seq = frame->last_seq;
    }
  }
  for (uint64_t s = 2; s <= seq; s += 2) EXPECT_TRUE(rejected.contains(s)) << s;
  EXPECT_EQ(rejected.size(), seq / 2);
  EXPECT_EQ(server_->shards().ConnectionCount(), 1u);
}

TEST_F(SlowReaderTest, ALaggingReplicationClientGetsANewBaseline) {
  TESSERA_LOAD_GUEST(zone_mini, "zone_mini", 64);
  AddKind("zone", zone_mini);
  StartServer(SlowOptions(4));
  // 400 movers: every delta frame carries 400 small updates.
  ASSERT_TRUE(
      host_
          ->Create("zone", "z",
                   Msgpack({{"mode", "replicate_all"}, {"movers", 400}}))
          .ok());
  auto slow = JoinSlow("z", "slow");
  auto steady = Join("z", "steady");
  ASSERT_NE(slow, nullptr);
  ASSERT_NE(steady, nullptr);
  replication::Decoder slow_world, steady_world;
  // `steady` reads all along (on this thread, between checks).
  uint64_t steady_tick = 0;
  auto read_steady = [&] {
    auto frame = steady->ReadUntil<v1::Frame>(kGiveUpMs);
    ASSERT_TRUE(frame.ok()) << frame.status().ToString();
    ASSERT_TRUE(frame->entities.has_value());
    Status s = steady_world.Apply(*frame->entities);
    ASSERT_TRUE(s.ok()) << s.ToString();
    steady_tick = frame->tick;
  };
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(kGiveUpMs);
  while (Counter(metrics_, "tessera_ws_baselines_resent_total") < 1) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline);
    read_steady();
    if (HasFatalFailure()) return;
  }
  // `slow` reads on: the old deltas, then a BASELINE, then deltas again;
  // it ends up holding what `steady` holds at the same tick.
  uint64_t slow_tick = 0;
  int baselines = 0;
  for (int i = 0; i < 400; ++i) {
    auto frame = slow->ReadUntil<v1::Frame>(kGiveUpMs);
    ASSERT_TRUE(frame.ok()) << frame.status().ToString();
    if (!frame->entities.has_value()) continue;
    if (!frame->entities->empty() && ((*frame->entities)[0] & 1) != 0) {
      ++baselines;
    }
    Status s = slow_world.Apply(*frame->entities);
    ASSERT_TRUE(s.ok()) << s.ToString();
    slow_tick = frame->tick;
    if (baselines >= 2) break;  // the join's and the resync's
  }
  ASSERT_EQ(baselines, 2);
  while (steady_tick < slow_tick) {
    read_steady();
    if (HasFatalFailure()) return;
  }
  while (slow_tick < steady_tick) {
    auto frame = slow->ReadUntil<v1::Frame>(kGiveUpMs);
    ASSERT_TRUE(frame.ok()) << frame.status().ToString();
    ASSERT_TRUE(slow_world.Apply(*frame->entities).ok());
    slow_tick = frame->tick;
  }
  ASSERT_EQ(slow_tick, steady_tick);
  ASSERT_EQ(slow_world.entities().size(), steady_world.entities().size());
  for (const auto& e : steady_world.entities()) {
    const auto* mine = slow_world.Find(e.id);
    ASSERT_NE(mine, nullptr) << e.id;
    EXPECT_EQ(slow_world.Coordinate(*mine, 0), steady_world.Coordinate(e, 0))
        << e.id;
  }
  EXPECT_EQ(server_->shards().ConnectionCount(), 2u);
}

}  // namespace
}  // namespace tessera::net::server_test
