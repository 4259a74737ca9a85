// Helpers the end-to-end test binaries share beyond the fixture: an example
// app built once per test binary (AppTemplate) and a shard's saved state
// read straight from the app's SQLite store.
#ifndef TESSERA_TESTS_E2E_APP_TEMPLATE_H_
#define TESSERA_TESTS_E2E_APP_TEMPLATE_H_

#include <gtest/gtest.h>

#include <filesystem>
#include <optional>
#include <string>

namespace tessera::e2e {

struct AppTemplateOptions {
  std::string tessera_bin;  // the `tessera` binary
  // The app to copy (a directory; symlinks in it are followed).
  std::filesystem::path source;
  std::string kind;                     // for `tessera run --kind`
  std::optional<std::string> shard_id;  // for `tessera run --shard-id`
  // Names the scratch directory: TMP/tessera-<scratch>-<pid>.
  std::string scratch;
};

// An example app, built once per test binary: a copy of the source whose
// module is built (`tessera shards build`) and compiled into .tessera/cache
// (one `tessera run ... --ticks 1`), so that tests start servers without
// compiling. The build records the app's path (a different path means a
// rebuild), so it is built at app_path(), kept at path(), and each test
// copies it back to app_path() (CopyTo). SetUp also unsets every inherited
// TESSERA_* variable: `tessera ticket` must read the dev secret, not an
// inherited TESSERA_SHARD_TICKET_SECRET (servers get a clean environment
// anyway). Register it with ::testing::AddGlobalTestEnvironment.
class AppTemplate : public ::testing::Environment {
 public:
  explicit AppTemplate(AppTemplateOptions options)
      : options_(std::move(options)) {}

  void SetUp() override;
  void TearDown() override;

  // Where tests' copies of the app go (one test at a time).
  std::filesystem::path app_path() const { return root_ / options_.kind; }
  // The built app; empty if the build failed.
  const std::filesystem::path& path() const { return path_; }
  // A fresh copy of the built app at app_path() (any previous one is
  // removed); false if the build failed or the copy did.
  bool CopyToAppPath() const;

 private:
  AppTemplateOptions options_;
  std::filesystem::path root_;
  std::filesystem::path path_;
};

// The saved state of `shard_id` in the SQLite store at `db` ("" if none
// yet). Opens the database read-only, so it can run next to the server
// that writes it (WAL mode).
std::string ReadSavedState(const std::filesystem::path& db,
                           const std::string& shard_id);

// Polls ReadSavedState every 50 ms (the server announces saves nowhere
// else) until the state mentions `text`; false after `timeout_ms`.
bool WaitForSaveMentioning(const std::filesystem::path& db,
                           const std::string& shard_id, const std::string& text,
                           int timeout_ms);

}  // namespace tessera::e2e

#endif  // TESSERA_TESTS_E2E_APP_TEMPLATE_H_
