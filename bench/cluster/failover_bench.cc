// Failover of a shard between two real `tessera serve` machines on one
// throwaway PostgreSQL (docs/cluster.md, issue 16): `make cluster-bench`.
//
// Each round creates a shard on the machine that is up the longest, lets it
// save, then ends that machine and times, from the signal to the first
// FRAME a client gets from the shard on the other machine:
//  - kill -9: the other machine takes the shard over once the dead one has
//    been silent for the dead time (10 s), then at its next scan (2 s);
//  - SIGTERM (the baseline, measured in the same run): the machine saves
//    and marks itself as left, so the other takes over at its next scan.
// The ended machine comes back as a new machine for the next round. Prints
// p50/p99/max of both and their ratio; ROUNDS (default 20) sets the count.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "store/postgres/pg_test_cluster.h"
#include "tests/e2e/app_template.h"
#include "tests/e2e/serve_helpers.h"
#include "tests/e2e/server_process.h"
#include "tests/net/test_client.h"

namespace tessera::e2e {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using net::testing::TestClient;
using Clock = std::chrono::steady_clock;

constexpr char kAdminToken[] = "bench-admin-token";

AppTemplate* MakeTemplate() {
  AppTemplateOptions options;
  options.tessera_bin = TESSERA_BIN;
  options.source = fs::path(TESSERA_SOURCE_DIR) / "examples/zones";
  options.kind = "zones";
  options.shard_id = "zones-0";
  options.scratch = "cluster-bench";
  return static_cast<AppTemplate*>(
      ::testing::AddGlobalTestEnvironment(new AppTemplate(std::move(options))));
}

AppTemplate* const kTemplate = MakeTemplate();

struct Percentiles {
  double p50 = 0, p99 = 0, max = 0;
};

Percentiles Summarize(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  auto at = [&](double q) {
    return v[std::min(v.size() - 1, static_cast<size_t>(q * v.size()))];
  };
  return {at(0.5), at(0.99), v.back()};
}

class FailoverBench : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(kTemplate->path().empty()) << "the zones app did not build";
    Status error;
    cluster_ = store::pg::SharedPgTestCluster(&error);
    ASSERT_NE(cluster_, nullptr) << error.ToString();
    Result<std::string> url = cluster_->NewDatabase();
    ASSERT_TRUE(url.ok()) << url.status().ToString();
    url_ = *url;
    app_ = kTemplate->app_path();
    ASSERT_TRUE(kTemplate->CopyToAppPath());
  }

  std::unique_ptr<ServerProcess> Spawn() {
    const std::string machine = "machine-" + std::to_string(++machines_);
    SpawnOptions options =
        ServeOptions(TESSERA_BIN, app_,
                     {{"TESSERA_SHARD_TICKET_SECRET", "bench-ticket-secret"},
                      {"TESSERA_ADMIN_TOKEN", kAdminToken},
                      {"TESSERA_SHARD_SAVE_SECS", "1"},
                      {"TESSERA_MACHINE_ID", machine},
                      {"TESSERA_DATABASE_URL", url_}},
                     "", app_.parent_path() / (machine + ".log"));
    Result<std::unique_ptr<ServerProcess>> started =
        ServerProcess::Start(std::move(options));
    EXPECT_TRUE(started.ok()) << started.status().ToString();
    return started.ok() ? std::move(*started) : nullptr;
  }

  int Post(ServerProcess& on, const std::string& target, const json& body) {
    auto r = HttpJson(on.port(), "POST", target, body, kAdminToken);
    EXPECT_TRUE(r.ok() && r->status == 201)
        << target << ": " << (r.ok() ? r->body : r.status().ToString());
    return r.ok() ? r->status : 0;
  }

  // The first FRAME of `shard` on `on` (a fresh watcher each try), or false
  // once `deadline` passes.
  bool FirstFrame(ServerProcess& on, const std::string& shard,
                  Clock::time_point deadline) {
    while (Clock::now() < deadline) {
      auto ticket =
          HttpJson(on.port(), "POST", "/api/shards/" + shard + "/tickets",
                   {{"subscriber", "watcher"}}, kAdminToken);
      if (ticket.ok() && ticket->status == 200) {
        net::testing::ClientOptions options;
        options.port = on.port();
        auto client = TestClient::Connect(options, shard);
        if (client.ok()) {
          json t = json::parse(ticket->body, nullptr, false);
          auto welcome = (*client)->Join(t.value("ticket", ""), 2000);
          if (welcome.ok() && (*client)->ReadUntil<net::v1::Frame>(2000).ok()) {
            return true;
          }
        }
      }
      usleep(20'000);
    }
    return false;
  }

  // One round: a shard on `owner`, ended with `signal`; the seconds until
  // its first frame from `other`.
  double Round(std::unique_ptr<ServerProcess>& owner, ServerProcess& other,
               int signal, int round) {
    // The zones kind takes ids ending in "-<index>".
    const std::string shard = "bench" + std::to_string(round) + "-0";
    EXPECT_EQ(Post(*owner, "/api/shards",
                   {{"kind", "zones"},
                    {"id", shard},
                    {"params", {{"index", 0}, {"zones", 1}}}}),
              201);
    usleep(1'500'000);  // a save (every 1 s)
    const auto signalled = Clock::now();
    EXPECT_TRUE(owner->Signal(signal).ok());
    EXPECT_TRUE(owner->WaitExit(30'000).ok());
    const bool framed =
        FirstFrame(other, shard, signalled + std::chrono::seconds(30));
    EXPECT_TRUE(framed) << other.Log();
    return std::chrono::duration<double>(Clock::now() - signalled).count();
  }

  store::pg::PgTestCluster* cluster_ = nullptr;
  std::string url_;
  fs::path app_;
  int machines_ = 0;
};

TEST_F(FailoverBench, KillNineAgainstSigterm) {
  const char* env = std::getenv("ROUNDS");
  const int rounds = env != nullptr ? std::max(1, std::atoi(env)) : 20;
  std::unique_ptr<ServerProcess> a = Spawn();
  ASSERT_NE(a, nullptr);
  std::unique_ptr<ServerProcess> b = Spawn();
  ASSERT_NE(b, nullptr);
  std::vector<double> killed, termed;
  for (int i = 0; i < 2 * rounds; ++i) {
    const int signal = i % 2 == 0 ? SIGKILL : SIGTERM;
    // `a` is the older machine: its shard moves to `b`; a new machine
    // takes `a`'s place.
    const double s = Round(a, *b, signal, i);
    (signal == SIGKILL ? killed : termed).push_back(s);
    std::cout << "round " << i << " "
              << (signal == SIGKILL ? "kill -9" : "SIGTERM") << ": " << s
              << " s\n"
              << std::flush;
    a = std::move(b);
    b = Spawn();
    ASSERT_NE(b, nullptr);
  }
  const Percentiles k = Summarize(killed), t = Summarize(termed);
  std::cout << "failover, signal to the first FRAME from the new machine ("
            << rounds << " rounds each):\n"
            << "  kill -9: p50 " << k.p50 << " s, p99 " << k.p99 << " s, max "
            << k.max << " s (target <= 12 s; dead time 10 s)\n"
            << "  SIGTERM (baseline): p50 " << t.p50 << " s, p99 " << t.p99
            << " s, max " << t.max << " s\n"
            << "  kill -9 / SIGTERM at p50: " << k.p50 / t.p50 << "x\n";
}

}  // namespace
}  // namespace tessera::e2e
