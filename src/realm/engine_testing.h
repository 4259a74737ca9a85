// Helpers shared by the realm engine tests (engine_test.cc,
// engine_failure_test.cc): a "match" kind, its initial state, op builders
// and a real SQLite realm store.
#ifndef TESSERA_REALM_ENGINE_TESTING_H_
#define TESSERA_REALM_ENGINE_TESTING_H_

#include <gtest/gtest.h>

#include <initializer_list>
#include <memory>
#include <optional>
#include <string>

#include "realm/engine.h"
#include "store/sqlite_realm_store.h"

namespace tessera::realm::engine_testing {

using store::SqliteRealmStore;

inline RealmKindConfig Kind(Json overrides = Json::object()) {
  Json kind = {{"name", "match"},
               {"schema", {{"v", 1}}},
               {"rules", Json::parse(R"([
                  {"path": "players/{avatar}/**", "write": "owner"},
                  {"path": "chat", "write": "append"}])")},
               {"snapshotEveryVersions", 8},
               {"logWindow", 16}};
  for (auto& [field, value] : overrides.items()) kind[field] = value;
  Result<RealmKindConfig> parsed = ParseRealmKind(kind, "test");
  EXPECT_TRUE(parsed.ok()) << parsed.status().ToString();
  return parsed.ok() ? *parsed : RealmKindConfig();
}

inline Json Initial() {
  return Json::parse(R"({"players": {}, "chat": [], "n": 0})");
}

inline Path P(std::initializer_list<const char*> keys) {
  Path path;
  for (const char* key : keys) path.emplace_back(std::string(key));
  return path;
}

inline Op Set(Path path, Json value) {
  return {OpKind::kSet, std::move(path), value};
}

inline std::unique_ptr<SqliteRealmStore> OpenStore(const std::string& path) {
  Result<std::unique_ptr<SqliteRealmStore>> store =
      SqliteRealmStore::Open(path);
  EXPECT_TRUE(store.ok()) << store.status().ToString();
  return store.ok() ? std::move(*store) : nullptr;
}

inline std::unique_ptr<RealmInstance> OpenRealm(
    const RealmKindConfig& kind, RealmStore* store,
    const std::string& key = "match/m1") {
  Result<std::unique_ptr<RealmInstance>> realm =
      RealmInstance::Open(kind, key, store, Initial());
  EXPECT_TRUE(realm.ok()) << realm.status().ToString();
  return realm.ok() ? std::move(*realm) : nullptr;
}

// The stored realm "match/m1" (an empty one if it is missing).
inline LoadedRealm Loaded(RealmStore* store) {
  Result<std::optional<LoadedRealm>> loaded = store->Load("match/m1");
  EXPECT_TRUE(loaded.ok() && loaded->has_value());
  return loaded.ok() && loaded->has_value() ? **loaded : LoadedRealm();
}

// Server commit number `i`: n = i and players/p<i % 3>/score = i.
inline int64_t Commit(RealmInstance* realm, int i) {
  Result<int64_t> v =
      realm->Submit({Set(P({"n"}), i),
                     Set(P({"players", ("p" + std::to_string(i % 3)).c_str()}),
                         {{"score", i}})},
                    "");
  EXPECT_TRUE(v.ok()) << v.status().ToString();
  return v.ok() ? *v : -1;
}

}  // namespace tessera::realm::engine_testing

#endif  // TESSERA_REALM_ENGINE_TESTING_H_
