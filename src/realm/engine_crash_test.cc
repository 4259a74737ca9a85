// A realm killed with SIGKILL in the middle of a submit/flush burst
// reopens with every flushed version and the document they made.
//
// The writer is a child forked from this single-threaded test (the parent
// holds no SQLite connection across the fork). It submits bursts of 1..16
// commits, flushes, and reports the durable version on a pipe; the parent
// kills it after a few reports, reopens the realm and checks that nothing
// reported was lost. Several children write the same file in turn.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <random>
#include <string>

#include "realm/engine.h"
#include "store/sqlite_realm_store.h"
#include "store/test_util.h"

namespace tessera::realm {
namespace {

using store::SqliteRealmStore;
using store::testing::ScratchDir;
using store::testing::WaitFor;

constexpr int kChildOpenFailed = 10;
constexpr int kChildWriteFailed = 11;

RealmKindConfig CrashKind() {
  Result<RealmKindConfig> kind = ParseRealmKind(
      Json{{"name", "crash"}, {"snapshotEveryVersions", 16}, {"logWindow", 64}},
      "test");
  EXPECT_TRUE(kind.ok());
  return kind.ok() ? *kind : RealmKindConfig();
}

Json CrashInitial() { return {{"n", 0}, {"ring", Json::array()}}; }

// Commit `v`: n = v, ring[v % 4] = v (the ring grows to 4 first).
Patch CommitPatch(int64_t v) {
  Patch patch{{OpKind::kSet, Path{std::string("n")}, v}};
  if (v <= 4) {
    patch.push_back({OpKind::kAppend, Path{std::string("ring")}, v});
  } else {
    patch.push_back({OpKind::kSet, Path{std::string("ring"), v % 4}, v});
  }
  return patch;
}

[[noreturn]] void RunWriter(const std::string& path, int fd, uint32_t seed) {
  Result<std::unique_ptr<SqliteRealmStore>> store =
      SqliteRealmStore::Open(path);
  if (!store.ok()) _exit(kChildOpenFailed);
  Result<std::unique_ptr<RealmInstance>> realm =
      RealmInstance::Open(CrashKind(), "crash/r", store->get(), CrashInitial());
  if (!realm.ok()) _exit(kChildOpenFailed);
  std::mt19937 rng(seed);
  while (true) {
    const int burst = 1 + static_cast<int>(rng() % 16);
    for (int i = 0; i < burst; ++i) {
      const int64_t next = (*realm)->version() + 1;
      if (!(*realm)->Submit(CommitPatch(next), "").ok()) {
        _exit(kChildWriteFailed);
      }
    }
    if (!(*realm)->Flush().ok()) _exit(kChildWriteFailed);
    const int64_t durable = (*realm)->durable_version();
    if (write(fd, &durable, sizeof(durable)) !=
        static_cast<ssize_t>(sizeof(durable))) {
      _exit(kChildWriteFailed);
    }
  }
}

TEST(RealmEngineCrashTest, SigkillInASubmitFlushBurstLosesNoFlushedVersion) {
  ScratchDir dir;
  const std::string path = dir.File("crash/realms.db");
  std::mt19937 rng(20261202);
  int64_t previous = 0;
  for (int round = 0; round < 5; ++round) {
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      close(fds[0]);
      RunWriter(path, fds[1], static_cast<uint32_t>(round) + 1);
    }
    close(fds[1]);
    const int kill_after = 3 + static_cast<int>(rng() % 20);
    int64_t acked = -1;
    int64_t value = 0;
    for (int acks = 0; acks < kill_after &&
                       read(fds[0], &value, sizeof(value)) == sizeof(value);
         ++acks) {
      acked = value;
    }
    kill(pid, SIGKILL);
    while (read(fds[0], &value, sizeof(value)) == sizeof(value)) acked = value;
    close(fds[0]);
    const int status = WaitFor(pid);
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
        << "round " << round << ": the writer exited with "
        << (WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    ASSERT_GT(acked, previous) << "round " << round;

    Result<std::unique_ptr<SqliteRealmStore>> store =
        SqliteRealmStore::Open(path);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    Result<std::unique_ptr<RealmInstance>> realm = RealmInstance::Open(
        CrashKind(), "crash/r", store->get(), CrashInitial());
    ASSERT_TRUE(realm.ok()) << realm.status().ToString();
    const int64_t v = (*realm)->version();
    EXPECT_GE(v, acked) << "round " << round << ": a flushed version was lost";
    // At most the one flush in flight beyond the last report.
    EXPECT_LE(v, acked + 16) << "round " << round;
    Json want = CrashInitial();
    for (int64_t i = 1; i <= v; ++i)
      ASSERT_TRUE(ApplyPatch(CommitPatch(i), &want).ok());
    EXPECT_EQ((*realm)->state(), want) << "round " << round;
    previous = v;
  }
}

}  // namespace
}  // namespace tessera::realm
