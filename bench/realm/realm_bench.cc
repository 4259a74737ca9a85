// realm_bench: commits per second into one durable realm (issue 19 "Done
// when": target >= 20,000/s with group commit, each commit durable before
// it is acknowledged), against a baseline measured in the same run, the
// report also as JSON (--json PATH, default realm_bench.json).
//
//   group K   RealmInstance::Submit of a two-op server patch (a counter and
//             one of 100 players' subtrees), then Flush every K submits
//             (one SQLite transaction, WAL, synchronous=FULL, per flush);
//             snapshots every 64 versions as a kind's default does. A
//             commit counts once the Flush that made it durable returned.
//   baseline  the same patches with a Flush after every Submit: one durable
//             transaction per commit, what an engine without group commit
//             does.
//
// Each run writes a fresh realm in a fresh file, then reopens it and checks
// the version and document (snapshot + tail replay). --quick (the ctest
// smoke run) makes the runs small. Correctness alone decides the exit
// status, never timing.
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "realm/engine.h"
#include "realm/kind.h"
#include "store/sqlite_realm_store.h"

namespace tessera::bench {
namespace {

namespace fs = std::filesystem;
using realm::Json;

double WallUs() {
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

double ProcessCpuUs() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return (u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1e6 + u.ru_utime.tv_usec +
         u.ru_stime.tv_usec;
}

int Fail(const std::string& why) {
  std::fprintf(stderr, "realm_bench: %s\n", why.c_str());
  return 1;
}

realm::Patch CommitPatch(int64_t i) {
  return {{realm::OpKind::kSet, realm::Path{std::string("n")}, i},
          {realm::OpKind::kSet,
           realm::Path{std::string("players"), "p" + std::to_string(i % 100),
                       std::string("x")},
           i}};
}

Json Initial() {
  Json players = Json::object();
  for (int p = 0; p < 100; ++p) {
    players["p" + std::to_string(p)] = {{"x", 0}, {"name", "player"}};
  }
  return {{"n", 0}, {"players", players}};
}

struct Run {
  int64_t k = 0;
  int64_t commits = 0;
  double seconds = 0;
  double cpu_us_per_commit = 0;
  double per_second() const { return commits / seconds; }
};

Result<Run> Measure(const fs::path& file, const realm::RealmKindConfig& kind,
                    int64_t commits, int64_t k) {
  Run run{k, commits, 0, 0};
  Json want;
  {
    Result<std::unique_ptr<store::SqliteRealmStore>> store =
        store::SqliteRealmStore::Open(file.string());
    if (!store.ok()) return store.status();
    Result<std::unique_ptr<realm::RealmInstance>> realm =
        realm::RealmInstance::Open(kind, "bench/r", store->get(), Initial());
    if (!realm.ok()) return realm.status();
    const double wall0 = WallUs();
    const double cpu0 = ProcessCpuUs();
    for (int64_t i = 1; i <= commits; ++i) {
      Result<int64_t> v = (*realm)->Submit(CommitPatch(i), "");
      if (!v.ok()) return v.status();
      if (i % k == 0 || i == commits)
        TESSERA_RETURN_IF_ERROR((*realm)->Flush());
    }
    run.seconds = (WallUs() - wall0) / 1e6;
    run.cpu_us_per_commit = (ProcessCpuUs() - cpu0) / commits;
    want = (*realm)->state();
    if ((*realm)->durable_version() != commits) {
      return Internal("durable version " +
                      std::to_string((*realm)->durable_version()));
    }
  }
  Result<std::unique_ptr<store::SqliteRealmStore>> store =
      store::SqliteRealmStore::Open(file.string());
  if (!store.ok()) return store.status();
  Result<std::unique_ptr<realm::RealmInstance>> reopened =
      realm::RealmInstance::Open(kind, "bench/r", store->get(), Initial());
  if (!reopened.ok()) return reopened.status();
  if ((*reopened)->version() != commits || (*reopened)->state() != want) {
    return Internal("the reopened realm is at version " +
                    std::to_string((*reopened)->version()) +
                    " or differs from the written one");
  }
  return run;
}

}  // namespace
}  // namespace tessera::bench

int main(int argc, char** argv) {
  using namespace tessera::bench;  // NOLINT
  bool quick = false;
  std::string json_path = "realm_bench.json";
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) {
      quick = true;
    } else if (std::strcmp(argv[i], "--json") == 0 && i + 1 < argc) {
      json_path = argv[++i];
    } else {
      std::fprintf(stderr, "usage: %s [--quick] [--json PATH]\n", argv[0]);
      return 2;
    }
  }
  tessera::Result<tessera::realm::RealmKindConfig> kind =
      tessera::realm::ParseRealmKind(
          nlohmann::json{{"name", "bench"}, {"snapshotEveryVersions", 64}},
          "realm_bench");
  if (!kind.ok()) return Fail(kind.status().ToString());
  std::random_device rd;
  const fs::path dir = fs::temp_directory_path() /
                       ("tessera-realm-bench-" + std::to_string(getpid()) +
                        "-" + std::to_string(rd()));
  fs::create_directories(dir);
  const int64_t base_commits = quick ? 100 : 2000;
  const int64_t group_commits = quick ? 2000 : 100000;
  struct Plan {
    int64_t k;
    int64_t commits;
  };
  const std::vector<Plan> plans = {
      {1, base_commits}, {64, group_commits}, {256, group_commits}};
  std::vector<Run> runs;
  int status = 0;
  for (const Plan& plan : plans) {
    tessera::Result<Run> run =
        Measure(dir / ("k" + std::to_string(plan.k) + ".db"), *kind,
                plan.commits, plan.k);
    if (!run.ok()) {
      status =
          Fail("K=" + std::to_string(plan.k) + ": " + run.status().ToString());
      continue;
    }
    runs.push_back(*run);
  }
  nlohmann::json report = nlohmann::json::array();
  if (!runs.empty() && runs.front().k == 1) {
    const double base = runs.front().per_second();
    std::printf(
        "realm_bench: commits/s into one durable realm (SQLite WAL, "
        "synchronous=FULL)\n"
        "  %-22s %9s %12s %12s %8s\n",
        "mode", "commits", "commits/s", "CPU us/commit", "ratio");
    for (const Run& run : runs) {
      const std::string mode =
          run.k == 1 ? "flush each (baseline)"
                     : "group, flush every " + std::to_string(run.k);
      std::printf("  %-22s %9lld %12.0f %12.1f %7.1fx\n", mode.c_str(),
                  static_cast<long long>(run.commits), run.per_second(),
                  run.cpu_us_per_commit, run.per_second() / base);
      report.push_back({{"flush_every", run.k},
                        {"commits", run.commits},
                        {"seconds", run.seconds},
                        {"commits_per_second", run.per_second()},
                        {"cpu_us_per_commit", run.cpu_us_per_commit},
                        {"ratio_vs_baseline", run.per_second() / base}});
    }
    std::printf("  target: >= 20000 commits/s with group commit\n");
  }
  std::ofstream(json_path) << nlohmann::json{{"realm_commits", report}}.dump(2)
                           << "\n";
  std::error_code ec;
  fs::remove_all(dir, ec);
  return status;
}
