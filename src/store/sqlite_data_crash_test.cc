// The SQLite data store killed with SIGKILL during and right after commits
// of write transactions reopens with every committed row, change event and
// keyed call exactly once and nothing of a transaction that did not commit
// (the harness: data_crash_harness.h).
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "store/data_crash_harness.h"
#include "store/sqlite_data_store.h"
#include "store/test_util.h"

namespace tessera::store {
namespace {

using testing::ScratchDir;

Result<std::unique_ptr<data::DataStore>> OpenSqlite(const std::string& path) {
  Result<std::unique_ptr<SqliteDataStore>> store = SqliteDataStore::Open(path);
  if (!store.ok()) return store.status();
  return std::unique_ptr<data::DataStore>(std::move(store).value());
}

// The child: writes transactions until killed.
TEST(SqliteDataCrashChild, DISABLED_Writes) {
  testing::RunCrashWriter(OpenSqlite);
}

class SqliteDataCrashTest : public ::testing::Test {
 protected:
  testing::CrashSetup Crash() {
    return {"SqliteDataCrashChild.DISABLED_Writes", OpenSqlite, [this] {
              return dir_.File("crash" + std::to_string(++runs_) + "/data.db");
            }};
  }
  ScratchDir dir_;
  int runs_ = 0;
};

TEST_F(SqliteDataCrashTest, SigkillDuringCommitsKeepsEachCommittedTxnOnce) {
  testing::ExpectSigkillDuringCommitsKeepsEachCommittedTxnOnce(Crash());
}

TEST_F(SqliteDataCrashTest, KillBeforeCommitLosesTheWholeTxn) {
  testing::ExpectKillBeforeCommitLosesTheWholeTxn(Crash());
}

TEST_F(SqliteDataCrashTest, KillRightAfterCommitKeepsTheTxn) {
  testing::ExpectKillRightAfterCommitKeepsTheTxn(Crash());
}

}  // namespace
}  // namespace tessera::store
