// The `tessera` executable: parses the command line with CLI11 and runs the
// chosen subcommand's callback, whose exit code becomes the process's.
//
// Exit codes: 0 success (and --help / --version); 1 the command failed;
// 2 a usage error (unknown command or option, missing argument), after
// printing the error and the help of the command it concerns.
#include <CLI/CLI.hpp>
#include <iostream>
#include <string>
#include <vector>

#include "cli/commands.h"

#ifndef TESSERA_VERSION
#define TESSERA_VERSION "unknown"
#endif

namespace {

constexpr int kUsageError = 2;

// The deepest subcommand the parser entered, for context-specific help.
const CLI::App* DeepestSubcommand(const CLI::App& app) {
  const CLI::App* current = &app;
  for (;;) {
    std::vector<const CLI::App*> subs =
        current->get_subcommands([](const CLI::App*) { return true; });
    const CLI::App* parsed = nullptr;
    for (const CLI::App* sub : subs) {
      if (sub->parsed()) parsed = sub;
    }
    if (parsed == nullptr) return current;
    current = parsed;
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app(
      "tessera: a server for authoritative realtime multiplayer games.",
      "tessera");
  app.set_version_flag("--version", "tessera " TESSERA_VERSION,
                       "Print the version and exit");
  app.require_subcommand(1);

  int exit_code = 0;
  tessera::cli::RegisterShardsCommands(app, &exit_code);
  tessera::cli::RegisterRunCommand(app, &exit_code);
  tessera::cli::RegisterDevCommand(app, &exit_code);
  tessera::cli::RegisterServeCommand(app, &exit_code);
  tessera::cli::RegisterTicketCommand(app, &exit_code);
  tessera::cli::RegisterComputeCommands(app, &exit_code);
  tessera::cli::RegisterBenchCommands(app, &exit_code);
  tessera::cli::RegisterConnectCommand(app, &exit_code);
  tessera::cli::RegisterReplayCommand(app, &exit_code);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::cout << DeepestSubcommand(app)->help();
    return 0;
  } catch (const CLI::CallForAllHelp&) {
    std::cout << app.help("", CLI::AppFormatMode::All);
    return 0;
  } catch (const CLI::CallForVersion&) {
    std::cout << "tessera " TESSERA_VERSION "\n";
    return 0;
  } catch (const CLI::ParseError& e) {
    const CLI::App* context = DeepestSubcommand(app);
    // `tessera frob` and `tessera --frob`: say so, rather than CLI11's "A
    // subcommand is required".
    std::vector<std::string> rest = context->remaining();
    const bool wants_subcommand =
        !context->get_subcommands([](const CLI::App*) { return true; }).empty();
    if (!rest.empty() && rest.front().starts_with("-")) {
      std::cerr << "tessera: unknown option \"" << rest.front() << "\"";
    } else if (!rest.empty() && wants_subcommand) {
      std::cerr << "tessera: unknown command \"" << rest.front() << "\"";
    } else {
      std::cerr << "tessera: " << e.what();
    }
    std::cerr << "\n\n" << context->help();
    return kUsageError;
  }
  return exit_code;
}
