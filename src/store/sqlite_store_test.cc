// SqliteStore: the Store conformance suite (store_conformance.h) on a
// file, then what only SQLite has: the URL forms of OpenStore and the
// errors of bad paths. The journal's suite runs in transfer_journal_test.cc,
// the kill -9 tests in sqlite_crash_test.cc and transfer_crash_test.cc.
#include "store/sqlite_store.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "store/store.h"
#include "store/store_conformance.h"
#include "store/test_util.h"

namespace tessera::store {
namespace {

using testing::ScratchDir;

INSTANTIATE_TEST_SUITE_P(
    Sqlite, StoreConformanceTest,
    ::testing::Values(StoreBackend{
        "sqlite",
        [] {
          auto dir = std::make_shared<ScratchDir>();
          return StorePlace{dir->File("nested/dirs/tessera.db"), dir};
        },
        [](const std::string& path,
           const WallClock* clock) -> Result<std::unique_ptr<Store>> {
          SqliteStore::Options options;
          options.wall_clock = clock;
          Result<std::unique_ptr<SqliteStore>> store =
              SqliteStore::Open(path, options);
          if (!store.ok()) return store.status();
          return std::unique_ptr<Store>(std::move(store).value());
        }}),
    StoreBackendName);

std::optional<std::string> MustLoad(Store& store, std::string_view id) {
  Result<std::optional<std::string>> loaded = store.Load(id);
  EXPECT_TRUE(loaded.ok()) << loaded.status().ToString();
  return loaded.ok() ? *loaded : std::nullopt;
}

class SqliteStoreTest : public ::testing::Test {
 protected:
  ScratchDir dir_;
};

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
