// Registration of the `tessera` subcommands. Each Register* adds its
// subcommand(s) to the CLI11 app; the callbacks set *exit_code.
#ifndef TESSERA_CLI_COMMANDS_H_
#define TESSERA_CLI_COMMANDS_H_

#include <CLI/CLI.hpp>

namespace tessera::cli {

// `tessera shards build [APP-DIR]`, `tessera shards check FILE.wasm`
void RegisterShardsCommands(CLI::App& app, int* exit_code);
// `tessera run APP-DIR --kind K --params JSON --ticks N [--inputs FILE]`
void RegisterRunCommand(CLI::App& app, int* exit_code);
// `tessera dev [APP-DIR] [--host H] [--port P]`
void RegisterDevCommand(CLI::App& app, int* exit_code);
// `tessera serve APP-DIR [--host H] [--port P] [--database-url URL] ...`
void RegisterServeCommand(CLI::App& app, int* exit_code);
// `tessera ticket --shard ID --subscriber ID [--ttl SECS] [--claims JSON]`
void RegisterTicketCommand(CLI::App& app, int* exit_code);
// `tessera compute deploy|versions|enable|disable|trigger|invoke|runs|logs|
// stats|templates|deploy-template|types ...` (a running server's compute API)
void RegisterComputeCommands(CLI::App& app, int* exit_code);
// `tessera bench shard|merge|plot ...` (load tests, src/loadtest)
void RegisterBenchCommands(CLI::App& app, int* exit_code);
// `tessera connect --shard ID [--url URL] [--send JSON]... ...` (a client
// that prints what the server sends)
void RegisterConnectCommand(CLI::App& app, int* exit_code);
// `tessera replay APP-DIR --shard ID --from TICK --to TICK [--module WASM]`
// (a recorded shard's ticks again, from its input log)
void RegisterReplayCommand(CLI::App& app, int* exit_code);

}  // namespace tessera::cli

#endif  // TESSERA_CLI_COMMANDS_H_
