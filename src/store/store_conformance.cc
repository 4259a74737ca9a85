// The Store conformance suite, part 1: the fixture, the shard directory,
// saves, reopening and concurrency. Part 2 (store_conformance_journal.cc):
// the transfer journal.
#include "store/store_conformance.h"

#include <atomic>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "store/test_util.h"

namespace tessera::store {

using shard::TransferAdvance;
using shard::TransferRecord;
using shard::TransferStep;
using testing::CheckPayload;
using testing::Payload;

void PrintTo(const StoreBackend& backend, std::ostream* os) {
  *os << backend.name;
}

std::string StoreBackendName(
    const ::testing::TestParamInfo<StoreBackend>& info) {
  return info.param.name;
}

void StoreConformanceTest::SetUp() {
  place_ = GetParam().make_place();
  ASSERT_FALSE(place_.location.empty());
  store_ = OpenAnother();
  ASSERT_NE(store_, nullptr);
}

std::unique_ptr<Store> StoreConformanceTest::OpenAnother() {
  Result<std::unique_ptr<Store>> store =
      GetParam().open(place_.location, &clock_);
  EXPECT_TRUE(store.ok()) << store.status().ToString();
  return store.ok() ? std::move(store).value() : nullptr;
}

void StoreConformanceTest::Reopen() {
  store_.reset();
  store_ = OpenAnother();
  ASSERT_NE(store_, nullptr);
}

ShardRecord StoreConformanceTest::Record(std::string id, std::string kind,
                                         int64_t created_ms) {
  ShardRecord r;
  r.id = std::move(id);
  r.kind = std::move(kind);
  r.params = std::string("\x81\xa1n\x01", 4);
  r.status = "running";
  r.created_unix_ms = created_ms;
  r.updated_unix_ms = created_ms;
  return r;
}

std::optional<std::string> StoreConformanceTest::LoadOf(Store& store,
                                                        std::string_view id) {
  Result<std::optional<std::string>> loaded = store.Load(id);
  EXPECT_TRUE(loaded.ok()) << loaded.status().ToString();
  return loaded.ok() ? *loaded : std::nullopt;
}

std::vector<ShardRecord> StoreConformanceTest::ListOf(Store& store) {
  Result<std::vector<ShardRecord>> list = store.ListShards();
  EXPECT_TRUE(list.ok()) << list.status().ToString();
  return list.ok() ? *list : std::vector<ShardRecord>();
}

namespace {

TEST_P(StoreConformanceTest, DirectoryCrud) {
  EXPECT_TRUE(ListOf(*store_).empty());

  ASSERT_TRUE(store_->PutShard(Record("b", "arena", 20)).ok());
  ASSERT_TRUE(store_->PutShard(Record("a", "arena", 30)).ok());
  ASSERT_TRUE(store_->PutShard(Record("c", "race", 20)).ok());
  std::vector<ShardRecord> list = ListOf(*store_);
  ASSERT_EQ(list.size(), 3u);
  EXPECT_EQ(list[0].id, "b");  // created_ms, then id
  EXPECT_EQ(list[1].id, "c");
  EXPECT_EQ(list[2].id, "a");
  EXPECT_EQ(list[2].kind, "arena");
  EXPECT_EQ(list[2].params, std::string("\x81\xa1n\x01", 4));
  EXPECT_EQ(list[2].status, "running");
  EXPECT_EQ(list[2].error, "");
  EXPECT_EQ(list[2].created_unix_ms, 30);

  // Put replaces the whole record.
  ShardRecord replaced = Record("a", "race", 5);
  replaced.params = "p2";
  replaced.status = "failed";
  replaced.error = "boom";
  ASSERT_TRUE(store_->PutShard(replaced).ok());
  list = ListOf(*store_);
  ASSERT_EQ(list.size(), 3u);
  EXPECT_EQ(list[0].id, "a");
  EXPECT_EQ(list[0].kind, "race");
  EXPECT_EQ(list[0].params, "p2");
  EXPECT_EQ(list[0].status, "failed");
  EXPECT_EQ(list[0].error, "boom");

  clock_.Set(99'000'000);
  ASSERT_TRUE(store_->SetShardStatus("a", "running", "").ok());
  list = ListOf(*store_);
  EXPECT_EQ(list[0].status, "running");
  EXPECT_EQ(list[0].error, "");
  EXPECT_EQ(list[0].created_unix_ms, 5);
  EXPECT_EQ(list[0].updated_unix_ms, 99'000);

  Status missing = store_->SetShardStatus("nope", "failed", "x");
  EXPECT_EQ(missing.code(), StatusCode::kNotFound) << missing.ToString();
  EXPECT_NE(missing.message().find("'nope'"), std::string::npos)
      << missing.message();

  ASSERT_TRUE(store_->DeleteShard("a").ok());
  ASSERT_TRUE(store_->DeleteShard("a").ok());  // absent: a no-op
  list = ListOf(*store_);
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0].id, "b");
  EXPECT_EQ(list[1].id, "c");
  // A deleted record has no status to set.
  EXPECT_EQ(store_->SetShardStatus("a", "failed", "x").code(),
            StatusCode::kNotFound);
}

// Ties on the creation time go by id, byte by byte.
TEST_P(StoreConformanceTest, ListBreaksTiesByIdBytes) {
  for (const char* id : {"b", "B", "a-2", "a", "a-10", "\xc3\xa9"}) {
    ASSERT_TRUE(store_->PutShard(Record(id, "arena", 7)).ok());
  }
  std::vector<std::string> ids;
  for (const ShardRecord& r : ListOf(*store_)) ids.push_back(r.id);
  EXPECT_EQ(ids, (std::vector<std::string>{"B", "a", "a-10", "a-2", "b",
                                           "\xc3\xa9"}));
}

TEST_P(StoreConformanceTest, ZeroTimestampsComeFromTheClock) {
  ShardRecord r = Record("s", "arena", 0);
  ASSERT_TRUE(store_->PutShard(r).ok());
  std::vector<ShardRecord> list = ListOf(*store_);
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0].created_unix_ms, kConformanceStartMs);
  EXPECT_EQ(list[0].updated_unix_ms, kConformanceStartMs);
}

TEST_P(StoreConformanceTest, SavesReplaceAndForgetDrops) {
  EXPECT_EQ(LoadOf(*store_, "s"), std::nullopt);
  ASSERT_TRUE(store_->Save("s", "one").ok());
  ASSERT_TRUE(store_->Save("s", "two").ok());
  ASSERT_TRUE(store_->Save("t", "other").ok());
  EXPECT_EQ(LoadOf(*store_, "s"), "two");
  EXPECT_EQ(LoadOf(*store_, "t"), "other");

  ASSERT_TRUE(store_->Forget("s").ok());
  ASSERT_TRUE(store_->Forget("s").ok());  // absent: a no-op
  EXPECT_EQ(LoadOf(*store_, "s"), std::nullopt);
  EXPECT_EQ(LoadOf(*store_, "t"), "other");
}

TEST_P(StoreConformanceTest, DeleteShardRemovesItsSaveOnly) {
  ASSERT_TRUE(store_->PutShard(Record("a", "arena", 1)).ok());
  ASSERT_TRUE(store_->PutShard(Record("b", "arena", 2)).ok());
  ASSERT_TRUE(store_->Save("a", "state-a").ok());
  ASSERT_TRUE(store_->Save("b", "state-b").ok());
  ASSERT_TRUE(store_->DeleteShard("a").ok());
  EXPECT_EQ(LoadOf(*store_, "a"), std::nullopt);
  EXPECT_EQ(LoadOf(*store_, "b"), "state-b");
  // Forget leaves the directory alone.
  ASSERT_TRUE(store_->Forget("b").ok());
  EXPECT_EQ(ListOf(*store_).size(), 1u);
}

TEST_P(StoreConformanceTest, SaveNeedsNoDirectoryRecord) {
  ASSERT_TRUE(store_->Save("orphan", "bytes").ok());
  EXPECT_EQ(LoadOf(*store_, "orphan"), "bytes");
  EXPECT_TRUE(ListOf(*store_).empty());
  ASSERT_TRUE(store_->DeleteShard("orphan").ok());  // drops the save too
  EXPECT_EQ(LoadOf(*store_, "orphan"), std::nullopt);
}

TEST_P(StoreConformanceTest, ReopenKeepsEverything) {
  ASSERT_TRUE(store_->PutShard(Record("a", "arena", 7)).ok());
  ASSERT_TRUE(store_->SetShardStatus("a", "failed", "refused its state").ok());
  ASSERT_TRUE(store_->Save("a", Payload(42, 5000)).ok());
  Reopen();
  std::vector<ShardRecord> list = ListOf(*store_);
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0].id, "a");
  EXPECT_EQ(list[0].status, "failed");
  EXPECT_EQ(list[0].error, "refused its state");
  std::optional<std::string> state = LoadOf(*store_, "a");
  ASSERT_TRUE(state.has_value());
  EXPECT_EQ(CheckPayload(*state), 42);
}

TEST_P(StoreConformanceTest, ReopenKeepsTheJournal) {
  std::vector<TransferRecord> records(2);
  for (int i = 0; i < 2; ++i) {
    records[i].id = "m" + std::to_string(i + 1);
    records[i].from_shard = "S";
    records[i].to_shard = "T";
    records[i].subscriber = i == 0 ? "p" : "q";
    records[i].state = "state of " + records[i].subscriber;
  }
  ASSERT_TRUE(store_->BeginTransfers(records, "S", "s1").ok());
  std::vector<TransferAdvance> steps = {
      {"m2", TransferStep::kOut, TransferStep::kBack}};
  ASSERT_TRUE(store_->AdvanceTransfers(steps, "S", "s2").ok());
  Reopen();
  Result<std::vector<TransferRecord>> rows = store_->ListTransfers();
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[0].id, "m1");
  EXPECT_EQ((*rows)[0].step, TransferStep::kOut);
  EXPECT_EQ((*rows)[0].state, "state of p");
  EXPECT_EQ((*rows)[1].step, TransferStep::kBack);
  EXPECT_EQ(LoadOf(*store_, "S"), "s2");
}

TEST_P(StoreConformanceTest, BinarySafeValues) {
  std::string all_bytes;
  for (int i = 0; i < 256; ++i) all_bytes.push_back(static_cast<char>(i));
  std::string big = Payload(7, 10 << 20);

  ShardRecord r = Record("bin", "arena", 1);
  r.params = all_bytes;
  ASSERT_TRUE(store_->PutShard(r).ok());
  ShardRecord empty = Record("empty", "arena", 2);
  empty.params = "";
  ASSERT_TRUE(store_->PutShard(empty).ok());

  ASSERT_TRUE(store_->Save("all", all_bytes).ok());
  ASSERT_TRUE(store_->Save("zero", "").ok());
  ASSERT_TRUE(store_->Save("null-view", std::string_view()).ok());
  ASSERT_TRUE(store_->Save("big", big).ok());
  ASSERT_TRUE(store_->Save(std::string("id\0with-nul", 11), "x").ok());

  for (int reopen = 0; reopen < 2; ++reopen) {
    EXPECT_EQ(LoadOf(*store_, "all"), all_bytes);
    std::optional<std::string> zero = LoadOf(*store_, "zero");
    ASSERT_TRUE(zero.has_value()) << "an empty state is not a missing one";
    EXPECT_EQ(*zero, "");
    EXPECT_EQ(LoadOf(*store_, "null-view"), "");
    std::optional<std::string> loaded = LoadOf(*store_, "big");
    ASSERT_TRUE(loaded.has_value());
    EXPECT_TRUE(*loaded == big) << "10 MiB state differs";
    EXPECT_EQ(LoadOf(*store_, std::string("id\0with-nul", 11)), "x");
    EXPECT_EQ(LoadOf(*store_, "id"), std::nullopt);
    std::vector<ShardRecord> list = ListOf(*store_);
    ASSERT_EQ(list.size(), 2u);
    EXPECT_EQ(list[0].params, all_bytes);
    EXPECT_EQ(list[1].params, "");
    Reopen();
  }
}

TEST_P(StoreConformanceTest, ConcurrentSavesFromEightThreads) {
  constexpr int kThreads = 8;
  constexpr int kRounds = 25;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::string own = "own-" + std::to_string(t);
      for (int i = 1; i <= kRounds; ++i) {
        uint64_t seq = uint64_t(t) * 1000 + i;
        if (!store_->Save(own, Payload(seq, 100 + 37 * i)).ok()) ++failures;
        if (!store_->Save("shared", Payload(seq, 64 + i)).ok()) ++failures;
        Result<std::optional<std::string>> mine = store_->Load(own);
        if (!mine.ok() || !mine->has_value() ||
            CheckPayload(**mine) != static_cast<int64_t>(seq)) {
          ++failures;
        }
        if (i % 10 == 0) {
          ShardRecord r = Record(own, "arena", t);
          if (!store_->PutShard(r).ok()) ++failures;
          if (!store_->ListShards().ok()) ++failures;
        }
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);

  for (int t = 0; t < kThreads; ++t) {
    std::optional<std::string> own =
        LoadOf(*store_, "own-" + std::to_string(t));
    ASSERT_TRUE(own.has_value());
    EXPECT_EQ(CheckPayload(*own), t * 1000 + kRounds);
  }
  std::optional<std::string> shared = LoadOf(*store_, "shared");
  ASSERT_TRUE(shared.has_value());
  int64_t seq = CheckPayload(*shared);
  EXPECT_EQ(seq % 1000, kRounds) << "the last save of some thread wins";
  EXPECT_EQ(ListOf(*store_).size(), size_t{kThreads});
}

TEST_P(StoreConformanceTest, TwoStoresOnOnePlaceSeeEachOther) {
  std::unique_ptr<Store> second = OpenAnother();
  ASSERT_NE(second, nullptr);
  ASSERT_TRUE(store_->Save("s", "from-first").ok());
  EXPECT_EQ(LoadOf(*second, "s"), "from-first");
  ASSERT_TRUE(second->PutShard(Record("s", "arena", 1)).ok());
  EXPECT_EQ(ListOf(*store_).size(), 1u);
  ASSERT_TRUE(store_->SetShardStatus("s", "failed", "bad state").ok());
  EXPECT_EQ(ListOf(*second)[0].error, "bad state");
  ASSERT_TRUE(second->DeleteShard("s").ok());
  EXPECT_TRUE(ListOf(*store_).empty());
  EXPECT_EQ(LoadOf(*store_, "s"), std::nullopt);
}

// Two stores on one place, one thread each, moving players out of the
// same shard: every subscriber gets one kOut row, whichever store won.
TEST_P(StoreConformanceTest, TwoStoresRacingToMoveOneSubscriber) {
  std::unique_ptr<Store> second = OpenAnother();
  ASSERT_NE(second, nullptr);
  constexpr int kSubscribers = 30;
  Store* stores[2] = {store_.get(), second.get()};
  std::vector<int> won(2, 0);
  std::vector<Status> unexpected(2);
  std::vector<std::thread> threads;
  for (int w = 0; w < 2; ++w) {
    threads.emplace_back([&, w] {
      for (int i = 0; i < kSubscribers; ++i) {
        TransferRecord r;
        r.id = "w" + std::to_string(w) + "-" + std::to_string(i);
        r.from_shard = "S";
        r.to_shard = "T";
        r.subscriber = "p" + std::to_string(i);
        std::vector<TransferRecord> records = {r};
        Status st = stores[w]->BeginTransfers(records, "S", std::nullopt);
        if (st.ok()) {
          ++won[w];
        } else if (st.code() != StatusCode::kAlreadyExists) {
          unexpected[w] = st;
          return;
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (const Status& st : unexpected) EXPECT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(won[0] + won[1], kSubscribers);
  Result<std::vector<TransferRecord>> rows = store_->ListTransfers();
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  EXPECT_EQ(rows->size(), size_t{kSubscribers});
}

// Two stores on one place advance the same rows at once, in opposite
// orders and to different steps: in each round exactly one whole batch
// wins, the other is refused (never a deadlock, never half of each).
TEST_P(StoreConformanceTest, TwoStoresAdvancingOneBatchInOppositeOrders) {
  std::unique_ptr<Store> second = OpenAnother();
  ASSERT_NE(second, nullptr);
  constexpr int kRounds = 10;
  constexpr int kRows = 8;
  for (int round = 0; round < kRounds; ++round) {
    std::vector<TransferRecord> records(kRows);
    std::vector<TransferAdvance> forward, backward;
    for (int i = 0; i < kRows; ++i) {
      records[i].id = "r" + std::to_string(round) + "-" + std::to_string(i);
      records[i].from_shard = "S" + std::to_string(round);
      records[i].to_shard = "T";
      records[i].subscriber = "p" + std::to_string(i);
      forward.push_back({records[i].id, TransferStep::kOut, TransferStep::kIn});
    }
    for (int i = kRows - 1; i >= 0; --i) {
      backward.push_back(
          {records[i].id, TransferStep::kOut, TransferStep::kBack});
    }
    ASSERT_TRUE(
        store_->BeginTransfers(records, records[0].from_shard, "s0").ok());
    Status results[2];
    std::thread a(
        [&] { results[0] = store_->AdvanceTransfers(forward, "T", "t"); });
    std::thread b([&] {
      results[1] =
          second->AdvanceTransfers(backward, records[0].from_shard, "s1");
    });
    a.join();
    b.join();
    ASSERT_NE(results[0].ok(), results[1].ok())
        << results[0].ToString() << " / " << results[1].ToString();
    const int loser = results[0].ok() ? 1 : 0;
    EXPECT_EQ(results[loser].code(), StatusCode::kFailedPrecondition)
        << results[loser].ToString();
    const TransferStep won =
        results[0].ok() ? TransferStep::kIn : TransferStep::kBack;
    Result<std::vector<TransferRecord>> rows = second->ListTransfers();
    ASSERT_TRUE(rows.ok()) << rows.status().ToString();
    for (const TransferRecord& r : *rows) {
      if (r.from_shard == records[0].from_shard) {
        EXPECT_EQ(r.step, won) << r.id;
      }
    }
    if (results[0].ok()) {
      EXPECT_EQ(LoadOf(*store_, "T"), "t");
    }
    EXPECT_EQ(LoadOf(*store_, records[0].from_shard),
              results[1].ok() ? "s1" : "s0");
  }
}

}  // namespace
}  // namespace tessera::store
