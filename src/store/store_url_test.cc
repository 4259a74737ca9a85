#include "store/store_url.h"

#include <gtest/gtest.h>

#include <vector>

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

TEST(StoreUrlTest, PostgresForms) {
  struct Case {
    const char* url;
    const char* libpq;
    const char* redacted;
  };
  for (const Case& c : {
           Case{"postgres://user:secret@db/tessera",
                "postgres://user:secret@db/tessera",
                "postgres://user:***@db/tessera"},
           Case{"postgresql://db:5433/tessera?sslmode=require",
                "postgresql://db:5433/tessera?sslmode=require",
                "postgresql://db:5433/tessera?sslmode=require"},
           Case{"POSTGRES://u@db", "postgres://u@db", "postgres://u@db"},
           Case{"postgres://u:p@ss:w@rd@[::1]:5432/x?a=b@c",
                "postgres://u:p@ss:w@rd@[::1]:5432/x?a=b@c",
                "postgres://u:***@[::1]:5432/x?a=b@c"},
       }) {
    Result<StoreUrl> parsed = ParseStoreUrl(c.url);
    ASSERT_TRUE(parsed.ok()) << c.url << ": " << parsed.status().ToString();
    EXPECT_EQ(parsed->backend, StoreUrl::Backend::kPostgres);
    EXPECT_EQ(parsed->url, c.libpq);
    EXPECT_EQ(parsed->redacted, c.redacted);
  }
}

// Every store opens postgres:// URLs; an unreachable database is kIo
// naming the database without its password.
TEST(StoreUrlTest, AnUnreachableDatabaseIsAClearError) {
  // Nothing listens on port 1.
  const std::string url = "postgres://tessera:s3cret@127.0.0.1:1/app";
  std::vector<Status> errors = {
      OpenStore(url).status(), OpenDataStore(url).status(),
      OpenComputeStore(url).status(), OpenRealmStore(url).status()};
  for (const Status& error : errors) {
    EXPECT_EQ(error.code(), StatusCode::kIo) << error.ToString();
    EXPECT_EQ(error.message().find("s3cret"), std::string::npos)
        << error.message();
    EXPECT_TRUE(error.message().starts_with(
        "database postgres://tessera:***@127.0.0.1:1/app: postgres: cannot "
        "connect: "))
        << error.message();
  }
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
