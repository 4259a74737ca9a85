// A store written by a process that dies without closing it reopens with
// every write that had returned OK (SQLite rolls an interrupted one back).
//
// The children are forked from this single-threaded test (no other test
// runs concurrently) and open their own connection; the parent keeps no
// connection open across the fork, as SQLite requires.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <string>

#include "store/sqlite_store.h"
#include "store/test_util.h"

namespace tessera::store {
namespace {

using testing::WaitFor;

using testing::CheckPayload;
using testing::Payload;
using testing::ScratchDir;

// Exit codes of a child that could not do its part.
constexpr int kChildOpenFailed = 10;
constexpr int kChildWriteFailed = 11;

TEST(SqliteCrashTest, ExitWithoutCloseKeepsCompletedWrites) {
  ScratchDir dir;
  std::string path = dir.File("crash/exit.db");
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    Result<std::unique_ptr<SqliteStore>> store = SqliteStore::Open(path);
    if (!store.ok()) _exit(kChildOpenFailed);
    ShardRecord r;
    r.id = "s";
    r.kind = "arena";
    r.status = "running";
    if (!(*store)->PutShard(r).ok() ||
        !(*store)->Save("s", Payload(1, 3000)).ok() ||
        !(*store)->Save("s", Payload(2, 5000)).ok()) {
      _exit(kChildWriteFailed);
    }
    (void)store.value().release();  // never closed
    _exit(0);
  }
  int status = WaitFor(pid);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 0);

  Result<std::unique_ptr<SqliteStore>> store = SqliteStore::Open(path);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  Result<std::optional<std::string>> state = (*store)->Load("s");
  ASSERT_TRUE(state.ok() && state->has_value());
  EXPECT_EQ(CheckPayload(**state), 2);
  Result<std::vector<ShardRecord>> list = (*store)->ListShards();
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->size(), 1u);
  EXPECT_EQ((*list)[0].kind, "arena");
}

// The child saves ever larger states and reports each one that returned OK
// on a pipe; the parent SIGKILLs it while it is most likely mid-save.
TEST(SqliteCrashTest, SigkillMidRunKeepsTheLastCompletedSave) {
  for (int attempt = 0; attempt < 5; ++attempt) {
    ScratchDir dir;
    std::string path = dir.File("crash/kill.db");
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      close(fds[0]);
      Result<std::unique_ptr<SqliteStore>> store = SqliteStore::Open(path);
      if (!store.ok()) _exit(kChildOpenFailed);
      for (uint64_t seq = 1;; ++seq) {
        if (!(*store)->Save("s", Payload(seq, 1000 + (seq % 64) * 4096)).ok()) {
          _exit(kChildWriteFailed);
        }
        if (write(fds[1], &seq, sizeof(seq)) != sizeof(seq)) {
          _exit(kChildWriteFailed);
        }
      }
    }
    close(fds[1]);
    uint64_t acked = 0;
    uint64_t seq = 0;
    const uint64_t kill_after = 20 + attempt * 7;
    while (acked < kill_after &&
           read(fds[0], &seq, sizeof(seq)) == sizeof(seq)) {
      acked = seq;
    }
    kill(pid, SIGKILL);
    // Saves acknowledged before the signal landed.
    while (read(fds[0], &seq, sizeof(seq)) == sizeof(seq)) acked = seq;
    close(fds[0]);
    int status = WaitFor(pid);
    ASSERT_TRUE(WIFSIGNALED(status))
        << "child exited with " << WEXITSTATUS(status);
    ASSERT_GE(acked, kill_after);

    Result<std::unique_ptr<SqliteStore>> store = SqliteStore::Open(path);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    Result<std::optional<std::string>> state = (*store)->Load("s");
    ASSERT_TRUE(state.ok()) << state.status().ToString();
    ASSERT_TRUE(state->has_value());
    int64_t loaded = CheckPayload(**state);
    // The save after the last acknowledged one may have committed before
    // the child could report it; nothing older, nothing torn.
    EXPECT_GE(loaded, static_cast<int64_t>(acked));
    EXPECT_LE(loaded, static_cast<int64_t>(acked) + 1);
  }
}

}  // namespace
}  // namespace tessera::store
