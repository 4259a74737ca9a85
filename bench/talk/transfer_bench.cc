// transfer_bench: how long a move to another shard takes a player, 100
// crossing at once on one machine (issue 18: p99 <= 2 ticks at 20 Hz plus
// the client's reconnect).
//
// The real server (`tessera dev` of a scratch app whose one kind is the
// `talk` test guest, 20 Hz) runs two shards, talk-a and talk-b. `tessera
// bench shard` starts N bots (100; --quick: 10) joined to talk-a through
// the dev join, all at once. Each sends three inputs, one a second, the
// first two at the same moment as every other bot's (--together):
// `{"join": {}}` (the guest adds the player), `{"go": {"to": "talk-b"}}`
// (the guest's transfer_requests asks the host to move it after that
// tick), then, once it has followed the TRANSFER to talk-b, `{"step": {}}`
// there (accepted only if the player is in talk-b).
//
// Figures, from the bench's report (docs/load-test.md):
//   transfer:  the ACK of the `go` input -> the first FRAME from talk-b;
//   of which   the ACK -> the TRANSFER (the server's part of the move:
//              transfer_out, the journal, transfer_in, the ticket) and
//              the TRANSFER -> that FRAME (the client's reconnect);
//   baseline:  in the same run, a bot's fresh connection to talk-a with
//              its join ticket: connect + HELLO -> the first FRAME, the
//              N bots connecting at once (what a reconnect costs without
//              any move);
// each p50/p99 in ms and in ticks at 20 Hz, and the move's own cost: the
// transfer's p99 less the baseline's p99.
//
// Correctness, never timing, decides the exit status: every bot joined,
// followed its move (none failed), and had all three inputs accepted (the
// last by talk-b); no errors.
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/subprocess.h"
#include "tests/e2e/server_process.h"
#include "tests/net/test_client.h"

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using tessera::ProcessResult;
using tessera::Result;

constexpr double kTickMs = 50;  // 20 Hz

int Fail(const std::string& what) {
  std::fprintf(stderr, "transfer_bench: %s\n", what.c_str());
  return 1;
}

// A scratch app whose one kind is the prebuilt talk guest.
Result<fs::path> MakeApp(const fs::path& dir) {
  const fs::path app = dir / "talk-app";
  std::error_code ec;
  fs::create_directories(app, ec);
  if (!ec) fs::copy_file(TESSERA_BENCH_TALK_WASM, app / "talk.wasm", ec);
  if (ec) return tessera::IoError("scratch app: " + ec.message());
  std::ofstream manifest(app / "tessera.json");
  manifest << json{{"name", "talk-bench"},
                   {"shards",
                    {{{"name", "talk"},
                      {"wasm", "talk.wasm"},
                      {"codec", "msgpack"},
                      {"tickRate", 20}}}}}
                  .dump();
  if (!manifest) return tessera::IoError("cannot write the manifest");
  return app;
}

struct Pxx {
  double p50 = 0, p99 = 0;
};

Pxx Read(const json& summary) {
  return {summary.value("p50", 0.0), summary.value("p99", 0.0)};
}

void Row(const char* name, Pxx v) {
  std::printf("  %-44s %8.1f %8.1f %8.2f %8.2f\n", name, v.p50, v.p99,
              v.p50 / kTickMs, v.p99 / kTickMs);
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) {
      quick = true;
    } else {
      std::fprintf(stderr, "usage: %s [--quick]\n", argv[0]);
      return 2;
    }
  }
  const int bots = quick ? 10 : 100;
  const fs::path dir = fs::temp_directory_path() /
                       ("tessera-transfer-bench-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  Result<fs::path> app = MakeApp(dir);
  if (!app.ok()) return Fail(app.status().ToString());

  tessera::e2e::SpawnOptions spawn;
  spawn.argv = {TESSERA_BIN, "dev", app->string(), "--port", "0", "--quiet"};
  spawn.log_path = dir / "server.log";
  spawn.ready_timeout_ms = 300000;  // compiles the guest first
  Result<std::unique_ptr<tessera::e2e::ServerProcess>> server =
      tessera::e2e::ServerProcess::Start(spawn);
  if (!server.ok()) return Fail("server: " + server.status().ToString());
  const std::string origin =
      "http://127.0.0.1:" + std::to_string((*server)->port());
  const json params = {{"groups", json::array()}};

  // Both shards run before the bots come (a dev join creates a shard): the
  // target must, for the moves; the source, so that 100 joins at once do
  // not race to create it.
  for (const char* id : {"talk-a", "talk-b"}) {
    Result<tessera::net::testing::HttpResult> created =
        tessera::net::testing::HttpCall(
            "127.0.0.1", (*server)->port(), "POST", "/api/dev/join",
            json{{"shard", id},
                 {"kind", "talk"},
                 {"params", params},
                 {"subscriber", "setup"}}
                .dump(),
            {{"Content-Type", "application/json"}}, 60000);
    if (!created.ok() || created->status != 200) {
      return Fail(std::string("creating ") + id + ": " +
                  (created.ok() ? created->body : created.status().ToString()));
    }
  }

  const fs::path report_path = dir / "report.json";
  const std::vector<std::string> bench = {TESSERA_BIN,
                                          "bench",
                                          "shard",
                                          "--url",
                                          origin,
                                          "--join",
                                          origin + "/api/dev/join",
                                          "--kind",
                                          "talk",
                                          "--shard-id",
                                          "talk-a",
                                          "--params",
                                          params.dump(),
                                          "--bots",
                                          std::to_string(bots),
                                          "--rate",
                                          "1",
                                          "--inputs-per-bot",
                                          "3",
                                          "--together",
                                          "2",
                                          "--duration",
                                          "20",
                                          "--input",
                                          R"({"join":{}})",
                                          "--input",
                                          R"({"go":{"to":"talk-b"}})",
                                          "--input",
                                          R"({"step":{}})",
                                          "--server-pid",
                                          std::to_string((*server)->pid()),
                                          "--report",
                                          report_path.string(),
                                          "--quiet"};
  Result<ProcessResult> ran = tessera::RunProcess(bench);
  if (!ran.ok()) return Fail("tessera bench: " + ran.status().ToString());
  std::ifstream in(report_path);
  const json r = json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!r.is_object()) {
    return Fail("no report (exit " + std::to_string(ran->exit_code) + "):\n" +
                ran->output);
  }

  const json& t = r["transfers"];
  const Pxx total = Read(t["time_ms"]);
  const Pxx notice = Read(t["notice_ms"]);
  const Pxx reconnect = Read(t["reconnect_ms"]);
  const Pxx baseline = Read(r["first_frame_ms"]);
  std::printf(
      "transfer_bench: %d bots on talk-a move to talk-b at once (the talk "
      "guest,\n`tessera dev`, 20 Hz, one machine)%s\n\n",
      bots, quick ? " (--quick: timings not meaningful)" : "");
  std::printf("  %-44s %8s %8s %8s %8s\n", "", "p50 ms", "p99 ms", "p50 tk",
              "p99 tk");
  Row("transfer: go's ACK -> first FRAME of talk-b", total);
  Row("  go's ACK -> TRANSFER (the server's move)", notice);
  Row("  TRANSFER -> first FRAME (the reconnect)", reconnect);
  Row("baseline: fresh connect -> first FRAME", baseline);
  const double own = total.p99 - baseline.p99;
  std::printf(
      "\n  the move's own cost (transfer p99 - baseline p99): %.1f ms = %.2f "
      "ticks (target <= 2 ticks: %s)\n",
      own, own / kTickMs,
      t.value("followed", 0) > 0 && own <= 2 * kTickMs ? "ok" : "--");
  std::printf("  transfer p99 / baseline p99: %.2f\n",
              baseline.p99 > 0 ? total.p99 / baseline.p99 : 0.0);

  int problems = 0;
  auto expect = [&problems](bool ok, const std::string& what) {
    if (ok) return;
    ++problems;
    std::fprintf(stderr, "check failed: %s\n", what.c_str());
  };
  expect(r["bots"]["connected"] == bots, "bots connected: " + r["bots"].dump());
  expect(t["followed"] == bots, "transfers: " + t.dump());
  expect(t["failed"] == 0, "transfers failed: " + t["failures"].dump());
  expect(
      r["inputs"]["acked"] == 3 * bots && r["inputs"]["refused"] == 0,
      "inputs (3 per bot accepted, the last by talk-b): " + r["inputs"].dump());
  expect(r["errors"] == 0, "errors: " + r["errors"].dump());
  expect(r["first_frame_ms"]["count"] == bots,
         "baseline samples: " + r["first_frame_ms"].dump());
  std::printf(
      "\ncross-check: %d problems (every bot moved and was accepted "
      "by talk-b)\n",
      problems);
  if (problems > 0) {
    std::fprintf(stderr, "tessera bench output:\n%s\nserver log:\n%s\n",
                 ran->output.c_str(), (*server)->Log().c_str());
  }
  server->reset();
  fs::remove_all(dir);
  return problems == 0 ? 0 : 1;
}
