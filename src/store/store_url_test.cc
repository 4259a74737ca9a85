#include "store/store_url.h"

#include <gtest/gtest.h>

#include "store/store.h"

namespace tessera::store {
namespace {

std::string PathOf(const std::string& url) {
  Result<StoreUrl> parsed = ParseStoreUrl(url);
  EXPECT_TRUE(parsed.ok()) << url << ": " << parsed.status().ToString();
  return parsed.ok() ? parsed->path : "";
}

TEST(StoreUrlTest, SqliteForms) {
  EXPECT_EQ(PathOf("sqlite:data/x.db"), "data/x.db");
  EXPECT_EQ(PathOf("sqlite:/abs/x.db"), "/abs/x.db");
  EXPECT_EQ(PathOf("sqlite://data/x.db"), "data/x.db");
  EXPECT_EQ(PathOf("sqlite:///abs/x.db"), "/abs/x.db");
  EXPECT_EQ(PathOf("SQLite:///abs/x.db"), "/abs/x.db");
  EXPECT_EQ(PathOf("sqlite::memory:"), ":memory:");
  EXPECT_EQ(PathOf("plain/path.db"), "plain/path.db");
  EXPECT_EQ(PathOf("/abs/with:colon.db"), "/abs/with:colon.db");
}

// The app's data lives beside the store, in a file of its own.
TEST(StoreUrlTest, TheDataFileSitsBesideTheStoreFile) {
  EXPECT_EQ(DataFilePath("/app/.tessera/tessera.db"),
            "/app/.tessera/tessera-data.db");
  EXPECT_EQ(DataFilePath("rel/main.sqlite"), "rel/main-data.sqlite");
  EXPECT_EQ(DataFilePath("plain"), "plain-data");
  EXPECT_EQ(DataFilePath(":memory:"), ":memory:");
}

// So do the realms' logs and snapshots.
TEST(StoreUrlTest, TheRealmFileSitsBesideTheStoreFile) {
  EXPECT_EQ(RealmFilePath("/app/.tessera/tessera.db"),
            "/app/.tessera/tessera-realms.db");
  EXPECT_EQ(RealmFilePath("rel/main.sqlite"), "rel/main-realms.sqlite");
  EXPECT_EQ(RealmFilePath("plain"), "plain-realms");
  EXPECT_EQ(RealmFilePath(":memory:"), ":memory:");
  EXPECT_NE(RealmFilePath("a.db"), DataFilePath("a.db"));
}

TEST(StoreUrlTest, PostgresIsNotYetSupported) {
  for (const char* url : {"postgres://user:secret@db/tessera",
                          "postgresql://db/tessera", "POSTGRES://db"}) {
    Result<StoreUrl> parsed = ParseStoreUrl(url);
    ASSERT_FALSE(parsed.ok()) << url;
    EXPECT_EQ(parsed.status().code(), StatusCode::kFailedPrecondition);
    EXPECT_EQ(parsed.status().message(),
              "PostgreSQL support comes with the cluster work; use "
              "sqlite:PATH");
  }
  Result<std::unique_ptr<Store>> store =
      OpenStore("postgres://user:secret@db/tessera");
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kFailedPrecondition);
}

TEST(StoreUrlTest, OtherSchemesAndEmptyPathsAreInvalid) {
  Result<StoreUrl> mysql = ParseStoreUrl("mysql://root:secret@db/x");
  ASSERT_FALSE(mysql.ok());
  EXPECT_EQ(mysql.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(mysql.status().message().find("\"mysql://\""), std::string::npos);
  EXPECT_EQ(mysql.status().message().find("secret"), std::string::npos);

  for (const char* url : {"", "sqlite:", "sqlite://"}) {
    Result<StoreUrl> parsed = ParseStoreUrl(url);
    ASSERT_FALSE(parsed.ok()) << url;
    EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument) << url;
  }
}

}  // namespace
}  // namespace tessera::store
