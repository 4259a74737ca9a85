// The realm store killed with SIGKILL at random moments of a commit burst
// reopens with every acknowledged version exactly once, each realm's log
// consecutive after its newest snapshot, the realms of one group append
// all at the same head, and nothing past the group in flight. Each append
// also moves an alarm ("at-<head>", cancelling the last one): after the
// kill every realm holds exactly the alarm of its head, never none, two or
// one ahead of its log.
//
// The writer is a child forked from this single-threaded test (the parent
// holds no connection across the fork, as SQLite requires). It appends
// kBatch commits to each of kRealms realms per Append (one group commit),
// reports the new head on a pipe when Append returned Ok, and every
// kSnapshotEvery versions snapshots each realm. The same file is written
// by several children in turn, each continuing where the last one's
// reopened store left off.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "store/sqlite_realm_store.h"
#include "store/test_util.h"

namespace tessera::store {
namespace {

using realm::LoadedRealm;
using realm::LoggedCommit;
using realm::RealmAppend;
using realm::RealmSnapshot;
using testing::Payload;
using testing::ScratchDir;
using testing::WaitFor;

constexpr int kRealms = 4;
constexpr int64_t kBatch = 8;
constexpr int64_t kSnapshotEvery = 32;
constexpr int64_t kLogWindow = 64;

// Exit codes of a child that could not do its part.
constexpr int kChildOpenFailed = 10;
constexpr int kChildLoadFailed = 11;
constexpr int kChildAppendFailed = 12;
constexpr int kChildSnapshotFailed = 13;
constexpr int kChildPipeFailed = 14;

std::string CrashKey(int realm) { return "crash/r" + std::to_string(realm); }

// The patch of `version` of realm `realm`: a few dozen to a few hundred
// self-checking bytes, distinct per realm and version.
std::string CrashPatch(int realm, int64_t version) {
  return Payload(static_cast<uint64_t>(realm) * 1'000'000 + version,
                 40 + static_cast<size_t>(version % 7) * 50);
}

RealmSnapshot CrashSnapshot(int64_t version) {
  return {1, version, "crash-hash",
          R"({"version":)" + std::to_string(version) + "}"};
}

// The child: creates the realms (or continues them) and writes until
// killed.
[[noreturn]] void RunWriter(const std::string& path, int fd) {
  Result<std::unique_ptr<SqliteRealmStore>> store =
      SqliteRealmStore::Open(path);
  if (!store.ok()) _exit(kChildOpenFailed);
  int64_t head = -1;
  for (int r = 0; r < kRealms; ++r) {
    Result<std::optional<LoadedRealm>> loaded = (*store)->Load(CrashKey(r));
    if (!loaded.ok()) _exit(kChildLoadFailed);
    int64_t h = 0;
    if (loaded->has_value()) {
      h = (*loaded)->head_version();
    } else if (!(*store)->Create(CrashKey(r), "crash", CrashSnapshot(0)).ok()) {
      _exit(kChildLoadFailed);
    }
    if (head >= 0 && h != head) _exit(kChildLoadFailed);
    head = h;
  }
  while (true) {
    std::vector<RealmAppend> entries;
    for (int r = 0; r < kRealms; ++r) {
      RealmAppend entry{CrashKey(r), 1, {}, {}, {}};
      for (int64_t v = head + 1; v <= head + kBatch; ++v) {
        entry.commits.push_back({v, CrashPatch(r, v)});
      }
      entry.alarms_cancelled.push_back("at-" + std::to_string(head));
      entry.alarms_set.push_back(
          {"at-" + std::to_string(head + kBatch), head + kBatch, 0});
      entries.push_back(std::move(entry));
    }
    if (!(*store)->Append(entries).ok()) _exit(kChildAppendFailed);
    head += kBatch;
    if (write(fd, &head, sizeof(head)) != static_cast<ssize_t>(sizeof(head))) {
      _exit(kChildPipeFailed);
    }
    if (head % kSnapshotEvery == 0) {
      for (int r = 0; r < kRealms; ++r) {
        if (!(*store)
                 ->PutSnapshot(CrashKey(r), CrashSnapshot(head), kLogWindow)
                 .ok()) {
          _exit(kChildSnapshotFailed);
        }
      }
    }
  }
}

struct WriterRun {
  int64_t acked = -1;  // the last head the child reported, -1: none
  int status = 0;      // its wait status
};

// Runs a writer on `path` and SIGKILLs it after `kill_after`
// acknowledgements.
WriterRun RunAndKill(const std::string& path, int kill_after) {
  WriterRun run;
  int fds[2];
  EXPECT_EQ(pipe(fds), 0);
  pid_t pid = fork();
  EXPECT_GE(pid, 0);
  if (pid == 0) {
    close(fds[0]);
    RunWriter(path, fds[1]);
  }
  close(fds[1]);
  int64_t head = 0;
  int acks = 0;
  while (acks < kill_after && read(fds[0], &head, sizeof(head)) ==
                                  static_cast<ssize_t>(sizeof(head))) {
    run.acked = head;
    ++acks;
  }
  kill(pid, SIGKILL);
  // Acknowledgements written before the kill landed.
  while (read(fds[0], &head, sizeof(head)) ==
         static_cast<ssize_t>(sizeof(head))) {
    run.acked = head;
  }
  close(fds[0]);
  run.status = WaitFor(pid);
  return run;
}

// Reopens `path` and checks every realm; returns their common head (-1 on
// a failure).
int64_t CheckRealms(const std::string& path) {
  Result<std::unique_ptr<SqliteRealmStore>> store =
      SqliteRealmStore::Open(path);
  EXPECT_TRUE(store.ok()) << store.status().ToString();
  if (!store.ok()) return -1;
  int64_t common = -1;
  for (int r = 0; r < kRealms; ++r) {
    const std::string key = CrashKey(r);
    Result<std::optional<LoadedRealm>> loaded = (*store)->Load(key);
    EXPECT_TRUE(loaded.ok()) << key << ": " << loaded.status().ToString();
    if (!loaded.ok() || !loaded->has_value()) return -1;
    const LoadedRealm& realm = **loaded;
    EXPECT_EQ(realm.epoch, 1);
    EXPECT_EQ(realm.snapshot.version % kSnapshotEvery, 0) << key;
    EXPECT_EQ(realm.snapshot, CrashSnapshot(realm.snapshot.version)) << key;
    int64_t want = realm.snapshot.version;
    for (const LoggedCommit& commit : realm.tail) {
      EXPECT_EQ(commit.version, ++want) << key;
      EXPECT_EQ(commit.patch, CrashPatch(r, commit.version))
          << key << " version " << commit.version;
    }
    const int64_t head = realm.head_version();
    EXPECT_EQ(head % kBatch, 0) << key << ": a group was half written";
    if (common >= 0) {
      EXPECT_EQ(head, common) << key << ": the group commit was split";
    }
    common = head;
    std::vector<realm::RealmAlarm> alarms;
    Result<std::vector<realm::StoredAlarm>> stored = (*store)->ListAlarms();
    EXPECT_TRUE(stored.ok()) << stored.status().ToString();
    if (!stored.ok()) return -1;
    for (const realm::StoredAlarm& a : *stored) {
      if (a.key == key) alarms.push_back(a.alarm);
    }
    if (head > 0) {
      EXPECT_EQ(alarms, (std::vector<realm::RealmAlarm>{
                            {"at-" + std::to_string(head), head, 0}}))
          << key;
    } else {
      EXPECT_TRUE(alarms.empty()) << key;
    }
    // The reconnect window behind the snapshot survived: every version
    // after snapshot - window replays, once, in order.
    const int64_t from =
        std::max<int64_t>(0, realm.snapshot.version - kLogWindow);
    Result<std::vector<LoggedCommit>> log =
        (*store)->ReadLog(key, 1, from, 100000);
    EXPECT_TRUE(log.ok()) << key << ": " << log.status().ToString();
    if (!log.ok()) return -1;
    EXPECT_EQ(static_cast<int64_t>(log->size()), head - from) << key;
    for (size_t i = 0; i < log->size(); ++i) {
      EXPECT_EQ((*log)[i].version, from + 1 + static_cast<int64_t>(i)) << key;
      EXPECT_EQ((*log)[i].patch, CrashPatch(r, (*log)[i].version)) << key;
    }
  }
  return common;
}

TEST(SqliteRealmCrashTest, SigkillInACommitBurstKeepsEveryAcknowledgedVersion) {
  ScratchDir dir;
  const std::string path = dir.File("crash/realms.db");
  std::mt19937 rng(20261202);
  int64_t previous = 0;
  for (int round = 0; round < 6; ++round) {
    const int kill_after = 3 + static_cast<int>(rng() % 20);
    WriterRun run = RunAndKill(path, kill_after);
    ASSERT_TRUE(WIFSIGNALED(run.status) && WTERMSIG(run.status) == SIGKILL)
        << "round " << round << ": the child exited with "
        << WEXITSTATUS(run.status);
    ASSERT_GE(run.acked, previous + kBatch) << "round " << round;
    const int64_t head = CheckRealms(path);
    ASSERT_GE(head, 0) << "round " << round;
    // Every acknowledged group is there; at most the one in flight when
    // the kill came is there besides (committed, not yet reported).
    EXPECT_GE(head, run.acked) << "round " << round;
    EXPECT_LE(head, run.acked + kBatch) << "round " << round;
    previous = head;
  }
  EXPECT_GT(previous, kSnapshotEvery);  // the rounds went past snapshots
}

}  // namespace
}  // namespace tessera::store
