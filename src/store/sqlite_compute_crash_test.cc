// The compute store under kill -9: a child process writes state blobs
// (guarded and as the lease holder, up to ~256 KiB), versions with their
// files, usage rows and batches of runs against a SQLite store and is
// SIGKILLed at a random moment. After reopening, the store must be exactly
// what the acknowledged writes made, plus at most the one in flight,
// applied whole: the same sequence on a MemoryComputeStore (the model) up
// to either point describes the same store. So every acknowledged write is
// there exactly once, state revisions are consecutive (the child also
// checks each returned revision is the previous + 1), and every blob and
// file is a self-checking Payload naming the write it came from.
//
// As in sqlite_crash_test.cc, the child is forked from this single-threaded
// test and opens its own connection; the parent holds none across the fork.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "common/clock.h"
#include "compute/memory_compute_store.h"
#include "store/sqlite_compute_store.h"
#include "store/test_util.h"

namespace tessera::store {
namespace {

using testing::WaitFor;

using compute::ComputeStore;
using testing::CheckPayload;
using testing::Payload;
using testing::ScratchDir;

constexpr int kChildOpenFailed = 10;
constexpr int kChildWriteFailed = 11;
constexpr int kChildWrongRevision = 12;
constexpr int64_t kStartUs = 1'800'000'000'000'000;

// The writer's side of the sequence: its module and the revision it last
// wrote (what a guarded writer expects to find).
struct Writer {
  int64_t module_id = 0;
  int64_t revision = 0;
};

// Write `k` (1-based) of the sequence: k % 4 == 0 a state blob (the lease
// holder's every 8th, otherwise guarded by the last revision), 1 a version
// with two files, 2 usage of two minutes, 3 a batch of three runs.
Status Apply(ComputeStore& store, Writer& w, int64_t k) {
  const auto seq = static_cast<uint64_t>(k);
  switch (k % 4) {
    case 0: {
      const std::string blob =
          Payload(seq, 1000 + static_cast<size_t>(k % 64) * 4096);
      Result<int64_t> rev = store.SetState(w.module_id, blob, w.revision,
                                           /*lease_holder=*/k % 8 == 0);
      if (!rev.ok()) return rev.status();
      if (*rev != w.revision + 1) {
        return Internal("revision " + std::to_string(*rev) + " after " +
                        std::to_string(w.revision));
      }
      w.revision = *rev;
      return Status::Ok();
    }
    case 1: {
      compute::VersionRecord v;
      v.module_id = w.module_id;
      v.source_hash = "h" + std::to_string(k);
      v.files = {{"Cargo.toml", "[package]\nname = \"m\"\n"},
                 {"src/lib.rs",
                  Payload(seq, 2000 + static_cast<size_t>(k % 16) * 1024)}};
      Result<int64_t> no = store.AddVersion(v);
      return no.status();
    }
    case 2: {
      std::vector<compute::UsageRow> rows(2);
      for (int i = 0; i < 2; ++i) {
        rows[i].module_id = w.module_id;
        rows[i].minute_ms = (k / 16 + i) * 60'000;
        rows[i].ticks = 1;
        rows[i].runs = 1;
        rows[i].fuel_used = k;
        rows[i].compute_units = 0.25;
      }
      return store.AddUsage(rows);
    }
    default: {
      std::vector<compute::RunRecord> runs(3);
      for (int i = 0; i < 3; ++i) {
        runs[i].module_id = w.module_id;
        runs[i].module_name = "m";
        runs[i].started_ms = k;
        runs[i].entry = "e" + std::to_string(i);
        runs[i].flow_id = "flow-" + std::to_string(k);
      }
      return store.AddRuns(runs);
    }
  }
}

// The store's content as text.
std::string Describe(ComputeStore& store, int64_t module_id) {
  std::ostringstream out;
  Result<std::vector<compute::VersionRecord>> versions =
      store.ListVersions(module_id, 1000, /*with_files=*/true);
  if (!versions.ok()) return "versions: " + versions.status().ToString();
  for (const compute::VersionRecord& v : *versions) {
    out << "version " << v.version_no << " " << v.source_hash << " created "
        << v.created_ms << " files " << v.files.size() << " lib "
        << (v.files.count("src/lib.rs") ? CheckPayload(v.files.at("src/lib.rs"))
                                        : -2)
        << "\n";
  }
  Result<std::vector<compute::UsageRow>> usage = store.ListUsage(module_id, 0);
  if (!usage.ok()) return "usage: " + usage.status().ToString();
  for (const compute::UsageRow& u : *usage) {
    out << "usage " << u.minute_ms << " ticks " << u.ticks << " runs " << u.runs
        << " fuel " << u.fuel_used << " units " << u.compute_units << "\n";
  }
  compute::RunFilter filter;
  filter.limit = 1000;
  Result<std::vector<compute::RunRecord>> runs = store.ListRuns(filter);
  if (!runs.ok()) return "runs: " + runs.status().ToString();
  for (const compute::RunRecord& r : *runs) {
    out << "run " << r.started_ms << " " << r.entry << " " << r.flow_id << "\n";
  }
  Result<compute::StateBlob> state = store.GetState(module_id);
  if (!state.ok()) return "state: " + state.status().ToString();
  out << "state revision " << state->revision << " payload "
      << (state->revision == 0 ? 0 : CheckPayload(state->bytes)) << "\n";
  return out.str();
}

// What the store holds after writes 1..k, from the model.
std::string Expected(int64_t k) {
  FakeWallClock clock(kStartUs);
  compute::MemoryComputeStore model(&clock);
  Writer w;
  Result<compute::ModuleRecord> m = model.UpsertModule("m", "", false);
  EXPECT_TRUE(m.ok());
  w.module_id = m.ok() ? m->id : 0;
  for (int64_t i = 1; i <= k; ++i) {
    clock.Set(kStartUs + i * 1000);
    Status st = Apply(model, w, i);
    EXPECT_TRUE(st.ok()) << "model write " << i << ": " << st.ToString();
  }
  return Describe(model, w.module_id);
}

TEST(SqliteComputeCrashTest, SigkillLeavesEveryWriteWholeOrAbsent) {
  const unsigned seed = std::random_device()();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 random(seed);
  for (int attempt = 0; attempt < 6; ++attempt) {
    ScratchDir dir;
    const std::string path = dir.File("crash/compute.db");
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      close(fds[0]);
      FakeWallClock clock(kStartUs);
      SqliteComputeStore::Options options;
      options.wall_clock = &clock;
      Result<std::unique_ptr<SqliteComputeStore>> store =
          SqliteComputeStore::Open(path, options);
      if (!store.ok()) _exit(kChildOpenFailed);
      Writer w;
      Result<compute::ModuleRecord> m = (*store)->UpsertModule("m", "", false);
      if (!m.ok()) _exit(kChildWriteFailed);
      w.module_id = m->id;
      for (int64_t k = 1;; ++k) {
        clock.Set(kStartUs + k * 1000);
        Status st = Apply(**store, w, k);
        if (st.code() == StatusCode::kInternal) _exit(kChildWrongRevision);
        if (!st.ok()) _exit(kChildWriteFailed);
        if (write(fds[1], &k, sizeof(k)) != sizeof(k)) {
          _exit(kChildWriteFailed);
        }
      }
    }
    close(fds[1]);
    const int64_t kill_after =
        std::uniform_int_distribution<int64_t>(4, 120)(random);
    SCOPED_TRACE("attempt " + std::to_string(attempt) + ", kill after " +
                 std::to_string(kill_after));
    int64_t acked = 0;
    int64_t k = 0;
    while (acked < kill_after && read(fds[0], &k, sizeof(k)) == sizeof(k)) {
      acked = k;
    }
    kill(pid, SIGKILL);
    // Writes acknowledged before the signal landed.
    while (read(fds[0], &k, sizeof(k)) == sizeof(k)) acked = k;
    close(fds[0]);
    int status = WaitFor(pid);
    ASSERT_TRUE(WIFSIGNALED(status))
        << "child exited with " << WEXITSTATUS(status);
    ASSERT_GE(acked, kill_after);

    Result<std::unique_ptr<SqliteComputeStore>> store =
        SqliteComputeStore::Open(path);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    Result<compute::ModuleRecord> m = (*store)->GetModule("m");
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    const std::string actual = Describe(**store, m->id);
    const std::string acked_only = Expected(acked);
    const std::string with_next = Expected(acked + 1);
    EXPECT_TRUE(actual == acked_only || actual == with_next)
        << "after " << acked << " acknowledged writes the store holds\n"
        << actual << "expected\n"
        << acked_only << "or, with the one in flight,\n"
        << with_next;
  }
}

}  // namespace
}  // namespace tessera::store
