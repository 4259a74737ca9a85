// `tessera ticket --shard ID --subscriber ID [--ttl SECS] [--claims JSON]
//  [--app DIR]`: prints a ticket (docs/protocol.md "Tickets") on stdout.
// The secret is TESSERA_SHARD_TICKET_SECRET, else the dev secret of the app
// directory: --app, else the current directory if it has
// .tessera/dev-secrets.json, else examples/arena (the `tessera dev`
// default). Exit code 0, or 1 with a message on stderr.
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/commands.h"
#include "common/clock.h"
#include "net/ticket.h"
#include "server/dev_secrets.h"
#include "server/env_config.h"
#include "server/request_target.h"

namespace tessera::cli {
namespace {

namespace fs = std::filesystem;

struct TicketArgs {
  std::string shard;
  std::string subscriber;
  int64_t ttl_secs = net::kDefaultTicketLifetimeSecs;
  std::string claims;
  std::string app_dir;
};

Result<std::string> FindSecret(const TicketArgs& args) {
  if (auto secret = server::EnvString(server::kEnvTicketSecret)) return *secret;
  fs::path app = args.app_dir;
  if (app.empty()) {
    std::error_code ec;
    app = fs::exists(server::DevSecretsPath("."), ec) ? fs::path(".")
                                                      : "examples/arena";
  }
  Result<server::DevSecrets> secrets = server::ReadDevSecrets(app);
  if (!secrets.ok()) {
    return Status(secrets.status().code(),
                  "no ticket secret: set TESSERA_SHARD_TICKET_SECRET, or run "
                  "`tessera dev " +
                      app.string() + "` once to create its dev secret (" +
                      secrets.status().message() + ")");
  }
  return secrets->ticket_secret;
}

int MintTicket(const TicketArgs& args) {
  if (!server::IsValidShardId(args.shard)) {
    std::cerr << "error: --shard must be 1-128 characters of A-Z a-z 0-9 . _ "
                 ": -\n";
    return 1;
  }
  if (!server::IsValidSubscriberId(args.subscriber)) {
    std::cerr << "error: --subscriber must be 1-128 characters without "
                 "control characters\n";
    return 1;
  }
  if (args.ttl_secs < 1) {
    std::cerr << "error: --ttl must be at least 1 second\n";
    return 1;
  }
  net::Ticket ticket;
  ticket.resource_id = args.shard;
  ticket.subscriber_id = args.subscriber;
  if (!args.claims.empty()) {
    nlohmann::json claims = nlohmann::json::parse(args.claims, nullptr, false);
    if (claims.is_discarded() || !claims.is_object()) {
      std::cerr << "error: --claims must be a JSON object\n";
      return 1;
    }
    ticket.claims_json = claims.dump();
  }
  Result<std::string> secret = FindSecret(args);
  if (!secret.ok()) {
    std::cerr << "error: " << secret.status().message() << "\n";
    return 1;
  }
  ticket.expires_unix = RealWallClock::Get()->UnixNowSecs() + args.ttl_secs;
  std::cout << net::MintTicket(*secret, ticket) << "\n";
  return 0;
}

}  // namespace

void RegisterTicketCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<TicketArgs>();
  CLI::App* cmd = app.add_subcommand(
      "ticket", "Mint a ticket to join a shard as a subscriber");
  cmd->add_option("--shard", args->shard, "The shard's id")->required();
  cmd->add_option("--subscriber", args->subscriber, "The subscriber's id")
      ->required();
  cmd->add_option("--ttl", args->ttl_secs, "Lifetime in seconds")
      ->capture_default_str();
  cmd->add_option("--claims", args->claims,
                  "Application claims, a JSON object");
  cmd->add_option("--app", args->app_dir,
                  "App directory whose dev secret to use when "
                  "TESSERA_SHARD_TICKET_SECRET is unset");
  cmd->callback([args, exit_code] { *exit_code = MintTicket(*args); });
}

}  // namespace tessera::cli
