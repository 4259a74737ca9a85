// The driver and its bots against a stand-in server (fake_shard_server.h):
// joins, inputs, answers, refusals, disconnects, minted tickets and TLS.
#include "loadtest/driver.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "net/client/fake_shard_server.h"

namespace tessera::loadtest {
namespace {

using net::client::testing::FakeServerOptions;
using net::client::testing::FakeShardServer;

constexpr char kMove[] = R"({"move_to":{"x":"$rand:0:800","y":"$int:0:500"}})";

LoadTestOptions Options(const FakeShardServer& server, bool tls = false) {
  LoadTestOptions o;
  const std::string origin = std::string(tls ? "https" : "http") +
                             "://localhost:" + std::to_string(server.port());
  o.url = origin;
  o.join = "/join";
  o.shard = "s";
  o.bots = 12;
  o.threads = 2;
  // A fixed number of inputs per bot, so that the counts do not depend on
  // how fast the machine is; the duration only bounds the run.
  o.inputs_per_bot = 12;
  o.duration_secs = 60;
  o.rate = 10;
  o.inputs = {kMove, R"({"say":"bot $bot is $sid"})"};
  o.drain_secs = 2;
  o.connect_timeout_secs = 5;
  return o;
}

uint64_t Get(const CountMap& map, const std::string& key) {
  auto it = map.find(key);
  return it == map.end() ? 0 : it->second;
}

void ExpectCountsAddUp(const Counts& c) {
  EXPECT_EQ(c.inputs_sent, c.inputs_acked + c.inputs_refused +
                               c.in_flight_at_end + c.inputs_lost);
  EXPECT_EQ(c.rtt_us.count(), c.inputs_acked + c.inputs_refused);
  EXPECT_EQ(c.errors, 0u);
}

// Bots ask for frame acks; `frame_acks`: whether the server honours them
// (FRAMEs answer the inputs) or sends ACK messages as an older one would.
void PlayAndCountEverything(bool frame_acks) {
  FakeServerOptions server_options;
  server_options.reject_every = 4;
  server_options.frame_acks = frame_acks;
  FakeShardServer server(server_options);
  std::vector<SeriesPoint> seconds;
  Result<Report> r = RunLoadTest(
      Options(server),
      [&](const SeriesPoint& p, const Counts&) { seconds.push_back(p); });
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const Counts& c = r->counts;
  EXPECT_EQ(c.bots_connected, 12u);
  EXPECT_EQ(c.connect_failures, 0u);
  EXPECT_TRUE(c.disconnects.empty());
  // 12 bots x 12 inputs, every 4th of each bot's refused.
  EXPECT_EQ(c.inputs_sent, 144u);
  EXPECT_EQ(c.inputs_sent, server.inputs());
  EXPECT_EQ(c.inputs_refused, 36u);
  EXPECT_EQ(Get(c.refusals, "nope"), c.inputs_refused);
  EXPECT_EQ(c.in_flight_at_end, 0u);
  EXPECT_EQ(c.frames, c.inputs_sent);  // one FRAME per input here
  EXPECT_GT(c.bytes, 0u);
  // Each bot stays at least the 11 intervals between its 12 inputs.
  EXPECT_GT(c.bot_seconds, 12 * 1.0);
  ExpectCountsAddUp(c);
  ASSERT_GE(seconds.size(), 1u);
  EXPECT_EQ(seconds.front().t, 0);
  // Every bot stays 1.1 s after joining, so some second sees them all.
  uint64_t most_connected = 0;
  for (const SeriesPoint& p : seconds) {
    most_connected = std::max(most_connected, p.connected);
  }
  EXPECT_EQ(most_connected, 12u);
  uint64_t sent = 0;
  for (const SeriesPoint& p : r->series) sent += p.sent;
  EXPECT_EQ(sent, c.inputs_sent) << "the series covers every input";
  EXPECT_EQ(r->settings.join,
            "http://localhost:" + std::to_string(server.port()) + "/join");
}

TEST(DriverTest, BotsJoinPlayAndCountEverything) {
  PlayAndCountEverything(/*frame_acks=*/true);
}

TEST(DriverTest, ServersWithoutFrameAcksAnswerWithAckMessages) {
  PlayAndCountEverything(/*frame_acks=*/false);
}

TEST(DriverTest, MintedTicketsAndWrongSecrets) {
  FakeShardServer server(FakeServerOptions{});
  LoadTestOptions o = Options(server);
  o.join.clear();
  o.ticket_secret = "fake-secret";
  o.shards = 3;
  o.bots = 6;
  o.bot_offset = 100;
  Result<Report> r = RunLoadTest(o, nullptr);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->counts.bots_connected, 6u);
  ExpectCountsAddUp(r->counts);

  o.ticket_secret = "wrong";
  r = RunLoadTest(o, nullptr);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->counts.bots_connected, 0u);
  EXPECT_EQ(r->counts.connect_failures, 6u);
  ASSERT_EQ(r->counts.connect_failure_reasons.size(), 1u);
  EXPECT_EQ(r->counts.connect_failure_reasons.begin()->first,
            "closed before WELCOME: 4001 bye");
}

TEST(DriverTest, RefusedJoinsAndServerClosesAreCounted) {
  FakeServerOptions server_options;
  server_options.close_after_inputs = 3;
  server_options.close_code = 4006;
  FakeShardServer server(server_options);
  LoadTestOptions o = Options(server);
  o.bots = 4;
  Result<Report> r = RunLoadTest(o, nullptr);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->counts.bots_connected, 4u);
  EXPECT_EQ(Get(r->counts.disconnects, "4006"), 4u) << FormatSummary(*r);
  EXPECT_EQ(r->counts.inputs_acked, 12u);
  ExpectCountsAddUp(r->counts);

  o.shard = "refuse";
  r = RunLoadTest(o, nullptr);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->counts.connect_failures, 4u);
  EXPECT_EQ(
      r->counts.connect_failure_reasons.at("join: HTTP 404: no such shard"),
      4u);
}

TEST(DriverTest, BotsFollowTransfersAndTimeThem) {
  // After each connection's 3rd input the player "moves": TRANSFER to
  // shard "t" with a ticket for it, then close 4011.
  FakeServerOptions server_options;
  server_options.close_after_inputs = 3;
  server_options.transfer_to = "t";
  FakeShardServer server(server_options);
  LoadTestOptions o = Options(server);
  o.bots = 4;
  o.inputs_per_bot = 5;  // 3 on "s", 2 on "t": one move each
  Result<Report> r = RunLoadTest(o, nullptr);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const Counts& c = r->counts;
  EXPECT_EQ(c.bots_connected, 4u) << "a move is not a new bot";
  EXPECT_TRUE(c.disconnects.empty()) << FormatSummary(*r);
  EXPECT_EQ(c.transfers.followed, 4u) << FormatSummary(*r);
  EXPECT_EQ(c.transfers.failed, 0u) << FormatSummary(*r);
  EXPECT_EQ(c.transfers.time_us.count(), 4u);
  EXPECT_EQ(c.transfers.notice_us.count(), 4u);
  EXPECT_EQ(c.transfers.reconnect_us.count(), 4u);
  EXPECT_GE(c.transfers.time_us.max(), c.transfers.reconnect_us.min());
  // The inputs go on at the target: every one sent and answered.
  EXPECT_EQ(c.inputs_sent, 20u);
  EXPECT_EQ(server.inputs(), 20u);
  EXPECT_EQ(c.inputs_acked, 20u);
  EXPECT_EQ(c.inputs_lost, 0u);
  EXPECT_EQ(c.first_frame_us.count(), 4u) << "the first connections only";
  ExpectCountsAddUp(c);
  EXPECT_NE(FormatSummary(*r).find("transfers:  4 followed, 0 failed"),
            std::string::npos)
      << FormatSummary(*r);
}

TEST(DriverTest, TlsWithTrustedUntrustedAndUncheckedCertificates) {
  FakeServerOptions server_options;
  server_options.tls = true;
  FakeShardServer server(server_options);
  const std::filesystem::path ca =
      std::filesystem::temp_directory_path() /
      ("loadtest-ca-" + std::to_string(getpid()) + ".pem");
  std::ofstream(ca) << server.certificate_pem();
  LoadTestOptions o = Options(server, /*tls=*/true);
  o.bots = 4;
  o.ca_file = ca.string();
  Result<Report> r = RunLoadTest(o, nullptr);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->counts.bots_connected, 4u) << FormatSummary(*r);
  EXPECT_GT(r->counts.inputs_acked, 0u);
  EXPECT_EQ(r->counts.inputs_acked, 48u);
  ExpectCountsAddUp(r->counts);
  EXPECT_EQ(server.sessions(), 4u);

  o.ca_file.clear();  // a self-signed certificate is refused
  r = RunLoadTest(o, nullptr);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->counts.connect_failures, 4u);
  ASSERT_EQ(r->counts.connect_failure_reasons.size(), 1u);
  EXPECT_NE(r->counts.connect_failure_reasons.begin()->first.find("join: tls"),
            std::string::npos)
      << r->counts.connect_failure_reasons.begin()->first;

  o.insecure = true;
  r = RunLoadTest(o, nullptr);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->counts.bots_connected, 4u);
  std::filesystem::remove(ca);
}

TEST(DriverTest, NetworkDelayAppliesToEveryRoundTrip) {
  FakeShardServer server(FakeServerOptions{});
  LoadTestOptions o = Options(server);
  o.bots = 4;
  o.net_delay_ms = 30;
  o.net_jitter_ms = 5;
  Result<Report> r = RunLoadTest(o, nullptr);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->counts.bots_connected, 4u);
  ExpectCountsAddUp(r->counts);
  ASSERT_EQ(r->counts.rtt_us.count(), 48u);
  EXPECT_GE(r->counts.rtt_us.min(), 50000u);  // 2 x (30 - 5) ms
  EXPECT_TRUE(r->counts.disconnects.empty());
}

TEST(DriverTest, BadOptionsAreRefused) {
  LoadTestOptions o;
  o.join = "/join";
  o.inputs = {kMove};
  o.bots = 0;
  EXPECT_EQ(RunLoadTest(o, nullptr).status().code(),
            StatusCode::kInvalidArgument);
  o.bots = 1;
  o.inputs.clear();
  EXPECT_NE(RunLoadTest(o, nullptr).status().message().find("--input"),
            std::string::npos);
  o.inputs = {R"("$int:5:1")"};
  EXPECT_NE(RunLoadTest(o, nullptr).status().message().find("lower bound"),
            std::string::npos);
  o.inputs = {kMove};
  o.net_delay_ms = 10;
  o.net_jitter_ms = 20;
  EXPECT_NE(RunLoadTest(o, nullptr).status().message().find("--net-jitter"),
            std::string::npos);
  o.net_jitter_ms = 0;
  o.join.clear();
  EXPECT_NE(RunLoadTest(o, nullptr).status().message().find("secret"),
            std::string::npos);
  o.join = "/join";
  o.url = "ftp://x";
  EXPECT_NE(RunLoadTest(o, nullptr).status().message().find("--url"),
            std::string::npos);
  o.url = "http://127.0.0.1:1";
  o.inputs = {R"({"shoot":{"aim":["$aim:x","$aim:y"]}})"};
  EXPECT_NE(RunLoadTest(o, nullptr).status().message().find("no --aim"),
            std::string::npos);
  o.aim = 1;
  o.tick_rate = 0;
  EXPECT_NE(RunLoadTest(o, nullptr).status().message().find("--tick-rate"),
            std::string::npos);
  o.tick_rate = 20;
  o.interp_delay_ms = -1;
  EXPECT_NE(RunLoadTest(o, nullptr).status().message().find("--interp-delay"),
            std::string::npos);
  o.interp_delay_ms = 100;
  o.join_args = nlohmann::json::array();
  EXPECT_NE(RunLoadTest(o, nullptr).status().message().find("--join-args"),
            std::string::npos);
}

}  // namespace
}  // namespace tessera::loadtest
