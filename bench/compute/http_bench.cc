#include "bench/compute/http_bench.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench/compute/sandbox_bench.h"
#include "tests/e2e/server_process.h"
#include "tests/net/test_client.h"

namespace tessera::bench {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using net::testing::HttpConnection;

// CPU time (user + system) of process `pid`, µs; -1 when unreadable.
double ProcessCpuUs(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)),
                   std::istreambuf_iterator<char>());
  const size_t close = text.rfind(')');
  if (close == std::string::npos) return -1;
  std::istringstream fields(text.substr(close + 2));
  std::string f;
  unsigned long long utime = 0, stime = 0;
  for (int i = 3; i <= 15 && fields >> f; ++i) {
    if (i == 14) utime = std::stoull(f);
    if (i == 15) stime = std::stoull(f);
  }
  return static_cast<double>(utime + stime) * 1e6 /
         static_cast<double>(sysconf(_SC_CLK_TCK));
}

double NowUs() {
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

Result<fs::path> MakeApp(const fs::path& source_dir, const fs::path& dir) {
  const fs::path app = dir / "compute-bench-app";
  std::error_code ec;
  fs::remove_all(app, ec);
  fs::create_directories(app / "compute" / "echo", ec);
  if (!ec) {
    fs::copy_file(source_dir / "tests/guests/compute_echo/echo.cc",
                  app / "compute" / "echo" / "echo.cc", ec);
  }
  // A manifest needs a shard kind: the arena's source.
  if (!ec) {
    fs::copy(source_dir / "examples/arena/shards", app / "shards",
             fs::copy_options::recursive, ec);
  }
  if (ec) return IoError("scratch app: " + ec.message());
  json manifest = {
      {"name", "compute-bench"},
      {"shards",
       {{{"name", "arena"}, {"source", "shards/arena"}, {"tickRate", 20}}}},
      {"compute",
       {{{"name", "echo"},
         {"source", "compute/echo"},
         {"alwaysOn", true},
         {"triggers",
          {{{"triggerType", "invoke"},
            {"exportName", "echo"},
            {"invokePolicy", {{"type", "anyone"}}}}}}}}}};
  std::ofstream(app / "tessera.json") << manifest.dump();
  return app;
}

struct Measured {
  Summary wall;
  double server_cpu_us = 0;  // per request
};

// `n` requests on `conn`; false when one does not answer `want_status`.
Result<Measured> Measure(HttpConnection& conn, pid_t pid, int n,
                         const std::string& method, const std::string& target,
                         const std::string& body,
                         const net::client::HttpHeaders& headers,
                         int want_status) {
  std::vector<double> samples;
  samples.reserve(n);
  const double c0 = ProcessCpuUs(pid);
  for (int i = 0; i < n; ++i) {
    const double t0 = NowUs();
    auto r = conn.Request(method, target, body, headers, true, 30000);
    samples.push_back(NowUs() - t0);
    if (!r.ok()) return r.status();
    if (r->status != want_status) {
      return Internal(method + " " + target + ": " + std::to_string(r->status) +
                      " " + r->body);
    }
  }
  const double c1 = ProcessCpuUs(pid);
  Measured m;
  m.wall = Summarize(samples);
  m.server_cpu_us = (c1 - c0) / n;
  return m;
}

}  // namespace

bool RunHttpInvoke(const fs::path& source_dir, const fs::path& scratch,
                   int requests, json* out) {
  Result<fs::path> app = MakeApp(source_dir, scratch);
  if (!app.ok()) {
    std::fprintf(stderr, "http: %s\n", app.status().ToString().c_str());
    return false;
  }
  e2e::SpawnOptions spawn;
  spawn.argv = {TESSERA_BIN, "dev", app->string(), "--port", "0", "--quiet"};
  spawn.log_path = scratch / "server.log";
  spawn.ready_timeout_ms = 300000;
  auto server = e2e::ServerProcess::Start(spawn);
  if (!server.ok()) {
    std::fprintf(stderr, "http: server: %s\n",
                 server.status().ToString().c_str());
    return false;
  }
  std::ifstream secrets_in(*app / ".tessera/dev-secrets.json");
  const json secrets = json::parse(secrets_in, nullptr, false);
  const std::string token =
      secrets.is_object() ? secrets.value("adminToken", "") : "";
  const pid_t pid = (*server)->pid();
  const uint16_t port = (*server)->port();
  auto conn = HttpConnection::Connect("127.0.0.1", port, 30000);
  if (!conn.ok()) {
    std::fprintf(stderr, "http: %s\n", conn.status().ToString().c_str());
    return false;
  }
  const net::client::HttpHeaders auth = {{"Authorization", "Bearer " + token},
                                         {"Content-Type", "application/json"}};
  const std::string target = "/api/compute/modules/echo/invoke/echo";
  const std::string body = R"({"params":{}})";
  // The module compiles at boot: wait until an invoke answers 200.
  const double give_up = NowUs() + 300e6;
  for (;;) {
    auto r = (*conn)->Request("POST", target, body, auth, true, 30000);
    if (r.ok() && r->status == 200) break;
    if (NowUs() > give_up) {
      std::fprintf(stderr, "http: the echo module never answered: %s\n%s\n",
                   r.ok() ? (std::to_string(r->status) + " " + r->body).c_str()
                          : r.status().ToString().c_str(),
                   (*server)->Log().c_str());
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  // Warm up both paths, then measure them alternately (twice each).
  (void)Measure(**conn, pid, 200, "POST", target, body, auth, 200);
  (void)Measure(**conn, pid, 200, "GET", "/healthz", "", {}, 200);
  auto invoke = Measure(**conn, pid, requests, "POST", target, body, auth, 200);
  auto health = Measure(**conn, pid, requests, "GET", "/healthz", "", {}, 200);
  auto policy = Measure(**conn, pid, requests, "GET", "/api/compute/policy", "",
                        auth, 200);
  for (auto* m : {&invoke, &health, &policy}) {
    if (!m->ok()) {
      std::fprintf(stderr, "http: %s\n", m->status().ToString().c_str());
      return false;
    }
  }
  std::printf(
      "\nInvoke over HTTP (tessera dev, one keep-alive connection, "
      "%d requests each; µs)\n",
      requests);
  std::printf("  %-46s %9s %9s %12s\n", "", "p50", "p99", "server cpu");
  auto row = [](const char* name, const Measured& m) {
    std::printf("  %-46s %9.1f %9.1f %12.1f\n", name, m.wall.p50, m.wall.p99,
                m.server_cpu_us);
  };
  row("POST .../invoke/echo (trivial export)", *invoke);
  row("baseline: GET /healthz", *health);
  row("baseline: GET /api/compute/policy (auth+JSON)", *policy);
  const double resolution_us =
      1e6 / static_cast<double>(sysconf(_SC_CLK_TCK)) / requests;
  std::printf("  (server CPU resolution: %.1f µs per request)\n",
              resolution_us);
  std::printf(
      "  invoke: server CPU %.1f µs per call (target <= 50); %.1f µs "
      "over GET /healthz; round trip p50 %.2fx GET /healthz\n",
      invoke->server_cpu_us, invoke->server_cpu_us - health->server_cpu_us,
      invoke->wall.p50 / std::max(health->wall.p50, 1e-3));
  auto js = [](const Measured& m) {
    return json{{"p50_us", m.wall.p50},
                {"p99_us", m.wall.p99},
                {"server_cpu_us_per_request", m.server_cpu_us},
                {"requests", m.wall.n}};
  };
  (*out)["invoke"] = js(*invoke);
  (*out)["healthz"] = js(*health);
  (*out)["policy_get"] = js(*policy);
  (*out)["server_cpu_resolution_us"] = resolution_us;
  return true;
}

}  // namespace tessera::bench
