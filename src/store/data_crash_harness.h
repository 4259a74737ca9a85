// The kill -9 tests of a data store (store/sqlite_data_crash_test.cc,
// postgres/pg_data_store_test.cc): a store killed with SIGKILL during and
// right after commits of write transactions reopens with every committed
// row, change event and keyed call exactly once and nothing of a
// transaction that did not commit.
//
// The writer is a real child process: the test binary exec'd again to run
// only a disabled child test that calls RunCrashWriter (so
// TESSERA_FAULT_POINT is read fresh by the child, never by the test
// process). Each of its transactions inserts Item "i<n>" (with a payload
// that makes commits take a while), sets Counter "c" to n and stores keyed
// call "k<n>"; it reports each n whose Commit returned OK on a pipe.
// Test-only; header-only, with gtest.
#ifndef TESSERA_STORE_DATA_CRASH_HARNESS_H_
#define TESSERA_STORE_DATA_CRASH_HARNESS_H_

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "data/data_store.h"
#include "data/schema.h"
#include "store/test_util.h"

namespace tessera::store::testing {

// Opens the store at `where` (a file path, a URL).
using DataStoreOpener =
    std::function<Result<std::unique_ptr<data::DataStore>>(const std::string&)>;

// The child test that calls RunCrashWriter, and a fresh location per run.
struct CrashSetup {
  std::string child_test;  // "Suite.DISABLED_Name"
  DataStoreOpener open;
  std::function<std::string()> fresh_where;
};

inline constexpr char kCrashWhereEnv[] = "TESSERA_DATA_CRASH_DB";
inline constexpr char kCrashFdEnv[] = "TESSERA_DATA_CRASH_FD";

inline data::DataSchema CrashSchema() {
  data::EntityType item;
  item.name = "Item";
  item.fields = {{"n", data::FieldType::kInt, true, ""},
                 {"payload", data::FieldType::kString, true, ""}};
  item.indexes = {{"n", true}};
  data::EntityType counter;
  counter.name = "Counter";
  counter.fields = {{"n", data::FieldType::kInt, true, ""}};
  data::DataSchema schema;
  schema.types = {item, counter};
  return schema;
}

// Printable bytes derived from Payload(n, size) (string fields are text).
inline std::string PayloadText(uint64_t n) {
  std::string bytes = Payload(n, 2000 + (n % 16) * 2048);
  for (char& c : bytes) c = static_cast<char>('a' + (c & 0x0f));
  return bytes;
}

// The child's body: writes transactions to the store named by the
// environment until killed.
inline void RunCrashWriter(const DataStoreOpener& open) {
  using nlohmann::json;
  const char* path = getenv(kCrashWhereEnv);
  const char* fd_text = getenv(kCrashFdEnv);
  ASSERT_NE(path, nullptr);
  ASSERT_NE(fd_text, nullptr);
  const int fd = atoi(fd_text);
  Result<std::unique_ptr<data::DataStore>> store = open(path);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  ASSERT_TRUE((*store)->ApplySchema(CrashSchema()).ok());
  {
    Result<std::unique_ptr<data::DataTxn>> txn =
        (*store)->Begin(data::TxnMode::kWrite, 5000);
    ASSERT_TRUE(txn.ok());
    ASSERT_TRUE((*txn)->Insert("Counter", "c", R"({"n":0})", "setup").ok());
    ASSERT_TRUE((*txn)->Commit().ok());
  }
  for (uint64_t n = 1;; ++n) {
    Result<std::unique_ptr<data::DataTxn>> txn =
        (*store)->Begin(data::TxnMode::kWrite, 5000);
    ASSERT_TRUE(txn.ok()) << txn.status().ToString();
    json fields = {{"n", n}, {"payload", PayloadText(n)}};
    ASSERT_TRUE(
        (*txn)
            ->Insert("Item", "i" + std::to_string(n), fields.dump(), "child")
            .ok());
    ASSERT_TRUE(
        (*txn)->Update("Counter", "c", json({{"n", n}}).dump(), "child").ok());
    ASSERT_TRUE((*txn)
                    ->PutCall({"k" + std::to_string(n), "m.f", "h", true,
                               std::to_string(n), "", 0})
                    .ok());
    ASSERT_TRUE((*txn)->Commit().ok());
    ASSERT_EQ(write(fd, &n, sizeof(n)), static_cast<ssize_t>(sizeof(n)));
  }
}

struct ChildRun {
  uint64_t acked = 0;  // the last n the child reported committed
  int status = 0;      // its wait status
};

// Starts the child on `path` (with TESSERA_FAULT_POINT = `fault` unless
// empty); kills it after `kill_after` acknowledgements (0: lets it run
// until it dies by itself).
inline ChildRun RunChild(const std::string& child_test, const std::string& path,
                         const std::string& fault, uint64_t kill_after) {
  ChildRun run;
  int fds[2];
  EXPECT_EQ(pipe(fds), 0);
  pid_t pid = fork();
  EXPECT_GE(pid, 0);
  if (pid == 0) {
    close(fds[0]);
    setenv(kCrashWhereEnv, path.c_str(), 1);
    setenv(kCrashFdEnv, std::to_string(fds[1]).c_str(), 1);
    if (fault.empty()) {
      unsetenv("TESSERA_FAULT_POINT");
    } else {
      setenv("TESSERA_FAULT_POINT", fault.c_str(), 1);
    }
    int devnull = open("/dev/null", O_WRONLY);
    if (devnull >= 0) dup2(devnull, STDOUT_FILENO);
    const std::string filter = "--gtest_filter=" + child_test;
    execl("/proc/self/exe", "crash_child", filter.c_str(),
          "--gtest_also_run_disabled_tests", static_cast<char*>(nullptr));
    _exit(127);
  }
  close(fds[1]);
  uint64_t n = 0;
  while ((kill_after == 0 || run.acked < kill_after) &&
         read(fds[0], &n, sizeof(n)) == sizeof(n)) {
    run.acked = n;
  }
  if (kill_after != 0) kill(pid, SIGKILL);
  while (read(fds[0], &n, sizeof(n)) == sizeof(n)) run.acked = n;
  close(fds[0]);
  run.status = WaitFor(pid);
  return run;
}

// Reopens `path` and checks that transactions 1..m committed whole and
// nothing after; returns m.
inline int64_t CheckCommitted(const DataStoreOpener& open,
                              const std::string& path) {
  using nlohmann::json;
  Result<std::unique_ptr<data::DataStore>> store = open(path);
  EXPECT_TRUE(store.ok()) << store.status().ToString();
  if (!store.ok()) return -1;
  Result<std::unique_ptr<data::DataTxn>> txn =
      (*store)->Begin(data::TxnMode::kRead, 0);
  EXPECT_TRUE(txn.ok());
  if (!txn.ok()) return -1;
  Result<int64_t> m = (*txn)->Count("Item", data::Filter());
  EXPECT_TRUE(m.ok());
  if (!m.ok()) return -1;
  Result<std::optional<data::Row>> counter = (*txn)->Get("Counter", "c");
  EXPECT_TRUE(counter.ok() && counter->has_value());
  if (!counter.ok() || !counter->has_value()) return -1;
  EXPECT_EQ(json::parse((*counter)->fields_json)["n"], *m);
  EXPECT_EQ((*counter)->version, *m + 1);
  for (int64_t i = 1; i <= *m; ++i) {
    Result<std::optional<data::Row>> item =
        (*txn)->Get("Item", "i" + std::to_string(i));
    EXPECT_TRUE(item.ok() && item->has_value()) << i;
    if (!item.ok() || !item->has_value()) continue;
    json fields = json::parse((*item)->fields_json);
    EXPECT_EQ(fields["n"], i);
    EXPECT_EQ(fields["payload"], PayloadText(static_cast<uint64_t>(i))) << i;
    Result<std::optional<data::StoredCall>> call =
        (*txn)->GetCall("k" + std::to_string(i));
    EXPECT_TRUE(call.ok() && call->has_value()) << i;
    if (call.ok() && call->has_value()) {
      EXPECT_EQ((*call)->result_json, std::to_string(i));
    }
  }
  Result<std::optional<data::StoredCall>> next =
      (*txn)->GetCall("k" + std::to_string(*m + 1));
  EXPECT_TRUE(next.ok() && !next->has_value());

  // The feed: the counter's creation, then per transaction the item's
  // creation and the counter's update, each once, in commit order.
  std::vector<data::ChangeEvent> all;
  int64_t after = 0;
  while (true) {
    Result<std::vector<data::ChangeEvent>> page =
        (*store)->Changes(after, 1000);
    EXPECT_TRUE(page.ok());
    if (!page.ok() || page->empty()) break;
    after = page->back().seq;
    all.insert(all.end(), page->begin(), page->end());
  }
  EXPECT_EQ(static_cast<int64_t>(all.size()), 1 + 2 * *m);
  std::set<std::string> created;
  for (size_t k = 0; k < all.size(); ++k) {
    if (k > 0) {
      EXPECT_GT(all[k].seq, all[k - 1].seq);
    }
    if (k == 0) {
      EXPECT_EQ(all[k].id, "c");
      continue;
    }
    const int64_t txn_no = static_cast<int64_t>((k + 1) / 2);
    if (k % 2 == 1) {
      EXPECT_EQ(all[k].op, data::ChangeOp::kCreated);
      EXPECT_EQ(all[k].id, "i" + std::to_string(txn_no));
      EXPECT_TRUE(created.insert(all[k].id).second) << all[k].id;
    } else {
      EXPECT_EQ(all[k].op, data::ChangeOp::kUpdated);
      EXPECT_EQ(all[k].id, "c");
      if (all[k].fields.size() == 1) {
        EXPECT_EQ(all[k].fields[0].new_json, std::to_string(txn_no));
      }
    }
  }
  // The store takes writes again.
  (void)(*txn)->Commit();
  Result<std::unique_ptr<data::DataTxn>> write =
      (*store)->Begin(data::TxnMode::kWrite, 1000);
  EXPECT_TRUE(write.ok()) << write.status().ToString();
  if (write.ok()) {
    EXPECT_TRUE((*write)
                    ->Insert("Item", "after",
                             json({{"n", -1}, {"payload", "x"}}).dump(), "t")
                    .ok());
    EXPECT_TRUE((*write)->Commit().ok());
  }
  return *m;
}

inline void ExpectSigkillDuringCommitsKeepsEachCommittedTxnOnce(
    const CrashSetup& setup) {
  for (uint64_t attempt = 0; attempt < 4; ++attempt) {
    const std::string path = setup.fresh_where();
    const uint64_t kill_after = 8 + attempt * 5;
    ChildRun run = RunChild(setup.child_test, path, "", kill_after);
    ASSERT_TRUE(WIFSIGNALED(run.status))
        << "child exited with " << WEXITSTATUS(run.status);
    ASSERT_GE(run.acked, kill_after);
    int64_t m = CheckCommitted(setup.open, path);
    // The transaction after the last acknowledged one may have committed
    // before the child could report it; nothing older is missing.
    EXPECT_GE(m, static_cast<int64_t>(run.acked));
    EXPECT_LE(m, static_cast<int64_t>(run.acked) + 1);
  }
}

// Killed after the change rows are written, before COMMIT: the
// transaction is gone whole. (Hit 1 is the setup transaction, so hit 4 is
// transaction 3.)
inline void ExpectKillBeforeCommitLosesTheWholeTxn(const CrashSetup& setup) {
  const std::string path = setup.fresh_where();
  ChildRun run =
      RunChild(setup.child_test, path, "data_store_before_commit@4", 0);
  ASSERT_TRUE(WIFSIGNALED(run.status) && WTERMSIG(run.status) == SIGKILL)
      << "child status " << run.status;
  EXPECT_EQ(run.acked, 2u);
  EXPECT_EQ(CheckCommitted(setup.open, path), 2);
}

// Killed right after COMMIT, before Commit returned: the transaction is
// durable though nobody heard of it.
inline void ExpectKillRightAfterCommitKeepsTheTxn(const CrashSetup& setup) {
  const std::string path = setup.fresh_where();
  ChildRun run =
      RunChild(setup.child_test, path, "data_store_after_commit@4", 0);
  ASSERT_TRUE(WIFSIGNALED(run.status) && WTERMSIG(run.status) == SIGKILL)
      << "child status " << run.status;
  EXPECT_EQ(run.acked, 2u);
  EXPECT_EQ(CheckCommitted(setup.open, path), 3);
}

}  // namespace tessera::store::testing

#endif  // TESSERA_STORE_DATA_CRASH_HARNESS_H_
