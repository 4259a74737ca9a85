#include "app/app_set.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace tessera::app {
namespace {

namespace fs = std::filesystem;

AppEntry App(const std::string& dir, const std::string& kinds_json) {
  Result<Manifest> m =
      ParseManifest(R"({"name":"x","shards":[)" + kinds_json + "]}", dir,
                    dir + "/tessera.json");
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  return AppEntry{dir, m.ok() ? std::move(m).value() : Manifest()};
}

TEST(AppSetTest, MountPrefixIsTheDirectoryName) {
  EXPECT_EQ(AppMountPrefix("apps/zone"), "/zone");
  EXPECT_EQ(AppMountPrefix("apps/zone/"), "/zone");
  EXPECT_EQ(AppMountPrefix("./apps/zone/."), "/zone");
  EXPECT_EQ(AppMountPrefix("/abs/path/lobby"), "/lobby");
  EXPECT_EQ(AppMountPrefix("zone"), "/zone");
}

TEST(AppSetTest, OneAppIsItself) {
  Result<AppSet> set =
      MergeApps({App("games/arena", R"({"name":"arena","wasm":"a.wasm"})")});
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  ASSERT_EQ(set->merged.kinds.size(), 1u);
  EXPECT_EQ(set->merged.dir, fs::path("games/arena"));
  EXPECT_TRUE(set->web_mounts.empty());
  ASSERT_EQ(set->apps.size(), 1u);
}

TEST(AppSetTest, KindsJoinTheFirstAndWebFoldersAreMounted) {
  Result<AppSet> set =
      MergeApps({App("games/arena", R"({"name":"arena","wasm":"a.wasm"})"),
                 App("more/zone/", R"({"name":"zone","wasm":"z.wasm"},
                            {"name":"lobby","wasm":"l.wasm"})"),
                 App("more/chat", R"({"name":"chat","wasm":"c.wasm"})")});
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  std::vector<std::string> names;
  for (const ShardKindSpec& k : set->merged.kinds) {
    names.push_back(k.config.name);
  }
  EXPECT_EQ(names,
            (std::vector<std::string>{"arena", "zone", "lobby", "chat"}));
  EXPECT_EQ(set->merged.dir, fs::path("games/arena"));
  // Each kind keeps the paths of its own app.
  EXPECT_EQ(set->merged.FindKind("zone")->wasm, fs::path("more/zone/z.wasm"));
  ASSERT_EQ(set->web_mounts.size(), 2u);
  EXPECT_EQ(set->web_mounts[0].prefix, "/zone");
  EXPECT_EQ(set->web_mounts[0].dir, fs::path("more/zone/") / "web");
  EXPECT_EQ(set->web_mounts[1].prefix, "/chat");
  EXPECT_EQ(set->web_mounts[1].dir, fs::path("more/chat/web"));
  ASSERT_EQ(set->apps.size(), 3u);
  EXPECT_EQ(set->apps[1].dir, fs::path("more/zone/"));
  EXPECT_EQ(set->apps[1].manifest.kinds.size(), 2u);
}

TEST(AppSetTest, ADuplicateKindIsRefused) {
  Result<AppSet> set =
      MergeApps({App("games/arena", R"({"name":"arena","wasm":"a.wasm"})"),
                 App("more/zone", R"({"name":"zone","wasm":"z.wasm"})"),
                 App("more/arena2", R"({"name":"zone","wasm":"y.wasm"})")});
  ASSERT_FALSE(set.ok());
  EXPECT_EQ(set.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(set.status().message(),
            "shard kind \"zone\" of more/arena2 is also a kind of another app "
            "served");

  set = MergeApps({App("games/arena", R"({"name":"arena","wasm":"a.wasm"})"),
                   App("more/zone", R"({"name":"arena","wasm":"z.wasm"})")});
  ASSERT_FALSE(set.ok());
  EXPECT_EQ(set.status().message(),
            "shard kind \"arena\" of more/zone is also a kind of another app "
            "served");
}

AppEntry ComputeApp(const std::string& dir, const std::string& module) {
  Result<Manifest> m =
      ParseManifest(R"({"name":"c","shards":[{"name":")" + module +
                        R"(-kind","wasm":"k.wasm"}],"compute":[{"name":")" +
                        module + R"(","source":"compute/m"}]})",
                    dir, dir + "/tessera.json");
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  return AppEntry{dir, m.ok() ? *m : Manifest{}};
}

TEST(AppSetTest, ComputeModulesOfEveryAppJoinNamingTheirOwnManifest) {
  Result<AppSet> set = MergeApps(
      {ComputeApp("games/main", "sim"), ComputeApp("more/shop", "shop")});
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  ASSERT_EQ(set->merged.compute.size(), 2u);
  EXPECT_EQ(set->merged.compute[0].name, "sim");
  EXPECT_EQ(set->merged.compute[1].name, "shop");
  EXPECT_EQ(set->merged.compute[1].source, fs::path("more/shop/compute/m"));
  EXPECT_EQ(set->merged.compute[1].where, "more/shop/tessera.json: compute[0]");

  set = MergeApps(
      {ComputeApp("games/main", "sim"), ComputeApp("more/sim", "sim")});
  ASSERT_FALSE(set.ok());
  EXPECT_EQ(set.status().message(),
            "shard kind \"sim-kind\" of more/sim is also a kind of another app "
            "served");
}

TEST(AppSetTest, ADuplicateComputeModuleIsRefused) {
  AppEntry other = ComputeApp("more/other", "sim");
  other.manifest.kinds.clear();
  Result<AppSet> set = MergeApps({ComputeApp("games/main", "sim"), other});
  ASSERT_FALSE(set.ok());
  EXPECT_EQ(set.status().message(),
            "compute module \"sim\" of more/other is also a module of another "
            "app served");
}

AppEntry DataApp(const std::string& dir, const std::string& kind,
                 const std::string& types) {
  Result<Manifest> m = ParseManifest(
      R"({"name":"x","shards":[{"name":")" + kind +
          R"(","wasm":"k.wasm"}],"data":{"types":[)" + types + "]}}",
      dir, dir + "/tessera.json");
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  return AppEntry{dir, m.ok() ? std::move(m).value() : Manifest()};
}

TEST(AppSetTest, DataTypesOfEveryAppMerge) {
  Result<AppSet> set = MergeApps(
      {DataApp("games/main", "arena",
               R"({"name":"Character","fields":[{"name":"hp","type":"int"}]})"),
       DataApp("more/shop", "shop",
               R"({"name":"Item","fields":[]},{"name":"Order","fields":[]})")});
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  std::vector<std::string> names;
  for (const data::EntityType& t : set->merged.data.types) {
    names.push_back(t.name);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"Character", "Item", "Order"}));
  EXPECT_NE(set->merged.data.Find("Character")->FindField("hp"), nullptr);
}

TEST(AppSetTest, ADataTypeDeclaredByTwoAppsIsRefusedNamingBoth) {
  Result<AppSet> set = MergeApps(
      {DataApp("games/main", "arena", R"({"name":"Item","fields":[]})"),
       DataApp("more/zone", "zone", R"({"name":"Zone","fields":[]})"),
       DataApp("more/shop", "shop", R"({"name":"Item","fields":[]})")});
  ASSERT_FALSE(set.ok());
  EXPECT_EQ(set.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(set.status().message(),
            "data type \"Item\" is declared by both games/main/tessera.json "
            "and more/shop/tessera.json (apps served together share one data "
            "store)");
  set = MergeApps(
      {DataApp("games/main", "arena", R"({"name":"Item","fields":[]})"),
       DataApp("more/zone", "zone", R"({"name":"Zone","fields":[]})"),
       DataApp("more/shop", "shop", R"({"name":"Zone","fields":[]})")});
  ASSERT_FALSE(set.ok());
  EXPECT_EQ(set.status().message(),
            "data type \"Zone\" is declared by both more/zone/tessera.json "
            "and more/shop/tessera.json (apps served together share one data "
            "store)");
}

TEST(AppSetTest, NoAppIsRefused) {
  EXPECT_EQ(MergeApps({}).status().code(), StatusCode::kInvalidArgument);
}

TEST(AppSetTest, LoadsEveryManifest) {
  const fs::path root =
      fs::temp_directory_path() /
      ("tessera_app_set_" +
       std::to_string(::testing::UnitTest::GetInstance()->random_seed()));
  fs::remove_all(root);
  fs::create_directories(root / "main");
  fs::create_directories(root / "zone");
  std::ofstream(root / "main" / "tessera.json")
      << R"({"name":"main","shards":[{"name":"arena","wasm":"a.wasm"}]})";
  std::ofstream(root / "zone" / "tessera.json")
      << R"({"name":"zone","shards":[{"name":"zone","wasm":"z.wasm"}]})";
  Result<AppSet> set = LoadAppSet(root / "main", {root / "zone"});
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  EXPECT_EQ(set->merged.name, "main");
  EXPECT_EQ(set->merged.kinds.size(), 2u);
  ASSERT_EQ(set->web_mounts.size(), 1u);
  EXPECT_EQ(set->web_mounts[0].prefix, "/zone");

  Result<AppSet> missing = LoadAppSet(root / "main", {root / "nope"});
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  fs::remove_all(root);
}

}  // namespace
}  // namespace tessera::app
