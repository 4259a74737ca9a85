// Test-only fixture for the `tessera bench` end-to-end suites
// (bench_e2e_test.cc, range_e2e_test.cc): one `tessera dev` for the whole
// suite, serving a scratch copy of an example app, and `tessera bench` runs
// against it. The including target defines TESSERA_BIN and
// TESSERA_SOURCE_DIR.
#ifndef TESSERA_TESTS_LOADTEST_DEV_COPY_TEST_H_
#define TESSERA_TESTS_LOADTEST_DEV_COPY_TEST_H_

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/subprocess.h"
#include "tests/e2e/server_process.h"

namespace tessera::loadtest_e2e {

class DevCopyTest : public ::testing::Test {
 protected:
  // For SetUpTestSuite: copies examples/<example> to
  // <tmp>/tessera-<tag>-<pid>/<example> (a built .tessera/build and cache
  // are copied too, so that the server starts without compiling when the
  // source tree has them), less its database and dev secrets, and starts
  // `tessera dev` on the copy. Returns the copy's path. Its ASSERTs fail the
  // suite.
  static std::filesystem::path StartDevCopy(const std::string& example,
                                            const std::string& tag) {
    namespace fs = std::filesystem;
    dir_ = new fs::path(fs::temp_directory_path() /
                        ("tessera-" + tag + "-" + std::to_string(getpid())));
    fs::remove_all(*dir_);
    fs::create_directories(*dir_);
    const fs::path app = *dir_ / example;
    Result<ProcessResult> copy = RunProcess(
        {"cp", "-a", std::string(TESSERA_SOURCE_DIR) + "/examples/" + example,
         app.string()});
    EXPECT_TRUE(copy.ok() && copy->exit_code == 0);
    if (!copy.ok() || copy->exit_code != 0) return app;
    fs::remove(app / ".tessera/tessera.db");
    fs::remove(app / ".tessera/dev-secrets.json");
    e2e::SpawnOptions spawn;
    spawn.argv = {TESSERA_BIN, "dev", app.string(), "--port", "0"};
    spawn.log_path = *dir_ / "server.log";
    spawn.ready_timeout_ms = 300000;  // may build and compile the example
    Result<std::unique_ptr<e2e::ServerProcess>> server =
        e2e::ServerProcess::Start(spawn);
    EXPECT_TRUE(server.ok()) << server.status().ToString();
    if (server.ok()) server_ = server->release();
    return app;
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
    if (dir_ != nullptr) std::filesystem::remove_all(*dir_);
    delete dir_;
    dir_ = nullptr;
  }
  // Not a skip: a suite whose server did not start has tested nothing.
  // SetUpTestSuite's failures already fail the suite (gtest then reports
  // its tests as skipped and exits 1, "FAILED TEST SUITE"); should a test
  // still get here without a server, it fails too.
  void SetUp() override {
    if (server_ == nullptr) {
      FAIL() << "the dev server did not start (see SetUpTestSuite's failure)";
    }
  }

  static std::string Origin() {
    return "http://127.0.0.1:" + std::to_string(server_->port());
  }
  static std::filesystem::path Path(const std::string& name) {
    return *dir_ / name;
  }

  // Runs `tessera bench ARGS...` (under `env ENV` when `env` is not empty);
  // returns its exit code and output (stdout and stderr).
  static ProcessResult Bench(std::vector<std::string> args,
                             const std::string& env = "") {
    std::vector<std::string> argv;
    if (!env.empty()) argv = {"env", env};
    argv.push_back(TESSERA_BIN);
    argv.push_back("bench");
    argv.insert(argv.end(), args.begin(), args.end());
    Result<ProcessResult> r = RunProcess(argv);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : ProcessResult{};
  }

  // The JSON in `path`; discarded (not an object) when it does not parse.
  static nlohmann::json ReadJson(const std::filesystem::path& path) {
    std::ifstream in(path);
    return nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  }

  static inline e2e::ServerProcess* server_ = nullptr;
  static inline std::filesystem::path* dir_ = nullptr;
};

}  // namespace tessera::loadtest_e2e

#endif  // TESSERA_TESTS_LOADTEST_DEV_COPY_TEST_H_
