// The DataStore contract (data_store.h) as a test suite every adapter
// passes: each adapter's test instantiates it with a factory of fresh,
// empty stores, e.g.
//
//   INSTANTIATE_TEST_SUITE_P(
//       Sqlite, DataStoreConformanceTest,
//       ::testing::Values(data::DataStoreBackend{
//           "sqlite", [](const WallClock* clock) -> std::unique_ptr<...> {
//             ... SqliteDataStore::Open(":memory:", {clock}) ...
//           }}),
//       data::DataStoreBackendName);
//
// Covered: every method of DataTxn and DataStore; the error codes of
// schema.h; read isolation (a read transaction sees neither uncommitted
// writes nor commits after its Begin); nested scopes and the events of
// rolled-back scopes; change events and their seq order; a destroyed
// transaction rolling back; the writer wait timeout (UNAVAILABLE);
// additive schema changes, refusals and unique indexes over duplicates;
// List/Count filters against data::Matches on random rows; keyed calls;
// Prune; callers' odd bytes in ids, cursors and strings. Not covered here:
// durability (each durable adapter has its own reopen tests, and runs the
// kill -9 tests of store/data_crash_harness.h).
#ifndef TESSERA_DATA_DATA_STORE_CONFORMANCE_H_
#define TESSERA_DATA_DATA_STORE_CONFORMANCE_H_

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <ostream>
#include <string>

#include "common/clock.h"
#include "data/data_store.h"
#include "data/data_types.h"

namespace tessera::data {

struct DataStoreBackend {
  std::string name;  // a gtest name: letters, digits, '_'
  // A fresh, empty store (no schema applied) dated by `clock` (not owned;
  // outlives the store).
  std::function<std::unique_ptr<DataStore>(const WallClock* clock)> make;
};

void PrintTo(const DataStoreBackend& backend, std::ostream* os);
std::string DataStoreBackendName(
    const ::testing::TestParamInfo<DataStoreBackend>& info);

class DataStoreConformanceTest
    : public ::testing::TestWithParam<DataStoreBackend> {
 public:
  static constexpr int64_t kStartUs = 1'800'000'000'000'000;
  static constexpr int64_t kStartMs = kStartUs / 1000;

  // The suite's schema: Character {name string required (unique index),
  // hp int default 100, speed float, alive bool default true, bag json,
  // tag string (unique index), level int (index), owner string (the
  // owner)} and Item {kind string required, count int}.
  static DataSchema TestSchema();

 protected:
  // A fresh store with TestSchema() applied.
  void SetUp() override;

  std::unique_ptr<DataTxn> BeginWrite();
  std::unique_ptr<DataTxn> BeginRead();
  // Inserts in a transaction of its own and commits (fails the test on an
  // error); returns the row.
  Row InsertCommitted(const std::string& type, const std::string& id,
                      const std::string& fields_json);
  // The row as Get in a new read transaction returns it.
  std::optional<Row> ReadRow(const std::string& type, const std::string& id);

  FakeWallClock clock_{kStartUs};
  std::unique_ptr<DataStore> store_;
};

namespace conformance {

// The code of a failed result's message ("" when it has none).
std::string CodeOf(const Status& status);
// The value of `field` in a row's fields_json as compact JSON ("null" when
// absent).
std::string FieldOf(const Row& row, const std::string& field);

}  // namespace conformance
}  // namespace tessera::data

#endif  // TESSERA_DATA_DATA_STORE_CONFORMANCE_H_
