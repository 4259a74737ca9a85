// Executes the commands of one converted spec script against tessera's
// runtime, and counts what passed, failed and was skipped.
//
// Threading: RunScript runs guest code on the calling thread.
#ifndef TESSERA_TESTS_SPEC_SCRIPT_RUNNER_H_
#define TESSERA_TESTS_SPEC_SCRIPT_RUNNER_H_

#include <future>
#include <map>
#include <string>
#include <vector>

#include "module_pool.h"
#include "wast_script.h"

namespace tessera::spec {

// Module file name (as in the script's JSON) -> its load, usually queued
// on a ModulePool ahead of time.
using ModuleMap = std::map<std::string, std::shared_future<LoadResult>>;

struct ScriptReport {
  std::string name;
  int passed = 0, failed = 0, skipped = 0, exceptions = 0, unsupported = 0;
  std::map<std::string, int> skip_reasons;         // reason -> commands
  std::map<std::string, int> unsupported_reasons;  // proposal -> commands
  std::vector<std::string> failures;        // "line N (type): why"
  std::vector<std::string> excepted;        // "line N (type): reason"
  double seconds = 0;
};

// Runs every command of `script` in order, with a fresh `spectest` module.
// Module files missing from `modules` are loaded on the calling thread
// with `options`.
ScriptReport RunScript(const Script& script, const ModuleMap& modules,
                       const wasm::LoadOptions& options);

// The module files of `script` that go through the loader (binary ones).
std::vector<std::string> ModuleFiles(const Script& script);

}  // namespace tessera::spec

#endif  // TESSERA_TESTS_SPEC_SCRIPT_RUNNER_H_
