// `tessera dev [APP-DIR...] [--host H] [--port P] [--mount PREFIX=DIR]...
// [--quiet]`:
// the app in development. With several app directories, the first one's
// state and web/ folder are used and the others' kinds and web/ folders
// (at /<dir name>/) join it; --mount serves more folders (the TypeScript
// SDK bundle for the demo pages: --mount /sdk=clients/ts/dist).
// Builds the app's source kinds, opens SQLite under APP-DIR/.tessera/,
// and serves everything on one port (default 127.0.0.1:4321; TESSERA_HOST
// and TESSERA_PORT too): the WebSocket endpoint /shard/<id>, the admin API,
// the dev join (POST /api/dev/join, no token), /metrics, /healthz and the
// app's web/ folder. The ticket secret and admin token are generated once
// and kept in APP-DIR/.tessera/dev-secrets.json, so restarts keep the token
// and `tessera ticket --app APP-DIR` mints tickets this server accepts.
// It prints a line per shard started, per player joining or leaving and
// per shard stopped (why: idle, finished, failed); --quiet keeps only the
// stops.
//
// Runs until SIGINT/SIGTERM; exit code 0 after a clean shutdown, 1 if it
// could not start, 2 for a bad setting.
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "app/manifest.h"
#include "cli/commands.h"
#include "server/app_server.h"
#include "server/dev_secrets.h"
#include "server/env_config.h"
#include "server/run_app_server.h"

namespace tessera::cli {
namespace {

struct DevArgs {
  std::vector<std::string> app_dirs = {"examples/arena"};
  std::vector<std::string> mounts;
  std::string host;
  int64_t port = 0;
  bool host_set = false;
  bool port_set = false;
  bool quiet = false;
};

// The address a browser on this machine uses for a wildcard bind.
std::string LocalHost(const std::string& host) {
  if (host == "0.0.0.0" || host.empty()) return "127.0.0.1";
  if (host == "::") return "[::1]";
  if (host.find(':') != std::string::npos) return "[" + host + "]";
  return host;
}

// The banner: where every app's pages, the mounted folders, the WebSocket
// endpoints and the admin API are, and the first things to try.
void PrintReady(const server::AppServer& app) {
  const std::string host = LocalHost(app.options().host);
  const std::string base = "http://" + host + ":" + std::to_string(app.port());
  const std::string ws = "ws://" + host + ":" + std::to_string(app.port());
  const std::string kind = app.manifest().kinds.empty()
                               ? "KIND"
                               : app.manifest().kinds.front().config.name;
  const std::vector<realm::RealmKindConfig>& realms = app.manifest().realms;
  std::cout << "tessera dev: " << app.manifest().name << " on " << base << "\n"
            << "  pages:       " << base << "/  ("
            << app.options().app_dir.string() << "/web)\n";
  for (const server::WebMount& mount : app.app_web_mounts()) {
    std::cout << "               " << base << mount.prefix << "/  ("
              << mount.dir.string() << ")\n";
  }
  for (const server::WebMount& mount : app.options().mounts) {
    std::cout << "  mounted:     " << base << mount.prefix << "/  ("
              << mount.dir.string() << ")\n";
  }
  std::cout << "  shards:      " << ws << "/shard/<id>  (docs/protocol.md)\n";
  if (!app.manifest().kinds.empty()) {
    std::cout << "  hot reload:  edit a kind's source and its running shards "
                 "move to the new code (docs/admin-api.md)\n";
  }
  if (!realms.empty()) {
    std::cout << "  realms:      " << ws
              << "/realm/<kind>/<key>  (docs/protocol.md \"Realms\"), kinds:";
    for (const realm::RealmKindConfig& realm : realms) {
      std::cout << " " << realm.name;
    }
    std::cout << "\n";
  }
  const std::string& token = app.options().admin_token;
  std::cout << "  admin token: " << token << "  (kept in "
            << server::DevSecretsPath(app.options().app_dir).string() << ")\n"
            << "  admin API:   curl -s -H 'Authorization: Bearer " << token
            << "' " << base << "/api/shards  (docs/admin-api.md)\n"
            << "  dashboard:   " << base << "/_dashboard#token=" << token
            << "\n"
            << "  metrics:     " << base << "/metrics  (Prometheus text)\n";
  if (!app.manifest().kinds.empty()) {
    std::cout << "  try:         curl -s -X POST " << base
              << "/api/dev/join -d '{\"shard\":\"" << kind << "-1\",\"kind\":\""
              << kind << "\"}'\n"
              << "  or connect:  tessera connect --url " << base << " --shard "
              << kind << "-1 --kind " << kind << " --frames 5\n";
  }
  if (!realms.empty()) {
    std::cout << "  try realm:   curl -s -X POST " << base << "/api/realms/"
              << realms.front().name << "/room-1/join\n";
  }
  std::cout << std::flush;
}

int Dev(const DevArgs& args) {
  server::AppServerOptions options;
  options.app_dir = args.app_dirs.front();
  for (size_t i = 1; i < args.app_dirs.size(); ++i) {
    options.more_app_dirs.emplace_back(args.app_dirs[i]);
  }
  for (const std::string& spec : args.mounts) {
    Result<server::WebMount> mount = server::ParseWebMount(spec);
    if (!mount.ok()) {
      std::cerr << "error: " << mount.status().message() << "\n";
      return 2;
    }
    options.mounts.push_back(std::move(mount).value());
  }
  options.dev = true;
  options.lifecycle_log = !args.quiet;
  options.watch_sources = true;
  options.host = server::Setting(
      args.host_set ? std::optional<std::string>(args.host) : std::nullopt,
      server::kEnvHost, "127.0.0.1");
  Result<int64_t> port = server::IntSetting(
      args.port_set ? std::optional<int64_t>(args.port) : std::nullopt,
      "--port", server::kEnvPort, 4321, 0, 65535);
  if (!port.ok()) {
    std::cerr << "error: " << port.status().message() << "\n";
    return 2;
  }
  options.port = static_cast<uint16_t>(*port);
  // A bad app directory fails before anything is written into it.
  Result<app::Manifest> manifest = app::LoadManifest(options.app_dir);
  if (!manifest.ok()) {
    std::cerr << "error: " << manifest.status().message() << "\n";
    return 1;
  }
  Result<server::DevSecrets> secrets =
      server::LoadOrCreateDevSecrets(options.app_dir);
  if (!secrets.ok()) {
    std::cerr << "error: " << secrets.status().message() << "\n";
    return 1;
  }
  options.ticket_secret = secrets->ticket_secret;
  options.admin_token = secrets->admin_token;
  options.api_tokens = server::EnvString(server::kEnvApiTokens).value_or("");
  return server::RunAppServer(std::move(options), PrintReady);
}

}  // namespace

void RegisterDevCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<DevArgs>();
  CLI::App* dev = app.add_subcommand(
      "dev",
      "Build and serve an app for development (WebSocket, admin API, dev "
      "join, web/ folder) until Ctrl-C");
  dev->add_option("APP-DIR", args->app_dirs,
                  "App directories holding tessera.json (the first keeps "
                  "the state; default examples/arena)");
  dev->add_option("--mount", args->mounts,
                  "Serve a folder under a URL prefix, PREFIX=DIR "
                  "(repeatable), e.g. /sdk=clients/ts/dist");
  dev->add_option("--host", args->host,
                  "Address to listen on (env TESSERA_HOST; default "
                  "127.0.0.1)");
  dev->add_option("--port", args->port,
                  "Port to listen on, 0 for any (env TESSERA_PORT; default "
                  "4321)");
  dev->add_flag("--quiet", args->quiet,
                "No line per shard started and per player joining or "
                "leaving (stops are still logged)");
  dev->callback([args, exit_code, dev] {
    args->host_set = dev->count("--host") > 0;
    args->port_set = dev->count("--port") > 0;
    *exit_code = Dev(*args);
  });
}

}  // namespace tessera::cli
