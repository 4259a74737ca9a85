// The RealmStore contract (realm_store.h) as a test suite every backend
// passes: each backend's test instantiates it with a factory of fresh,
// empty stores, e.g.
//
//   INSTANTIATE_TEST_SUITE_P(
//       Sqlite, RealmStoreConformanceTest,
//       ::testing::Values(realm::RealmStoreBackend{
//           "sqlite", []() -> std::unique_ptr<realm::RealmStore> {
//             ... SqliteRealmStore::Open(":memory:") ...
//           }}),
//       realm::RealmStoreBackendName);
//
// Covered (realm_store_conformance.cc): Create and its refusal of an
// existing key; Append of consecutive versions, alone and as a group
// across realms; the fence (a first version other than head + 1, a gap
// inside an entry, another epoch, an unknown key) writing nothing, also
// for the entries of the same call that were fine; two threads racing to
// append to one realm. (realm_store_conformance_log.cc): PutSnapshot's
// rules and compaction, Load as the newest snapshot plus the consecutive
// tail, ReadLog (range, limit, compacted, other epochs, beyond the head),
// StartEpoch, Drop and List. Not covered here: durability (each durable
// backend has its own reopen and kill -9 tests, e.g.
// store/sqlite_realm_crash_test.cc).
#ifndef TESSERA_REALM_REALM_STORE_CONFORMANCE_H_
#define TESSERA_REALM_REALM_STORE_CONFORMANCE_H_

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "realm/realm_store.h"

namespace tessera::realm {

struct RealmStoreBackend {
  std::string name;  // a gtest name: letters, digits, '_'
  // A fresh, empty store; the suite owns it.
  std::function<std::unique_ptr<RealmStore>()> make;
};

void PrintTo(const RealmStoreBackend& backend, std::ostream* os);
std::string RealmStoreBackendName(
    const ::testing::TestParamInfo<RealmStoreBackend>& info);

class RealmStoreConformanceTest
    : public ::testing::TestWithParam<RealmStoreBackend> {
 protected:
  void SetUp() override;

  // A snapshot whose state names its epoch and version.
  static RealmSnapshot Snap(int64_t epoch, int64_t version);
  // The patch bytes of `version` of realm `key`: binary (a NUL, high
  // bytes) and distinct per key and version.
  static std::string PatchOf(const std::string& key, int64_t version);
  // Commits from..to (inclusive) with PatchOf's patches.
  static std::vector<LoggedCommit> Commits(const std::string& key, int64_t from,
                                           int64_t to);
  static RealmAppend Entry(const std::string& key, int64_t epoch, int64_t from,
                           int64_t to);

  // Creates `key` of `kind` at Snap(1, 0) (fails the test on an error).
  void CreateRealm(const std::string& key, const std::string& kind = "match");
  // Appends from..to to `key` in `epoch` alone (fails the test on an
  // error).
  void AppendRange(const std::string& key, int64_t epoch, int64_t from,
                   int64_t to);
  // Load's answer, failing the test on an error (nullopt then too).
  std::optional<LoadedRealm> LoadOrFail(const std::string& key);
  // The head version of `key` as Load sees it (-1 when absent).
  int64_t HeadOf(const std::string& key);
  // Load's tail and snapshot (empty / default when absent).
  std::vector<LoggedCommit> TailOf(const std::string& key);
  RealmSnapshot SnapshotOf(const std::string& key);

  std::unique_ptr<RealmStore> store_;
};

}  // namespace tessera::realm

#endif  // TESSERA_REALM_REALM_STORE_CONFORMANCE_H_
