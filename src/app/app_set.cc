#include "app/app_set.h"

#include <utility>

namespace tessera::app {
namespace fs = std::filesystem;

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
  for (size_t i = 1; i < apps.size(); ++i) {
    const AppEntry& app = apps[i];
    for (const ShardKindSpec& kind : app.manifest.kinds) {
      if (set.merged.FindKind(kind.config.name) != nullptr) {
        return InvalidArgument("shard kind \"" + kind.config.name + "\" of " +
                               app.dir.string() +
                               " is also a kind of another app served");
      }
    }
    set.merged.kinds.insert(set.merged.kinds.end(), app.manifest.kinds.begin(),
                            app.manifest.kinds.end());
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
