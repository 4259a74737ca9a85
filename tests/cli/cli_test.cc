// The `tessera` command as a user runs it: building the example app,
// checking modules, and running a shard from the command line.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "common/subprocess.h"
#include "wasm/testing/wat.h"

namespace tessera {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

ProcessResult Tessera(std::vector<std::string> args) {
  args.insert(args.begin(), TESSERA_BIN);
  auto r = RunProcess(args);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : ProcessResult{};
}

// A scratch copy of the example arena app, so tests never write into the
// source tree.
class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tessera-cli-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path CopyArena() {
    fs::path app = dir_ / "arena";
    fs::copy(fs::path(TESSERA_SOURCE_DIR) / "examples/arena", app,
             fs::copy_options::recursive);
    fs::remove_all(app / ".tessera");
    return app;
  }
  void Write(const fs::path& p, const std::string& text) {
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
  }
  static std::vector<json> JsonLines(const std::string& out) {
    std::vector<json> lines;
    std::istringstream in(out);
    std::string line;
    while (std::getline(in, line)) {
      if (line.empty() || line[0] != '{') continue;
      lines.push_back(json::parse(line));
    }
    return lines;
  }

  fs::path dir_;
};

TEST_F(CliTest, BuildsAndRunsTheArenaWithRejections) {
  fs::path app = CopyArena();
  ProcessResult build = Tessera({"shards", "build", app.string()});
  ASSERT_EQ(build.exit_code, 0) << build.output;
  EXPECT_TRUE(fs::exists(app / ".tessera/build/arena.wasm"));

  Write(dir_ / "inputs.jsonl",
        R"({"tick":1,"subscriber":"alice","input":{"move_to":{"x":10,"y":20}}}
{"tick":2,"subscriber":"bob","input":{"move_to":{"x":900,"y":20}}}
{"tick":3,"subscriber":"alice","input":{"move_to":{"x":11,"y":21}}}
)");
  ProcessResult run =
      Tessera({"run", app.string(), "--kind", "arena", "--params",
               R"({"width":800,"height":500})", "--ticks", "4", "--inputs",
               (dir_ / "inputs.jsonl").string()});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  auto lines = JsonLines(run.output);
  ASSERT_EQ(lines.size(), 4u) << run.output;
  EXPECT_EQ(lines[0]["tick"], 1);
  EXPECT_EQ(lines[0]["snapshot"]["players"][0]["id"], "alice");
  EXPECT_EQ(lines[0]["snapshot"]["players"][0]["x"], 10.0);
  EXPECT_EQ(lines[1]["inputs"][0]["accepted"], false);
  EXPECT_EQ(lines[1]["inputs"][0]["rejection"], "outside the arena");
  EXPECT_EQ(lines[1]["snapshot"]["players"].size(), 1u);  // bob never joined
  EXPECT_EQ(lines[2]["snapshot"]["players"][0]["x"], 11.0);

  // A second build finds everything up to date.
  ProcessResult again = Tessera({"shards", "build", app.string()});
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_NE(again.output.find("up to date"), std::string::npos) << again.output;
}

TEST_F(CliTest, BuildShowsTheCompilersErrorsVerbatim) {
  fs::path app = CopyArena();
  Write(app / "shards/arena/broken.cc", "int f() { return undefined_name; }\n");
  ProcessResult build = Tessera({"shards", "build", app.string()});
  EXPECT_NE(build.exit_code, 0);
  EXPECT_NE(build.output.find("broken.cc:1:"), std::string::npos)
      << build.output;
  EXPECT_NE(build.output.find("undefined_name"), std::string::npos)
      << build.output;
}

TEST_F(CliTest, CheckDescribesAModuleOrSaysWhyItIsRefused) {
  fs::path app = CopyArena();
  ASSERT_EQ(Tessera({"shards", "build", app.string()}).exit_code, 0);
  ProcessResult ok = Tessera(
      {"shards", "check", (app / ".tessera/build/arena.wasm").string()});
  EXPECT_EQ(ok.exit_code, 0) << ok.output;
  EXPECT_NE(ok.output.find("tessera_apply_input"), std::string::npos)
      << ok.output;
  EXPECT_NE(ok.output.find("tessera_v1.log"), std::string::npos) << ok.output;

  auto wasi = wasm::testing::ShardWat(
      "",
      R"((import "wasi_snapshot_preview1" "proc_exit" (func (param i32))))");
  fs::path wasi_path = dir_ / "wasi.wasm";
  std::ofstream(wasi_path, std::ios::binary)
      .write(reinterpret_cast<const char*>(wasi.data()), wasi.size());
  ProcessResult refused = Tessera({"shards", "check", wasi_path.string()});
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_NE(refused.output.find("refused"), std::string::npos)
      << refused.output;
  EXPECT_NE(refused.output.find("wasi_snapshot_preview1.proc_exit"),
            std::string::npos)
      << refused.output;

  Write(dir_ / "text.wasm", "this is not wasm");
  ProcessResult garbage =
      Tessera({"shards", "check", (dir_ / "text.wasm").string()});
  EXPECT_EQ(garbage.exit_code, 1);
  EXPECT_NE(garbage.output.find("not a WebAssembly module"), std::string::npos)
      << garbage.output;
}

TEST_F(CliTest, RunReportsAFailedShardAndExitsNonZero) {
  Write(dir_ / "app/tessera.json",
        std::string(R"({"name":"t","shards":[{"name":"spin","wasm":")") +
            TESSERA_GUEST_SPIN +
            R"(","codec":"json","fuelPerTick":1000000}]})");
  ProcessResult run =
      Tessera({"run", (dir_ / "app").string(), "--kind", "spin", "--params",
               R"({"mode":"loop"})", "--ticks", "3"});
  EXPECT_EQ(run.exit_code, 1) << run.output;
  auto lines = JsonLines(run.output);
  ASSERT_FALSE(lines.empty()) << run.output;
  EXPECT_EQ(lines.back()["stopped"], "failed");
  EXPECT_NE(lines.back()["message"].get<std::string>().find("fuel exhausted"),
            std::string::npos)
      << run.output;
}

TEST_F(CliTest, UnknownKindAndBadManifestAreClearErrors) {
  fs::path app = CopyArena();
  ProcessResult run =
      Tessera({"run", app.string(), "--kind", "nope", "--ticks", "1"});
  EXPECT_NE(run.exit_code, 0);
  EXPECT_NE(run.output.find("nope"), std::string::npos) << run.output;
  Write(
      app / "tessera.json",
      R"({"name":"x","shards":[{"name":"arena","source":"shards/arena","tickrate":20}]})");
  ProcessResult bad = Tessera({"shards", "build", app.string()});
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.output.find("tickrate"), std::string::npos) << bad.output;
}

TEST_F(CliTest, DevOnATakenPortSaysSoBeforeBuildingAnything) {
  // Someone else listens on a port of the loopback.
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(listen(fd, 1), 0);
  socklen_t len = sizeof addr;
  ASSERT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  const std::string port = std::to_string(ntohs(addr.sin_port));
  fs::path app = CopyArena();
  ProcessResult dev =
      Tessera({"dev", app.string(), "--host", "127.0.0.1", "--port", port});
  close(fd);
  EXPECT_EQ(dev.exit_code, 1) << dev.output;
  EXPECT_NE(dev.output.find("port " + port + " on 127.0.0.1 is taken"),
            std::string::npos)
      << dev.output;
  EXPECT_NE(dev.output.find("--port"), std::string::npos) << dev.output;
  // Nothing was compiled: no build cache was made in the app.
  EXPECT_FALSE(fs::exists(app / ".tessera" / "build")) << dev.output;
}

}  // namespace
}  // namespace tessera
