// `tessera serve APP-DIR`: the production server. Configured by flags and
// the environment (flags win):
//   --ticket-secret  TESSERA_SHARD_TICKET_SECRET  required
//   --admin-token    TESSERA_ADMIN_TOKEN          required
//   --database-url   TESSERA_DATABASE_URL  default
//   sqlite:APP-DIR/.tessera/tessera.db; or postgres://user:pass@host/db
//   (every store in that PostgreSQL database)
//   --save-secs      TESSERA_SHARD_SAVE_SECS  default 5 (0: only at shutdown)
//   --capacity       TESSERA_SHARD_CAPACITY   default 100 shards
//   --host / --port  TESSERA_HOST / TESSERA_PORT  default 0.0.0.0:4321
//                    TESSERA_API_TOKENS  scoped compute tokens
//                    TESSERA_COMPUTE_CEILINGS  compute policy ceilings
//                    (docs/compute.md "Tokens", "Policy")
// Shard modules must be built already (`tessera shards build APP-DIR`);
// compute modules are compiled from the sources deployed to them; there is
// no dev join.
//
// Runs until SIGINT/SIGTERM (saving every shard, then closing connections
// with 1001); exit code 0 after a clean shutdown, 1 if it could not start,
// 2 for a missing or bad setting.
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include "cli/commands.h"
#include "server/app_server.h"
#include "server/env_config.h"
#include "server/run_app_server.h"

namespace tessera::cli {
namespace {

struct ServeArgs {
  std::string app_dir;
  std::string host, ticket_secret, admin_token, database_url;
  int64_t port = 0, save_secs = 0, capacity = 0;
  CLI::App* command = nullptr;  // for count(): which flags were given
};

std::optional<std::string> Flag(const ServeArgs& a, const char* name,
                                const std::string& value) {
  if (a.command->count(name) == 0) return std::nullopt;
  return value;
}

std::optional<int64_t> IntFlag(const ServeArgs& a, const char* name,
                               int64_t value) {
  if (a.command->count(name) == 0) return std::nullopt;
  return value;
}

int Serve(const ServeArgs& a) {
  server::AppServerOptions options;
  options.app_dir = a.app_dir;
  options.ticket_secret =
      server::Setting(Flag(a, "--ticket-secret", a.ticket_secret),
                      server::kEnvTicketSecret, "");
  options.admin_token = server::Setting(Flag(a, "--admin-token", a.admin_token),
                                        server::kEnvAdminToken, "");
  if (options.ticket_secret.empty() || options.admin_token.empty()) {
    std::cerr
        << "error: tessera serve needs a ticket secret and an admin token.\n"
        << "  Set them in the environment, e.g.:\n"
        << "    export TESSERA_SHARD_TICKET_SECRET=$(openssl rand -hex 32)\n"
        << "    export TESSERA_ADMIN_TOKEN=$(openssl rand -hex 32)\n"
        << "  (or pass --ticket-secret / --admin-token). Keep the ticket "
           "secret stable across restarts: tickets signed with another "
           "secret are refused.\n";
    return 2;
  }
  options.host =
      server::Setting(Flag(a, "--host", a.host), server::kEnvHost, "0.0.0.0");
  options.api_tokens = server::EnvString(server::kEnvApiTokens).value_or("");
  options.database_url = server::Setting(
      Flag(a, "--database-url", a.database_url), server::kEnvDatabaseUrl, "");
  Result<int64_t> port = server::IntSetting(
      IntFlag(a, "--port", a.port), "--port", server::kEnvPort, 4321, 0, 65535);
  Result<int64_t> save =
      server::IntSetting(IntFlag(a, "--save-secs", a.save_secs), "--save-secs",
                         server::kEnvSaveSecs, 5, 0, 86400);
  Result<int64_t> capacity =
      server::IntSetting(IntFlag(a, "--capacity", a.capacity), "--capacity",
                         server::kEnvCapacity, 100, 1, 1'000'000);
  for (const Result<int64_t>* r : {&port, &save, &capacity}) {
    if (!r->ok()) {
      std::cerr << "error: " << r->status().message() << "\n";
      return 2;
    }
  }
  options.port = static_cast<uint16_t>(*port);
  // A cluster's machine (postgres:// only, docs/cluster.md).
  options.machine_id = server::EnvString("TESSERA_MACHINE_ID").value_or("");
  options.advertise_address =
      server::EnvString("TESSERA_ADVERTISE_ADDRESS").value_or("");
  options.save_secs = *save;
  options.capacity = static_cast<size_t>(*capacity);
  return server::RunAppServer(
      std::move(options), [](const server::AppServer& app) {
        std::cout << "tessera serve: " << app.manifest().name
                  << " listening on " << app.options().host << ":" << app.port()
                  << "\n"
                  << std::flush;
      });
}

}  // namespace

void RegisterServeCommand(CLI::App& app, int* exit_code) {
  auto a = std::make_shared<ServeArgs>();
  CLI::App* serve = app.add_subcommand(
      "serve",
      "Serve an app in production (needs TESSERA_SHARD_TICKET_SECRET and "
      "TESSERA_ADMIN_TOKEN)");
  a->command = serve;
  serve
      ->add_option("APP-DIR", a->app_dir,
                   "App directory holding tessera.json (modules built)")
      ->required();
  serve->add_option("--host", a->host,
                    "Address to listen on (env TESSERA_HOST; default "
                    "0.0.0.0)");
  serve->add_option("--port", a->port, "Port (env TESSERA_PORT; default 4321)");
  serve->add_option("--ticket-secret", a->ticket_secret,
                    "HMAC secret for tickets (env "
                    "TESSERA_SHARD_TICKET_SECRET)");
  serve->add_option("--admin-token", a->admin_token,
                    "Bearer token of the admin API (env TESSERA_ADMIN_TOKEN)");
  serve->add_option("--database-url", a->database_url,
                    "Store URL: sqlite:PATH or postgres://user:pass@host/db "
                    "(env TESSERA_DATABASE_URL; default "
                    "sqlite:APP-DIR/.tessera/tessera.db)");
  serve->add_option("--save-secs", a->save_secs,
                    "Seconds between saves of each shard (env "
                    "TESSERA_SHARD_SAVE_SECS; default 5)");
  serve->add_option("--capacity", a->capacity,
                    "Most shards this server runs (env "
                    "TESSERA_SHARD_CAPACITY; default 100)");
  serve->callback([a, exit_code] { *exit_code = Serve(*a); });
}

}  // namespace tessera::cli
