#include "tests/e2e/app_template.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <thread>
#include <vector>

#include "common/subprocess.h"

extern char** environ;

namespace tessera::e2e {
namespace {

namespace fs = std::filesystem;

void Run(const std::vector<std::string>& argv) {
  Result<ProcessResult> r = RunProcess(argv);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->exit_code, 0) << JoinCommand(argv) << "\n" << r->output;
}

}  // namespace

void AppTemplate::SetUp() {
  std::vector<std::string> inherited;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string var = *e;
    if (var.rfind("TESSERA_", 0) == 0) {
      inherited.push_back(var.substr(0, var.find('=')));
    }
  }
  for (const std::string& name : inherited) unsetenv(name.c_str());
  root_ = fs::temp_directory_path() /
          ("tessera-" + options_.scratch + "-" + std::to_string(getpid()));
  fs::remove_all(root_);
  fs::create_directories(root_);
  const fs::path app = app_path();
  // -L: examples/arena-rust's web/ is a link to the C++ arena's page.
  Run({"cp", "-a", "-L", options_.source.string(), app.string()});
  fs::remove_all(app / ".tessera");
  Run({options_.tessera_bin, "shards", "build", app.string()});
  std::vector<std::string> run = {options_.tessera_bin, "run", app.string(),
                                  "--kind", options_.kind};
  if (options_.shard_id.has_value()) {
    run.insert(run.end(), {"--shard-id", *options_.shard_id});
  }
  run.insert(run.end(), {"--ticks", "1"});
  Run(run);
  if (::testing::Test::HasFatalFailure()) return;
  // mv keeps modification times: the build stays up to date.
  Run({"mv", app.string(), (root_ / "template").string()});
  if (!::testing::Test::HasFatalFailure()) path_ = root_ / "template";
}

void AppTemplate::TearDown() { fs::remove_all(root_); }

bool AppTemplate::CopyToAppPath() const {
  if (path_.empty()) return false;
  const fs::path app = app_path();
  fs::remove_all(app);
  // cp -a keeps modification times, so the build stays up to date.
  Result<ProcessResult> r =
      RunProcess({"cp", "-a", path_.string(), app.string()});
  return r.ok() && r->exit_code == 0;
}

std::string ReadSavedState(const fs::path& db_path,
                           const std::string& shard_id) {
  sqlite3* db = nullptr;
  std::string state;
  if (sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) ==
      SQLITE_OK) {
    sqlite3_busy_timeout(db, 1000);
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db, "SELECT state FROM saves WHERE shard_id = ?", -1,
                           &stmt, nullptr) == SQLITE_OK) {
      sqlite3_bind_text(stmt, 1, shard_id.c_str(), -1, SQLITE_TRANSIENT);
      if (sqlite3_step(stmt) == SQLITE_ROW) {
        const void* blob = sqlite3_column_blob(stmt, 0);
        const int size = sqlite3_column_bytes(stmt, 0);
        if (blob != nullptr) {
          state.assign(static_cast<const char*>(blob),
                       static_cast<size_t>(size));
        }
      }
    }
    sqlite3_finalize(stmt);
  }
  sqlite3_close(db);
  return state;
}

bool WaitForSaveMentioning(const fs::path& db, const std::string& shard_id,
                           const std::string& text, int timeout_ms) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  while (Clock::now() < deadline) {
    if (ReadSavedState(db, shard_id).find(text) != std::string::npos) {
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

}  // namespace tessera::e2e
