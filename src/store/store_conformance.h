// The store::Store contract (store.h) and the shard::TransferJournal
// contract (shard/transfer_journal.h) as test suites every backend passes.
//
// StoreConformanceTest (store_conformance.cc) runs against a StoreBackend:
// a factory of fresh, empty places (a SQLite file, a PostgreSQL database)
// and an opener of a store on a place, so the suite can open a second
// store on the same place (reopen, two stores at once). Covered: the shard
// directory (Put replacing, SetShardStatus, DeleteShard with its save,
// ListShards' order, zero timestamps from the clock), saves (replace,
// forget, no record needed, any bytes, 10 MiB), reopening, a second store
// seeing the first's commits, eight threads at once.
//
// TransferJournalConformanceTest (store_conformance_journal.cc) runs
// against a JournalBackend, any object that is both the shard::StateStore
// and the shard::TransferJournal (MemoryStateStore too; a StoreBackend
// through JournalBackendOf). Covered: Begin and Advance writing their rows
// and the save together, all or nothing; the refusals (a duplicate id, a
// second kOut row per (source, subscriber), a CAS from the wrong step, a
// missing row, a step that is not one); steps in order; ListTransfers'
// order; Delete; bytes; moves from several threads at once.
//
// Not covered: durability across a crash (each durable backend has its own
// kill -9 tests, e.g. transfer_crash_test.cc), a backend's URLs and files.
//
//   INSTANTIATE_TEST_SUITE_P(Sqlite, StoreConformanceTest,
//                            ::testing::Values(backend), StoreBackendName);
//   INSTANTIATE_TEST_SUITE_P(Sqlite, TransferJournalConformanceTest,
//                            ::testing::Values(JournalBackendOf(backend)),
//                            JournalBackendName);
#ifndef TESSERA_STORE_STORE_CONFORMANCE_H_
#define TESSERA_STORE_STORE_CONFORMANCE_H_

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "shard/state_store.h"
#include "shard/talk_types.h"
#include "shard/transfer_journal.h"
#include "store/store.h"

namespace tessera::store {

// The fake clock's start (microseconds) and its milliseconds.
inline constexpr int64_t kConformanceStartUs = 1'700'000'000'000'000;
inline constexpr int64_t kConformanceStartMs = kConformanceStartUs / 1000;

// Where a store lives: a file path, a database URL.
struct StorePlace {
  std::string location;
  // What keeps the place alive (a scratch directory); dropped after every
  // store on it.
  std::shared_ptr<void> keep;
};

struct StoreBackend {
  std::string name;  // a gtest name: letters, digits, '_'
  // A new, empty place.
  std::function<StorePlace()> make_place;
  // Opens a store on `location`, dating rows by `clock` (not owned).
  std::function<Result<std::unique_ptr<Store>>(const std::string& location,
                                               const WallClock* clock)>
      open;
};

void PrintTo(const StoreBackend& backend, std::ostream* os);
std::string StoreBackendName(
    const ::testing::TestParamInfo<StoreBackend>& info);

class StoreConformanceTest : public ::testing::TestWithParam<StoreBackend> {
 protected:
  void SetUp() override;

  // Another store on the place (null, and the test failed, on an error).
  std::unique_ptr<Store> OpenAnother();
  // Closes store_ and opens it again on the same place.
  void Reopen();

  // A record with binary params, status "running".
  static ShardRecord Record(std::string id, std::string kind,
                            int64_t created_ms);
  // Load and ListShards, failing the test on an error.
  static std::optional<std::string> LoadOf(Store& store, std::string_view id);
  static std::vector<ShardRecord> ListOf(Store& store);

  StorePlace place_;
  FakeWallClock clock_{kConformanceStartUs};
  std::unique_ptr<Store> store_;
};

// One object that is both the saved states and the journal.
struct JournalUnderTest {
  std::shared_ptr<void> owner;  // keeps the object (and its place) alive
  shard::StateStore* states = nullptr;
  shard::TransferJournal* journal = nullptr;
};

// Wraps an object that is both.
template <typename T>
JournalUnderTest JournalOf(std::unique_ptr<T> object) {
  JournalUnderTest out;
  out.states = object.get();
  out.journal = object.get();
  out.owner = std::shared_ptr<T>(std::move(object));
  return out;
}

struct JournalBackend {
  std::string name;  // a gtest name
  // A fresh, empty journal dating its rows by `clock` (not owned);
  // states/journal null on an error.
  std::function<JournalUnderTest(const WallClock* clock)> make;
};

// The journal of a fresh store of `backend` (on a new place).
JournalBackend JournalBackendOf(const StoreBackend& backend);

void PrintTo(const JournalBackend& backend, std::ostream* os);
std::string JournalBackendName(
    const ::testing::TestParamInfo<JournalBackend>& info);

class TransferJournalConformanceTest
    : public ::testing::TestWithParam<JournalBackend> {
 protected:
  void SetUp() override;

  static shard::TransferRecord Move(std::string id, std::string from,
                                    std::string subscriber,
                                    std::string to = "T");
  static shard::TransferAdvance Step(std::string id, shard::TransferStep from,
                                     shard::TransferStep to);

  // ListTransfers (its ids), Load, failing the test on an error.
  std::vector<shard::TransferRecord> List();
  std::vector<std::string> Ids();
  std::optional<std::string> Load(std::string_view shard);
  Status Begin(std::vector<shard::TransferRecord> records,
               std::string_view from, std::optional<std::string_view> state);
  Status Advance(std::vector<shard::TransferAdvance> steps,
                 std::string_view shard, std::optional<std::string_view> state);

  FakeWallClock clock_{kConformanceStartUs};
  JournalUnderTest under_test_;
  shard::StateStore* states_ = nullptr;
  shard::TransferJournal* journal_ = nullptr;
};

}  // namespace tessera::store

#endif  // TESSERA_STORE_STORE_CONFORMANCE_H_
