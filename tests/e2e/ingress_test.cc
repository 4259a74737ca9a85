// Hostile clients: malformed, truncated, oversized messages and an input
// flood each close only their own connection; the other players on the
// same shard keep their frames and their round trip.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <iostream>
#include <thread>
#include <vector>

#include "tests/e2e/e2e_fixture.h"

namespace tessera::e2e {
namespace {

struct FloodResult {
  CloseInfo close;
  int sent = 0;
  int rate_limited = 0;  // REJECT "rate limited" received
};

// Sends bursts of inputs far beyond the token bucket (100/s, burst 200),
// reading in between, until the server closes the connection.
FloodResult FloodUntilClosed(TestClient& client) {
  FloodResult result;
  uint64_t seq = 0;
  while (!client.closed() && seq < 20000) {
    for (int i = 0; i < 50; ++i) {
      if (!client.SendInput(++seq, MoveTo(50, 50)).ok()) break;
      ++result.sent;
    }
    for (;;) {
      Result<net::testing::ClientEvent> e = client.Read(1);
      if (!e.ok() || e->closed) break;
      Result<net::v1::ServerMessage> m = net::v1::DecodeServerMessage(
          {reinterpret_cast<const uint8_t*>(e->bytes.data()), e->bytes.size()});
      if (!m.ok()) continue;
      if (auto* r = std::get_if<net::v1::Reject>(&*m)) {
        if (r->error == "rate limited") ++result.rate_limited;
      }
    }
  }
  Result<CloseInfo> close = client.WaitClose(5000);
  if (close.ok()) result.close = *close;
  return result;
}

class IngressTest : public E2eTest {
 protected:
  // A dev server with the observer "watcher" joined to arena-1.
  void StartWithObserver() {
    app_ = CopyArena();
    ASSERT_NE(StartDev(app_), nullptr);
    observer_ = Join("arena-1", DevTicket("arena-1", "watcher"));
    ASSERT_NE(observer_, nullptr);
  }

  // A joined client that then sends `bytes` (binary) and gets closed.
  CloseInfo SendAndClose(const std::string& subscriber,
                         const std::string& bytes, bool text = false) {
    std::unique_ptr<TestClient> bad =
        Join("arena-1", DevTicket("arena-1", subscriber));
    if (bad == nullptr) return {};
    Status sent = text ? bad->SendText(bytes) : bad->Send(bytes);
    // The server may close while a large message is still being written.
    if (!sent.ok()) ADD_FAILURE() << "send: " << sent.ToString();
    return ExpectClose(*bad);
  }

  fs::path app_;
  std::unique_ptr<TestClient> observer_;
};

TEST_F(IngressTest, GarbageClosesWith4000AndOthersKeepTheirFrames) {
  StartWithObserver();
  // 0xc1 is never used in MessagePack.
  CloseInfo close = SendAndClose("garbage", std::string("\xc1\xff\x00zz", 5));
  EXPECT_EQ(close.code, kBadFrame) << close.reason;
  EXPECT_FALSE(close.reason.empty());
  // Valid MessagePack, but not an array / an unknown type / a text message.
  close = SendAndClose("map", std::string("\x80", 1));
  EXPECT_EQ(close.code, kBadFrame) << close.reason;
  close = SendAndClose("unknown", std::string("\x91\x09", 2));
  EXPECT_EQ(close.code, kBadFrame) << close.reason;
  close = SendAndClose("text", "[2,1]", /*text=*/true);
  EXPECT_EQ(close.code, kBadFrame) << close.reason;
  EXPECT_TRUE(KeepsReceivingFrames(*observer_));
  MoveAndExpectAck(*observer_, 1, "watcher", 3, 4);
}

TEST_F(IngressTest, TruncatedMessageClosesWith4000) {
  StartWithObserver();
  const std::string input = net::v1::EncodeInput(1, MoveTo(10, 10));
  for (size_t cut : {size_t{1}, input.size() / 2, input.size() - 1}) {
    const CloseInfo close = SendAndClose("cut" + std::to_string(cut),
                                         input.substr(0, input.size() - cut));
    EXPECT_EQ(close.code, kBadFrame) << "cut " << cut << ": " << close.reason;
  }
  EXPECT_TRUE(KeepsReceivingFrames(*observer_));
}

TEST_F(IngressTest, OversizedMessageClosesWith1009) {
  StartWithObserver();
  // A well-formed INPUT a few bytes over the 64 KiB limit.
  const std::string big = net::v1::EncodeInput(1, std::string(64 * 1024, 'x'));
  ASSERT_GT(big.size(), 64u * 1024);
  const CloseInfo close = SendAndClose("big", big);
  EXPECT_EQ(close.code, kMessageTooBig) << close.reason;
  EXPECT_TRUE(KeepsReceivingFrames(*observer_));
  MoveAndExpectAck(*observer_, 1, "watcher", 7, 8);
}

// Flooders, one after another, while the observer plays 10 round trips;
// every flooder is closed for its strikes, every observer input is ACKed
// (within MoveAndExpectAck's generous timeout) with its effect, and the
// frames keep coming. The round-trip times are printed, not asserted: how
// fast they are on a busy machine is a benchmark's business.
TEST_F(IngressTest, InputFloodHitsTheStrikesLimitWhileOthersPlayOn) {
  StartWithObserver();
  const double baseline_ms = MoveAndExpectAck(*observer_, 1, "watcher", 1, 1);
  const std::string ticket = DevTicket("arena-1", "flooder");

  // The flooders run on their own thread (a TestClient belongs to one
  // thread) until the observer is done, at least one of them.
  std::atomic<bool> observer_done{false}, flooding{false};
  std::vector<FloodResult> floods;
  std::thread flood([&, port = port()] {
    do {
      net::testing::ClientOptions options;
      options.port = port;
      auto client = TestClient::Connect(options, "arena-1");
      if (!client.ok() || !(*client)->Join(ticket).ok()) {
        floods.push_back({});
        break;
      }
      flooding = true;
      floods.push_back(FloodUntilClosed(**client));
    } while (!observer_done);
    flooding = true;  // also when the first one could not join
  });

  // The observer's round trips start once a flooder is in.
  while (!flooding) std::this_thread::yield();
  std::vector<double> rtts_ms;
  for (uint64_t seq = 2; seq < 12; ++seq) {
    rtts_ms.push_back(MoveAndExpectAck(*observer_, seq, "watcher",
                                       static_cast<double>(seq % 500), 2));
  }
  observer_done = true;
  flood.join();

  ASSERT_FALSE(floods.empty());
  for (const FloodResult& f : floods) {
    EXPECT_EQ(f.close.code, kRateLimited) << f.close.reason;
    EXPECT_GT(f.sent, 200);  // the burst is 200
    EXPECT_GE(f.rate_limited, 1);
    EXPECT_LE(f.rate_limited, 10);  // closed at the 10th strike
  }
  EXPECT_TRUE(KeepsReceivingFrames(*observer_));
  std::sort(rtts_ms.begin(), rtts_ms.end());
  std::cout << floods.size()
            << " flooders closed; observer input->ACK: " << rtts_ms.size()
            << " samples, median " << rtts_ms[rtts_ms.size() / 2] << " ms, max "
            << rtts_ms.back() << " ms (baseline " << baseline_ms << " ms)\n";
}

}  // namespace
}  // namespace tessera::e2e
