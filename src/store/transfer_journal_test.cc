// shard::TransferJournal: one typed suite run against every implementation
// (MemoryStateStore and SqliteStore), so both behave the same; then what
// only the SQLite store has (reopening, rollback of a failed statement).
#include "shard/transfer_journal.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "common/clock.h"
#include "shard/state_store.h"
#include "store/sqlite_store.h"
#include "store/test_util.h"

namespace tessera::store {
namespace {

using shard::TransferAdvance;
using shard::TransferRecord;
using shard::TransferStep;
using testing::ScratchDir;

constexpr int64_t kStartUs = 1'700'000'000'000'000;
constexpr int64_t kStartMs = kStartUs / 1000;

struct MemoryJournal {
  using Store = shard::MemoryStateStore;
  static std::unique_ptr<Store> Open(const WallClock* clock,
                                     const ScratchDir&) {
    return std::make_unique<Store>(clock);
  }
};

struct SqliteJournal {
  using Store = SqliteStore;
  static std::unique_ptr<Store> Open(const WallClock* clock,
                                     const ScratchDir& dir) {
    SqliteStore::Options options;
    options.wall_clock = clock;
    Result<std::unique_ptr<SqliteStore>> store =
        SqliteStore::Open(dir.File("journal.db"), options);
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    return store.ok() ? std::move(store).value() : nullptr;
  }
};

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

template <typename Impl>
class TransferJournalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = Impl::Open(&clock_, dir_);
    ASSERT_NE(store_, nullptr);
  }

  std::vector<TransferRecord> List() {
    Result<std::vector<TransferRecord>> rows = store_->ListTransfers();
    EXPECT_TRUE(rows.ok()) << rows.status().ToString();
    return rows.ok() ? *rows : std::vector<TransferRecord>();
  }
  std::vector<std::string> Ids() {
    std::vector<std::string> ids;
    for (const TransferRecord& r : List()) ids.push_back(r.id);
    return ids;
  }
  std::optional<std::string> Load(std::string_view shard) {
    Result<std::optional<std::string>> state = store_->Load(shard);
    EXPECT_TRUE(state.ok()) << state.status().ToString();
    return state.ok() ? *state : std::nullopt;
  }
  Status Begin(std::vector<TransferRecord> records, std::string_view from,
               std::optional<std::string_view> state) {
    return store_->BeginTransfers(records, from, state);
  }
  Status Advance(std::vector<TransferAdvance> steps, std::string_view shard,
                 std::optional<std::string_view> state) {
    return store_->AdvanceTransfers(steps, shard, state);
  }

  ScratchDir dir_;
  FakeWallClock clock_{kStartUs};
  std::unique_ptr<typename Impl::Store> store_;
};

using Journals = ::testing::Types<MemoryJournal, SqliteJournal>;
class JournalNames {
 public:
  template <typename T>
  static std::string GetName(int) {
    return std::is_same_v<T, MemoryJournal> ? "Memory" : "Sqlite";
  }
};
TYPED_TEST_SUITE(TransferJournalTest, Journals, JournalNames);

TYPED_TEST(TransferJournalTest, BeginWritesOutRowsAndTheSourceStateTogether) {
  ASSERT_TRUE(this->store_->Save("S", "with p and q").ok());
  TransferRecord p = Move("m1", "S", "p");
  p.step = TransferStep::kIn;  // ignored: a new row is always kOut
  TransferRecord q = Move("m2", "S", "q", "U");
  q.created_unix_ms = 5;
  q.updated_unix_ms = 6;
  ASSERT_TRUE(this->Begin({p, q}, "S", "without them").ok());

  EXPECT_EQ(this->Load("S"), "without them");
  std::vector<TransferRecord> rows = this->List();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].id, "m2");  // created 5 < now
  EXPECT_EQ(rows[0].to_shard, "U");
  EXPECT_EQ(rows[0].created_unix_ms, 5);
  EXPECT_EQ(rows[0].updated_unix_ms, 6);
  const TransferRecord& r = rows[1];
  EXPECT_EQ(r.id, "m1");
  EXPECT_EQ(r.from_shard, "S");
  EXPECT_EQ(r.to_shard, "T");
  EXPECT_EQ(r.subscriber, "p");
  EXPECT_EQ(r.claims_json, R"({"party":"p1"})");
  EXPECT_EQ(r.state, "state of p");
  EXPECT_EQ(r.step, TransferStep::kOut);
  EXPECT_EQ(r.created_unix_ms, kStartMs);  // zero: from the clock
  EXPECT_EQ(r.updated_unix_ms, kStartMs);
}

TYPED_TEST(TransferJournalTest, WithoutAStateTheSaveIsLeftAlone) {
  ASSERT_TRUE(this->store_->Save("S", "before").ok());
  ASSERT_TRUE(this->Begin({Move("m1", "S", "p")}, "S", std::nullopt).ok());
  EXPECT_EQ(this->Load("S"), "before");
  ASSERT_TRUE(this->Advance({Step("m1", TransferStep::kOut, TransferStep::kIn)},
                            "T", std::nullopt)
                  .ok());
  EXPECT_EQ(this->Load("T"), std::nullopt);
  EXPECT_EQ(this->List()[0].step, TransferStep::kIn);
  // No rows, a state: just the save (an empty state is a state).
  ASSERT_TRUE(this->Begin({}, "S", "").ok());
  EXPECT_EQ(this->Load("S"), "");
  ASSERT_TRUE(this->Advance({}, "T", "t").ok());
  EXPECT_EQ(this->Load("T"), "t");
}

TYPED_TEST(TransferJournalTest, DuplicateIdWritesNothing) {
  ASSERT_TRUE(this->Begin({Move("m1", "S", "p")}, "S", "s1").ok());
  Status st =
      this->Begin({Move("m2", "S", "q"), Move("m1", "U", "r")}, "S", "s2");
  EXPECT_EQ(st.code(), StatusCode::kAlreadyExists) << st.ToString();
  EXPECT_NE(st.message().find("'m1'"), std::string::npos) << st.message();
  // Within one batch, too.
  st = this->Begin({Move("m3", "S", "q"), Move("m3", "U", "r")}, "S", "s3");
  EXPECT_EQ(st.code(), StatusCode::kAlreadyExists) << st.ToString();
  EXPECT_EQ(this->Ids(), std::vector<std::string>{"m1"});
  EXPECT_EQ(this->Load("S"), "s1");
}

TYPED_TEST(TransferJournalTest, OneOutRowPerSubscriberAndSource) {
  ASSERT_TRUE(this->Begin({Move("m1", "S", "p")}, "S", "s1").ok());
  Status st = this->Begin({Move("m2", "S", "p", "U")}, "S", "s2");
  EXPECT_EQ(st.code(), StatusCode::kAlreadyExists) << st.ToString();
  EXPECT_NE(st.message().find("'p'"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("'m1'"), std::string::npos) << st.message();
  st = this->Begin({Move("m3", "S", "q"), Move("m4", "S", "q")}, "S", "s3");
  EXPECT_EQ(st.code(), StatusCode::kAlreadyExists) << st.ToString();
  EXPECT_EQ(this->Ids(), std::vector<std::string>{"m1"});
  EXPECT_EQ(this->Load("S"), "s1");

  // The same subscriber leaving another shard is another move.
  ASSERT_TRUE(this->Begin({Move("m5", "U", "p")}, "U", std::nullopt).ok());
  // Once its row is no longer kOut, it may move out of S again.
  ASSERT_TRUE(this->Advance({Step("m1", TransferStep::kOut, TransferStep::kIn)},
                            "T", "t1")
                  .ok());
  ASSERT_TRUE(this->Begin({Move("m6", "S", "p")}, "S", "s4").ok());
  EXPECT_EQ(this->Ids(), (std::vector<std::string>{"m1", "m5", "m6"}));
}

TYPED_TEST(TransferJournalTest, AdvanceIsACompareAndSetWithTheSave) {
  ASSERT_TRUE(
      this->Begin({Move("m1", "S", "p"), Move("m2", "S", "q")}, "S", "s1")
          .ok());
  this->clock_.Advance(2'500'000);
  ASSERT_TRUE(this->Advance({Step("m1", TransferStep::kOut, TransferStep::kIn),
                             Step("m2", TransferStep::kOut, TransferStep::kIn)},
                            "T", "t with p and q")
                  .ok());
  EXPECT_EQ(this->Load("T"), "t with p and q");
  EXPECT_EQ(this->Load("S"), "s1");
  for (const TransferRecord& r : this->List()) {
    EXPECT_EQ(r.step, TransferStep::kIn) << r.id;
    EXPECT_EQ(r.created_unix_ms, kStartMs) << r.id;
    EXPECT_EQ(r.updated_unix_ms, kStartMs + 2'500) << r.id;
  }
  // The same CAS again: m1 is no longer at kOut.
  Status st = this->Advance(
      {Step("m1", TransferStep::kOut, TransferStep::kBack)}, "S", "s2");
  EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition) << st.ToString();
  EXPECT_NE(st.message().find("at step in, not out"), std::string::npos)
      << st.message();
}

TYPED_TEST(TransferJournalTest, AFailedAdvanceWritesNothing) {
  ASSERT_TRUE(
      this->Begin({Move("m1", "S", "p"), Move("m2", "S", "q")}, "S", "s1")
          .ok());
  ASSERT_TRUE(this->Advance({Step("m2", TransferStep::kOut, TransferStep::kIn)},
                            "T", "t1")
                  .ok());
  this->clock_.Advance(1'000'000);
  // m1 would move, m2 is not at kOut: neither moves, no state is written.
  Status st =
      this->Advance({Step("m1", TransferStep::kOut, TransferStep::kBack),
                     Step("m2", TransferStep::kOut, TransferStep::kBack)},
                    "S", "s2");
  EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition) << st.ToString();
  // A missing row.
  st = this->Advance({Step("m1", TransferStep::kOut, TransferStep::kBack),
                      Step("nope", TransferStep::kOut, TransferStep::kBack)},
                     "S", "s3");
  EXPECT_EQ(st.code(), StatusCode::kNotFound) << st.ToString();
  EXPECT_NE(st.message().find("'nope'"), std::string::npos) << st.message();
  // Steps that are not steps, or back to kOut.
  st = this->Advance({Step("m1", TransferStep::kOut, TransferStep::kBack),
                      Step("m2", TransferStep::kIn, TransferStep::kOut)},
                     "S", "s4");
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.ToString();
  st = this->Advance(
      {Step("m1", TransferStep::kOut, static_cast<TransferStep>(9))}, "S",
      "s5");
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.ToString();

  EXPECT_EQ(this->Load("S"), "s1");
  std::vector<TransferRecord> rows = this->List();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].step, TransferStep::kOut);
  EXPECT_EQ(rows[0].updated_unix_ms, kStartMs);
  EXPECT_EQ(rows[1].step, TransferStep::kIn);
  EXPECT_EQ(rows[1].updated_unix_ms, kStartMs);
}

TYPED_TEST(TransferJournalTest, StepsOfOneAdvanceApplyInOrder) {
  ASSERT_TRUE(this->Begin({Move("m1", "S", "p")}, "S", "s1").ok());
  ASSERT_TRUE(
      this->Advance({Step("m1", TransferStep::kOut, TransferStep::kIn),
                     Step("m1", TransferStep::kIn, TransferStep::kBack)},
                    "S", "s2")
          .ok());
  EXPECT_EQ(this->List()[0].step, TransferStep::kBack);
  Status st =
      this->Advance({Step("m1", TransferStep::kBack, TransferStep::kIn),
                     Step("m1", TransferStep::kBack, TransferStep::kIn)},
                    "T", "t1");
  EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition) << st.ToString();
  EXPECT_EQ(this->List()[0].step, TransferStep::kBack);
  EXPECT_EQ(this->Load("T"), std::nullopt);
}

TYPED_TEST(TransferJournalTest, ListIsOldestFirstThenInsertionOrder) {
  TransferRecord late = Move("a", "S", "p1");
  late.created_unix_ms = 300;
  TransferRecord early = Move("z", "S", "p2");
  early.created_unix_ms = 100;
  TransferRecord tie1 = Move("y", "S", "p3");
  tie1.created_unix_ms = 200;
  TransferRecord tie2 = Move("b", "S", "p4");
  tie2.created_unix_ms = 200;
  ASSERT_TRUE(this->Begin({late, tie1}, "S", std::nullopt).ok());
  ASSERT_TRUE(this->Begin({early, tie2}, "S", std::nullopt).ok());
  EXPECT_EQ(this->Ids(), (std::vector<std::string>{"z", "y", "b", "a"}));
}

TYPED_TEST(TransferJournalTest, DeleteDropsRowsOnlyAndIgnoresAbsentIds) {
  ASSERT_TRUE(this->Begin({Move("m1", "S", "p"), Move("m2", "S", "q"),
                           Move("m3", "S", "r")},
                          "S", "s1")
                  .ok());
  std::vector<std::string> ids = {"m1", "nope", "m3"};
  ASSERT_TRUE(this->store_->DeleteTransfers(ids).ok());
  EXPECT_EQ(this->Ids(), std::vector<std::string>{"m2"});
  EXPECT_EQ(this->Load("S"), "s1");
  ASSERT_TRUE(this->store_->DeleteTransfers({}).ok());
  // A deleted kOut row no longer blocks its subscriber, nor its id.
  ASSERT_TRUE(this->Begin({Move("m1", "S", "p")}, "S", std::nullopt).ok());
}

TYPED_TEST(TransferJournalTest, BytesComeBackExactly) {
  std::string all_bytes;
  for (int i = 0; i < 256; ++i) all_bytes.push_back(static_cast<char>(i));
  TransferRecord binary = Move("m1", "S", "p");
  binary.state = all_bytes;
  binary.claims_json = R"({"name":"Zoë","n":[1,2]})";
  TransferRecord empty = Move("m2", "S", "q");
  empty.state.clear();
  empty.claims_json = "{}";
  ASSERT_TRUE(this->Begin({binary, empty}, "S", all_bytes).ok());
  std::vector<TransferRecord> rows = this->List();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].state, all_bytes);
  EXPECT_EQ(rows[0].claims_json, R"({"name":"Zoë","n":[1,2]})");
  EXPECT_EQ(rows[1].state, "");
  EXPECT_EQ(rows[1].claims_json, "{}");
  EXPECT_EQ(this->Load("S"), all_bytes);
}

// Shards move players concurrently from their own workers; each pair of
// transactions stays whole and nothing is lost.
TYPED_TEST(TransferJournalTest, ConcurrentMovesFromManyThreads) {
  constexpr int kThreads = 4;
  constexpr int kMoves = 40;
  std::vector<std::thread> threads;
  std::vector<Status> failures(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([this, t, &failures] {
      const std::string from = "S" + std::to_string(t);
      for (int i = 0; i < kMoves && failures[t].ok(); ++i) {
        const std::string id = from + "-" + std::to_string(i);
        TransferRecord r = Move(id, from, "p" + std::to_string(i));
        const std::string out = "out " + id;
        const std::string in = "in " + id;
        std::vector<TransferRecord> records = {r};
        std::vector<TransferAdvance> steps = {
            Step(id, TransferStep::kOut,
                 i % 2 == 0 ? TransferStep::kIn : TransferStep::kBack)};
        Status st = this->store_->BeginTransfers(records, from, out);
        if (st.ok()) {
          st = this->store_->AdvanceTransfers(
              steps, i % 2 == 0 ? "T" + std::to_string(t) : from, in);
        }
        failures[t] = st;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (const Status& st : failures) ASSERT_TRUE(st.ok()) << st.ToString();

  std::vector<TransferRecord> rows = this->List();
  ASSERT_EQ(rows.size(), static_cast<size_t>(kThreads * kMoves));
  for (const TransferRecord& r : rows) {
    int i = std::stoi(r.id.substr(r.id.find('-') + 1));
    EXPECT_EQ(r.step, i % 2 == 0 ? TransferStep::kIn : TransferStep::kBack)
        << r.id;
  }
  for (int t = 0; t < kThreads; ++t) {
    const std::string from = "S" + std::to_string(t);
    EXPECT_EQ(this->Load(from),
              "in " + from + "-" + std::to_string(kMoves - 1));
    EXPECT_EQ(this->Load("T" + std::to_string(t)),
              "in " + from + "-" + std::to_string(kMoves - 2));
  }
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
  std::unique_ptr<SqliteStore> Open() {
    return SqliteJournal::Open(&clock_, dir_);
  }
  std::string path() const { return dir_.File("journal.db"); }

  ScratchDir dir_;
  FakeWallClock clock_{kStartUs};
};

TEST_F(SqliteJournalTest, ReopenKeepsTheJournal) {
  {
    auto store = Open();
    ASSERT_NE(store, nullptr);
    std::vector<TransferRecord> records = {Move("m1", "S", "p"),
                                           Move("m2", "S", "q")};
    ASSERT_TRUE(store->BeginTransfers(records, "S", "s1").ok());
    std::vector<TransferAdvance> steps = {
        Step("m2", TransferStep::kOut, TransferStep::kBack)};
    ASSERT_TRUE(store->AdvanceTransfers(steps, "S", "s2").ok());
  }
  auto store = Open();
  ASSERT_NE(store, nullptr);
  Result<std::vector<TransferRecord>> rows = store->ListTransfers();
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[0].id, "m1");
  EXPECT_EQ((*rows)[0].step, TransferStep::kOut);
  EXPECT_EQ((*rows)[0].state, "state of p");
  EXPECT_EQ((*rows)[1].step, TransferStep::kBack);
  Result<std::optional<std::string>> state = store->Load("S");
  ASSERT_TRUE(state.ok());
  EXPECT_EQ(*state, "s2");
}

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
