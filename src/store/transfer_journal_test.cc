// shard::TransferJournal: the journal's conformance suite
// (store_conformance.h) against MemoryStateStore and SqliteStore, so both
// behave the same; then what only the SQLite store has (rollback of a
// statement failing in the file, a corrupt step). Reopening is in the
// Store suite (sqlite_store_test.cc).
#include "shard/transfer_journal.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "shard/state_store.h"
#include "store/sqlite_store.h"
#include "store/store_conformance.h"
#include "store/test_util.h"

namespace tessera::store {
namespace {

using shard::TransferAdvance;
using shard::TransferRecord;
using shard::TransferStep;
using testing::ScratchDir;

constexpr int64_t kStartUs = kConformanceStartUs;

std::unique_ptr<SqliteStore> OpenSqlite(const std::string& path,
                                        const WallClock* clock) {
  SqliteStore::Options options;
  options.wall_clock = clock;
  Result<std::unique_ptr<SqliteStore>> store = SqliteStore::Open(path, options);
  EXPECT_TRUE(store.ok()) << store.status().ToString();
  return store.ok() ? std::move(store).value() : nullptr;
}

// A journal on a file of its own, with the scratch directory it lives in.
struct SqliteOnDisk {
  ScratchDir dir;
  std::unique_ptr<SqliteStore> store;
};

INSTANTIATE_TEST_SUITE_P(
    Journals, TransferJournalConformanceTest,
    ::testing::Values(
        JournalBackend{"Memory",
                       [](const WallClock* clock) {
                         return JournalOf(
                             std::make_unique<shard::MemoryStateStore>(clock));
                       }},
        JournalBackend{"Sqlite",
                       [](const WallClock* clock) -> JournalUnderTest {
                         auto held = std::make_shared<SqliteOnDisk>();
                         held->store =
                             OpenSqlite(held->dir.File("journal.db"), clock);
                         if (held->store == nullptr) return {};
                         JournalUnderTest out;
                         out.states = held->store.get();
                         out.journal = held->store.get();
                         out.owner = std::move(held);
                         return out;
                       }}),
    JournalBackendName);

TransferRecord Move(std::string id, std::string from, std::string subscriber,
                    std::string to = "T") {
  TransferRecord r;
  r.id = std::move(id);
  r.from_shard = std::move(from);
  r.to_shard = std::move(to);
  r.subscriber = std::move(subscriber);
  r.claims_json = R"({"party":"p1"})";
  r.state = "state of " + r.subscriber;
  return r;
}

TransferAdvance Step(std::string id, TransferStep from, TransferStep to) {
  return TransferAdvance{std::move(id), from, to};
}

// ---- SQLite only ----------------------------------------------------------

// Runs `sql` on a connection of its own.
void RawSql(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* error = nullptr;
  int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error);
  EXPECT_EQ(rc, SQLITE_OK) << sql << ": " << (error ? error : "");
  sqlite3_free(error);
  sqlite3_close(db);
}

class SqliteJournalTest : public ::testing::Test {
 protected:
  std::unique_ptr<SqliteStore> Open() { return OpenSqlite(path(), &clock_); }
  std::string path() const { return dir_.File("journal.db"); }

  ScratchDir dir_;
  FakeWallClock clock_{kStartUs};
};

// A statement failing inside the transaction (here the saves write, made to
// fail by a trigger) rolls back the rows written before it in the same
// transaction, and leaves the store usable.
TEST_F(SqliteJournalTest, AFailingStatementRollsBackTheWholeTransaction) {
  auto store = Open();
  ASSERT_NE(store, nullptr);
  std::vector<TransferRecord> first = {Move("m1", "S", "p")};
  ASSERT_TRUE(store->BeginTransfers(first, "S", "s1").ok());
  RawSql(path(),
         "CREATE TRIGGER no_boom BEFORE UPDATE ON saves "
         "WHEN CAST(NEW.state AS TEXT) = 'boom' "
         "BEGIN SELECT RAISE(ABORT, 'boom refused'); END");

  std::vector<TransferRecord> second = {Move("m2", "S", "q"),
                                        Move("m3", "S", "r")};
  Status st = store->BeginTransfers(second, "S", "boom");
  EXPECT_EQ(st.code(), StatusCode::kIo) << st.ToString();
  EXPECT_NE(st.message().find("boom refused"), std::string::npos)
      << st.message();
  std::vector<TransferAdvance> steps = {
      Step("m1", TransferStep::kOut, TransferStep::kBack)};
  st = store->AdvanceTransfers(steps, "S", "boom");
  EXPECT_EQ(st.code(), StatusCode::kIo) << st.ToString();

  Result<std::vector<TransferRecord>> rows = store->ListTransfers();
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ((*rows)[0].id, "m1");
  EXPECT_EQ((*rows)[0].step, TransferStep::kOut);
  EXPECT_EQ(store->Load("S").value(), std::optional<std::string>("s1"));
  // No transaction was left open.
  ASSERT_TRUE(store->BeginTransfers(second, "S", "s2").ok());
  ASSERT_TRUE(store->AdvanceTransfers(steps, "S", "s3").ok());
  EXPECT_EQ(store->Load("S").value(), std::optional<std::string>("s3"));
}

TEST_F(SqliteJournalTest, AnUnknownStepInTheFileIsAnIoError) {
  auto store = Open();
  ASSERT_NE(store, nullptr);
  std::vector<TransferRecord> records = {Move("m1", "S", "p")};
  ASSERT_TRUE(store->BeginTransfers(records, "S", std::nullopt).ok());
  RawSql(path(), "UPDATE transfers SET step = 7 WHERE id = 'm1'");
  Result<std::vector<TransferRecord>> rows = store->ListTransfers();
  ASSERT_FALSE(rows.ok());
  EXPECT_EQ(rows.status().code(), StatusCode::kIo);
  EXPECT_NE(rows.status().message().find("unknown step 7"), std::string::npos)
      << rows.status().message();
  std::vector<TransferAdvance> steps = {
      Step("m1", TransferStep::kOut, TransferStep::kIn)};
  Status st = store->AdvanceTransfers(steps, "T", std::nullopt);
  EXPECT_EQ(st.code(), StatusCode::kIo) << st.ToString();
}

}  // namespace
}  // namespace tessera::store
