#include "script_runner.h"

#include <chrono>

#include "exceptions.h"
#include "executor.h"

namespace tessera::spec {

std::vector<std::string> ModuleFiles(const Script& script) {
  std::vector<std::string> files;
  for (const Command& c : script.commands) {
    if (c.filename.empty() || c.module_type == "text") continue;
    files.push_back(c.filename);
  }
  return files;
}

ScriptReport RunScript(const Script& script, const ModuleMap& modules,
                       const wasm::LoadOptions& options) {
  auto t0 = std::chrono::steady_clock::now();
  ScriptReport report;
  report.name = script.name;
  Executor executor(script, modules, options);
  for (const Command& c : script.commands) {
    CommandResult r = executor.Run(c);
    std::string where =
        "line " + std::to_string(c.line) + " (" + c.type + "): ";
    const char* exception = FindException(script.name, c.line);
    switch (r.outcome) {
      case CommandResult::kPassed:
        if (exception) {
          ++report.failed;
          report.failures.push_back(
              where +
              "passes, but is listed as a conformance exception "
              "(remove it from tests/spec/exceptions.cc and "
              "docs/guest-abi.md)");
        } else {
          ++report.passed;
        }
        break;
      case CommandResult::kFailed:
        if (exception) {
          ++report.exceptions;
          report.excepted.push_back(where + exception);
        } else {
          ++report.failed;
          report.failures.push_back(where + r.detail);
        }
        break;
      case CommandResult::kSkipped:
        ++report.skipped;
        ++report.skip_reasons[r.detail];
        break;
      case CommandResult::kUnsupported:
        // A documented exception keeps its own line in the report.
        if (exception) {
          ++report.exceptions;
          report.excepted.push_back(where + exception);
        } else {
          ++report.unsupported;
          ++report.unsupported_reasons[r.detail];
        }
        break;
    }
  }
  report.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count();
  return report;
}

}  // namespace tessera::spec
