#include "store/sqlite_store.h"

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "store/store.h"
#include "store/test_util.h"

namespace tessera::store {
namespace {

using testing::CheckPayload;
using testing::Payload;
using testing::ScratchDir;

std::unique_ptr<SqliteStore> MustOpen(const std::string& path,
                                      SqliteStore::Options options = {}) {
  Result<std::unique_ptr<SqliteStore>> store =
      SqliteStore::Open(path, std::move(options));
  EXPECT_TRUE(store.ok()) << store.status().ToString();
  return store.ok() ? std::move(store).value() : nullptr;
}

ShardRecord Record(std::string id, std::string kind, int64_t created_ms) {
  ShardRecord r;
  r.id = std::move(id);
  r.kind = std::move(kind);
  r.params = std::string("\x81\xa1n\x01", 4);
  r.status = "running";
  r.created_unix_ms = created_ms;
  r.updated_unix_ms = created_ms;
  return r;
}

std::optional<std::string> MustLoad(Store& store, std::string_view id) {
  Result<std::optional<std::string>> loaded = store.Load(id);
  EXPECT_TRUE(loaded.ok()) << loaded.status().ToString();
  return loaded.ok() ? *loaded : std::nullopt;
}

std::vector<ShardRecord> MustList(Store& store) {
  Result<std::vector<ShardRecord>> list = store.ListShards();
  EXPECT_TRUE(list.ok()) << list.status().ToString();
  return list.ok() ? *list : std::vector<ShardRecord>();
}

class SqliteStoreTest : public ::testing::Test {
 protected:
  SqliteStoreTest() : path_(dir_.File("nested/dirs/tessera.db")) {}

  std::unique_ptr<SqliteStore> Open() {
    SqliteStore::Options options;
    options.wall_clock = &wall_clock_;
    return MustOpen(path_, std::move(options));
  }

  ScratchDir dir_;
  std::string path_;
  FakeWallClock wall_clock_{1'700'000'000'000'000};
};

TEST_F(SqliteStoreTest, DirectoryCrud) {
  auto store = Open();
  ASSERT_NE(store, nullptr);
  EXPECT_TRUE(MustList(*store).empty());

  ASSERT_TRUE(store->PutShard(Record("b", "arena", 20)).ok());
  ASSERT_TRUE(store->PutShard(Record("a", "arena", 30)).ok());
  ASSERT_TRUE(store->PutShard(Record("c", "race", 20)).ok());
  std::vector<ShardRecord> list = MustList(*store);
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
  ASSERT_TRUE(store->PutShard(replaced).ok());
  list = MustList(*store);
  ASSERT_EQ(list.size(), 3u);
  EXPECT_EQ(list[0].id, "a");
  EXPECT_EQ(list[0].kind, "race");
  EXPECT_EQ(list[0].params, "p2");
  EXPECT_EQ(list[0].status, "failed");
  EXPECT_EQ(list[0].error, "boom");

  wall_clock_.Set(99'000'000);
  ASSERT_TRUE(store->SetShardStatus("a", "running", "").ok());
  list = MustList(*store);
  EXPECT_EQ(list[0].status, "running");
  EXPECT_EQ(list[0].error, "");
  EXPECT_EQ(list[0].created_unix_ms, 5);
  EXPECT_EQ(list[0].updated_unix_ms, 99'000);

  Status missing = store->SetShardStatus("nope", "failed", "x");
  EXPECT_EQ(missing.code(), StatusCode::kNotFound) << missing.ToString();

  ASSERT_TRUE(store->DeleteShard("a").ok());
  ASSERT_TRUE(store->DeleteShard("a").ok());  // absent: a no-op
  list = MustList(*store);
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0].id, "b");
  EXPECT_EQ(list[1].id, "c");
}

TEST_F(SqliteStoreTest, ZeroTimestampsComeFromTheClock) {
  auto store = Open();
  ASSERT_NE(store, nullptr);
  ShardRecord r = Record("s", "arena", 0);
  ASSERT_TRUE(store->PutShard(r).ok());
  std::vector<ShardRecord> list = MustList(*store);
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0].created_unix_ms, 1'700'000'000'000);
  EXPECT_EQ(list[0].updated_unix_ms, 1'700'000'000'000);
}

TEST_F(SqliteStoreTest, SavesReplaceAndForgetDrops) {
  auto store = Open();
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(MustLoad(*store, "s"), std::nullopt);
  ASSERT_TRUE(store->Save("s", "one").ok());
  ASSERT_TRUE(store->Save("s", "two").ok());
  ASSERT_TRUE(store->Save("t", "other").ok());
  EXPECT_EQ(MustLoad(*store, "s"), "two");
  EXPECT_EQ(MustLoad(*store, "t"), "other");

  ASSERT_TRUE(store->Forget("s").ok());
  ASSERT_TRUE(store->Forget("s").ok());  // absent: a no-op
  EXPECT_EQ(MustLoad(*store, "s"), std::nullopt);
  EXPECT_EQ(MustLoad(*store, "t"), "other");
}

TEST_F(SqliteStoreTest, DeleteShardRemovesItsSaveOnly) {
  auto store = Open();
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->PutShard(Record("a", "arena", 1)).ok());
  ASSERT_TRUE(store->PutShard(Record("b", "arena", 2)).ok());
  ASSERT_TRUE(store->Save("a", "state-a").ok());
  ASSERT_TRUE(store->Save("b", "state-b").ok());
  ASSERT_TRUE(store->DeleteShard("a").ok());
  EXPECT_EQ(MustLoad(*store, "a"), std::nullopt);
  EXPECT_EQ(MustLoad(*store, "b"), "state-b");
  // Forget leaves the directory alone.
  ASSERT_TRUE(store->Forget("b").ok());
  EXPECT_EQ(MustList(*store).size(), 1u);
}

TEST_F(SqliteStoreTest, SaveNeedsNoDirectoryRecord) {
  auto store = Open();
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->Save("orphan", "bytes").ok());
  EXPECT_EQ(MustLoad(*store, "orphan"), "bytes");
  EXPECT_TRUE(MustList(*store).empty());
  ASSERT_TRUE(store->DeleteShard("orphan").ok());  // drops the save too
  EXPECT_EQ(MustLoad(*store, "orphan"), std::nullopt);
}

TEST_F(SqliteStoreTest, ReopenKeepsEverything) {
  {
    auto store = Open();
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store->PutShard(Record("a", "arena", 7)).ok());
    ASSERT_TRUE(store->SetShardStatus("a", "failed", "refused its state").ok());
    ASSERT_TRUE(store->Save("a", Payload(42, 5000)).ok());
  }
  auto store = Open();
  ASSERT_NE(store, nullptr);
  std::vector<ShardRecord> list = MustList(*store);
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0].id, "a");
  EXPECT_EQ(list[0].status, "failed");
  EXPECT_EQ(list[0].error, "refused its state");
  std::optional<std::string> state = MustLoad(*store, "a");
  ASSERT_TRUE(state.has_value());
  EXPECT_EQ(CheckPayload(*state), 42);
}

TEST_F(SqliteStoreTest, BinarySafeValues) {
  auto store = Open();
  ASSERT_NE(store, nullptr);
  std::string all_bytes;
  for (int i = 0; i < 256; ++i) all_bytes.push_back(static_cast<char>(i));
  std::string big = Payload(7, 10 << 20);

  ShardRecord r = Record("bin", "arena", 1);
  r.params = all_bytes;
  ASSERT_TRUE(store->PutShard(r).ok());
  ShardRecord empty = Record("empty", "arena", 2);
  empty.params = "";
  ASSERT_TRUE(store->PutShard(empty).ok());

  ASSERT_TRUE(store->Save("all", all_bytes).ok());
  ASSERT_TRUE(store->Save("zero", "").ok());
  ASSERT_TRUE(store->Save("null-view", std::string_view()).ok());
  ASSERT_TRUE(store->Save("big", big).ok());
  ASSERT_TRUE(store->Save(std::string("id\0with-nul", 11), "x").ok());

  for (int reopen = 0; reopen < 2; ++reopen) {
    EXPECT_EQ(MustLoad(*store, "all"), all_bytes);
    std::optional<std::string> zero = MustLoad(*store, "zero");
    ASSERT_TRUE(zero.has_value()) << "an empty state is not a missing one";
    EXPECT_EQ(*zero, "");
    EXPECT_EQ(MustLoad(*store, "null-view"), "");
    std::optional<std::string> loaded = MustLoad(*store, "big");
    ASSERT_TRUE(loaded.has_value());
    EXPECT_TRUE(*loaded == big) << "10 MiB state differs";
    EXPECT_EQ(MustLoad(*store, std::string("id\0with-nul", 11)), "x");
    EXPECT_EQ(MustLoad(*store, "id"), std::nullopt);
    std::vector<ShardRecord> list = MustList(*store);
    ASSERT_EQ(list.size(), 2u);
    EXPECT_EQ(list[0].params, all_bytes);
    EXPECT_EQ(list[1].params, "");
    store.reset();
    store = Open();
    ASSERT_NE(store, nullptr);
  }
}

TEST_F(SqliteStoreTest, ConcurrentSavesFromEightThreads) {
  auto store = Open();
  ASSERT_NE(store, nullptr);
  constexpr int kThreads = 8;
  constexpr int kRounds = 25;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::string own = "own-" + std::to_string(t);
      for (int i = 1; i <= kRounds; ++i) {
        uint64_t seq = uint64_t(t) * 1000 + i;
        if (!store->Save(own, Payload(seq, 100 + 37 * i)).ok()) ++failures;
        if (!store->Save("shared", Payload(seq, 64 + i)).ok()) ++failures;
        Result<std::optional<std::string>> mine = store->Load(own);
        if (!mine.ok() || !mine->has_value() ||
            CheckPayload(**mine) != static_cast<int64_t>(seq)) {
          ++failures;
        }
        if (i % 10 == 0) {
          ShardRecord r = Record(own, "arena", t);
          if (!store->PutShard(r).ok()) ++failures;
          if (!store->ListShards().ok()) ++failures;
        }
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);

  for (int t = 0; t < kThreads; ++t) {
    std::optional<std::string> own =
        MustLoad(*store, "own-" + std::to_string(t));
    ASSERT_TRUE(own.has_value());
    EXPECT_EQ(CheckPayload(*own), t * 1000 + kRounds);
  }
  std::optional<std::string> shared = MustLoad(*store, "shared");
  ASSERT_TRUE(shared.has_value());
  int64_t seq = CheckPayload(*shared);
  EXPECT_EQ(seq % 1000, kRounds) << "the last save of some thread wins";
  EXPECT_EQ(MustList(*store).size(), size_t{kThreads});
}

TEST_F(SqliteStoreTest, TwoConnectionsToOneFileSeeEachOther) {
  auto first = Open();
  auto second = Open();
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  ASSERT_TRUE(first->Save("s", "from-first").ok());
  EXPECT_EQ(MustLoad(*second, "s"), "from-first");
  ASSERT_TRUE(second->PutShard(Record("s", "arena", 1)).ok());
  EXPECT_EQ(MustList(*first).size(), 1u);
}

TEST_F(SqliteStoreTest, OpenStoreUrlForms) {
  for (const std::string& url :
       {"sqlite:" + dir_.File("u1/a.db"), "sqlite://" + dir_.File("u2/b.db"),
        dir_.File("u3/c.db"), std::string("sqlite::memory:")}) {
    Result<std::unique_ptr<Store>> store = OpenStore(url);
    ASSERT_TRUE(store.ok()) << url << ": " << store.status().ToString();
    ASSERT_TRUE((*store)->Save("s", "v").ok());
    EXPECT_EQ(MustLoad(**store, "s"), "v");
  }
  EXPECT_TRUE(std::filesystem::exists(dir_.File("u1/a.db")));
  EXPECT_TRUE(std::filesystem::exists(dir_.File("u2/b.db")));
  EXPECT_TRUE(std::filesystem::exists(dir_.File("u3/c.db")));
}

void ExpectIoErrorNaming(const Result<std::unique_ptr<SqliteStore>>& store,
                         const std::string& path) {
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kIo)
      << store.status().ToString();
  EXPECT_NE(store.status().message().find(path), std::string::npos)
      << store.status().message();
}

TEST_F(SqliteStoreTest, BadPathsAreIoErrorsNamingThePath) {
  std::ofstream(dir_.File("plain")) << "not a directory";
  std::string under_file = dir_.File("plain/sub/x.db");
  ExpectIoErrorNaming(SqliteStore::Open(under_file), under_file);

  // A directory where the file should be.
  std::filesystem::create_directories(dir_.File("adir"));
  ExpectIoErrorNaming(SqliteStore::Open(dir_.File("adir")), dir_.File("adir"));

  // A file that is not a database.
  std::string garbage = dir_.File("garbage.db");
  std::ofstream(garbage) << std::string(4096, 'g');
  Result<std::unique_ptr<SqliteStore>> store = SqliteStore::Open(garbage);
  ExpectIoErrorNaming(store, garbage);
  EXPECT_NE(store.status().message().find("not a database"), std::string::npos)
      << store.status().message();

  Result<std::unique_ptr<SqliteStore>> empty = SqliteStore::Open("");
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tessera::store
