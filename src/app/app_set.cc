#include "app/app_set.h"

#include <utility>

namespace tessera::app {
namespace fs = std::filesystem;
namespace {

// "<dir>/tessera.json": how a refusal names an app of the set.
std::string ManifestOf(const AppEntry& app) {
  return (app.dir / kManifestFileName).string();
}

// The app among apps[0..end) whose own manifest declares shard kind `name`.
const AppEntry* ShardKindOwner(const std::vector<AppEntry>& apps, size_t end,
                               const std::string& name) {
  for (size_t i = 0; i < end; ++i) {
    if (apps[i].manifest.FindKind(name) != nullptr) return &apps[i];
  }
  return nullptr;
}

}  // namespace

std::string AppMountPrefix(const fs::path& dir) {
  fs::path name = dir.lexically_normal();  // "apps/zone/" -> "zone"
  if (name.filename().empty()) name = name.parent_path();
  return "/" + name.filename().string();
}

Result<AppSet> MergeApps(std::vector<AppEntry> apps) {
  if (apps.empty()) return InvalidArgument("no app to serve");
  AppSet set;
  set.merged = apps.front().manifest;
  // Which app declared each data type, for the duplicate's message.
  std::vector<const AppEntry*> type_owner(set.merged.data.types.size(),
                                          &apps.front());
  // The same for each realm kind: realm kinds and shard kinds share one
  // namespace (the names clients connect to) across the apps served.
  std::vector<const AppEntry*> realm_owner(set.merged.realms.size(),
                                           &apps.front());
  for (size_t i = 1; i < apps.size(); ++i) {
    const AppEntry& app = apps[i];
    for (const ShardKindSpec& kind : app.manifest.kinds) {
      if (set.merged.FindKind(kind.config.name) != nullptr) {
        return InvalidArgument("shard kind \"" + kind.config.name + "\" of " +
                               app.dir.string() +
                               " is also a kind of another app served");
      }
    }
    for (const ShardKindSpec& kind : app.manifest.kinds) {
      for (size_t r = 0; r < set.merged.realms.size(); ++r) {
        if (set.merged.realms[r].name == kind.config.name) {
          return InvalidArgument(
              "shard kind \"" + kind.config.name + "\" of " + ManifestOf(app) +
              " is a realm kind of " + ManifestOf(*realm_owner[r]) +
              " (shard and realm kinds share the names clients connect to)");
        }
      }
    }
    set.merged.kinds.insert(set.merged.kinds.end(), app.manifest.kinds.begin(),
                            app.manifest.kinds.end());
    for (const realm::RealmKindConfig& realm : app.manifest.realms) {
      for (size_t r = 0; r < set.merged.realms.size(); ++r) {
        if (set.merged.realms[r].name == realm.name) {
          return InvalidArgument(
              "realm kind \"" + realm.name + "\" is declared by both " +
              ManifestOf(*realm_owner[r]) + " and " + ManifestOf(app) +
              " (apps served together share one set of realm kinds)");
        }
      }
      // Its own manifest has refused a clash with its own shard kinds.
      if (const AppEntry* owner = ShardKindOwner(apps, i, realm.name)) {
        return InvalidArgument(
            "realm kind \"" + realm.name + "\" of " + ManifestOf(app) +
            " is a shard kind of " + ManifestOf(*owner) +
            " (shard and realm kinds share the names clients connect to)");
      }
      set.merged.realms.push_back(realm);
      realm_owner.push_back(&app);
    }
    for (const ComputeModuleSpec& module : app.manifest.compute) {
      for (const ComputeModuleSpec& earlier : set.merged.compute) {
        if (earlier.name == module.name) {
          return InvalidArgument("compute module \"" + module.name + "\" of " +
                                 app.dir.string() +
                                 " is also a module of another app served");
        }
      }
      set.merged.compute.push_back(module);
    }
    for (const data::EntityType& type : app.manifest.data.types) {
      for (size_t t = 0; t < set.merged.data.types.size(); ++t) {
        if (set.merged.data.types[t].name == type.name) {
          return InvalidArgument(
              "data type \"" + type.name + "\" is declared by both " +
              (type_owner[t]->dir / kManifestFileName).string() + " and " +
              (app.dir / kManifestFileName).string() +
              " (apps served together share one data store)");
        }
      }
      set.merged.data.types.push_back(type);
      type_owner.push_back(&app);
    }
    set.web_mounts.push_back(
        AppWebMount{AppMountPrefix(app.dir), app.dir / "web"});
  }
  set.apps = std::move(apps);
  return set;
}

Result<AppSet> LoadAppSet(const fs::path& first,
                          const std::vector<fs::path>& more) {
  std::vector<AppEntry> apps;
  apps.reserve(more.size() + 1);
  for (size_t i = 0; i <= more.size(); ++i) {
    const fs::path& dir = i == 0 ? first : more[i - 1];
    Result<Manifest> manifest = LoadManifest(dir);
    if (!manifest.ok()) return manifest.status();
    apps.push_back(AppEntry{dir, std::move(manifest).value()});
  }
  return MergeApps(std::move(apps));
}

}  // namespace tessera::app
