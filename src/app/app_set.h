// Several apps served on one port (`tessera dev app other/zone`): the first
// app is the main one (its state, secrets and web/ folder at "/"); the
// kinds, compute modules, data types and realm kinds of the others join its
// own, and each other app's web/ folder is served at "/<directory name>/".
//
// Thread-safe (no shared state).
#ifndef TESSERA_APP_APP_SET_H_
#define TESSERA_APP_APP_SET_H_

#include <filesystem>
#include <string>
#include <vector>

#include "app/manifest.h"
#include "common/status.h"

namespace tessera::app {

// One app of the set: its directory as the caller named it and its own
// manifest.
struct AppEntry {
  std::filesystem::path dir;
  Manifest manifest;
};

// A further app's web/ folder and the URL prefix it is served under.
struct AppWebMount {
  std::string prefix;         // "/zone" (no trailing slash)
  std::filesystem::path dir;  // "<app dir>/web"
};

struct AppSet {
  // The first app's manifest with the kinds, compute modules, data types
  // and realm kinds of every app, in app order then manifest order.
  Manifest merged;
  // Every app with its own manifest (the first first): each builds and
  // caches its kinds in its own directory.
  std::vector<AppEntry> apps;
  // One per further app, in order.
  std::vector<AppWebMount> web_mounts;
};

// The URL prefix of a further app's web folder: "/" and the last component
// of the directory ("apps/zone/" and "./apps/zone" -> "/zone").
std::string AppMountPrefix(const std::filesystem::path& dir);

// Merges `apps` (at least one; the first is the main app). Errors:
// kInvalidArgument 'shard kind "<name>" of <dir> is also a kind of another
// app served' when a further app repeats a kind name of an earlier one (the
// same for a compute module's name); 'data type "<name>" is declared by
// both <dir>/tessera.json and <dir>/tessera.json ...' (the same for a realm
// kind's name); a realm kind of one app named like a shard kind of another,
// naming both manifests;
// kInvalidArgument when `apps` is empty.
Result<AppSet> MergeApps(std::vector<AppEntry> apps);

// Loads the manifest of `first` and of each of `more`, then MergeApps.
// Errors: LoadManifest's (the first failing app's), then MergeApps'.
Result<AppSet> LoadAppSet(const std::filesystem::path& first,
                          const std::vector<std::filesystem::path>& more);

}  // namespace tessera::app

#endif  // TESSERA_APP_APP_SET_H_
