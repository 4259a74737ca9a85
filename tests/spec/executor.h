// The state a spec script builds as it runs (instances, names, registered
// import modules, the spectest module) and the meaning of each command.
#ifndef TESSERA_TESTS_SPEC_EXECUTOR_H_
#define TESSERA_TESTS_SPEC_EXECUTOR_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "script_runner.h"
#include "spectest_host.h"
#include "wasm/instance.h"

namespace tessera::spec {

struct CommandResult {
  // kUnsupported: the command needs a proposal tessera refuses by design
  // (memory64, SIMD, threads, ...; the loader says so), so it is neither a
  // pass nor a conformance failure.
  enum Outcome { kPassed, kFailed, kSkipped, kUnsupported } outcome = kPassed;
  std::string detail;  // why it failed, the skip's reason, or the proposal
};

// The proposal a load error refuses by design ("64-bit memory (memory64)"),
// or empty when `status` is any other error.
std::string RefusedProposal(const Status& status);

class Executor {
 public:
  Executor(const Script& script, const ModuleMap& modules,
           const wasm::LoadOptions& options);
  ~Executor();

  CommandResult Run(const Command& c);

 private:
  struct Invocation {
    Status status;  // kTrap with the trap's message when it trapped
    wasm::TrapKind trap = wasm::TrapKind::kNone;
    std::vector<uint64_t> results;
    std::vector<wasm::ValType> result_types;
  };

  LoadResult Module(const std::string& filename);
  // Binds the module's imports (spectest or registered instances) and
  // instantiates it. Link errors say "unknown import" or "incompatible
  // import type"; an instance whose instantiation trapped is returned dead.
  Result<wasm::Instance*> Instantiate(
      const std::shared_ptr<const wasm::CompiledModule>& module);
  Result<wasm::Instance*> Target(const std::string& name);
  Result<Invocation> Invoke(const Action& a);

  // The refused proposal of the module `action` or `register` targets, or
  // empty.
  std::string UnsupportedTarget(const std::string& module) const;
  CommandResult DefineModule(const Command& c);
  CommandResult Register(const Command& c);
  CommandResult AssertReturn(const Command& c);
  CommandResult AssertTrap(const Command& c, bool exhaustion);
  CommandResult AssertRejected(const Command& c);
  CommandResult AssertUnlinkable(const Command& c);
  CommandResult AssertUninstantiable(const Command& c);

  const Script& script_;
  const ModuleMap& modules_;
  const wasm::LoadOptions& options_;
  Spectest spectest_;
  // Every instance made, including ones whose instantiation trapped: their
  // functions may sit in other instances' tables.
  std::vector<std::unique_ptr<wasm::Instance>> instances_;
  wasm::Instance* current_ = nullptr;
  std::map<std::string, wasm::Instance*> named_;
  std::map<std::string, wasm::Instance*> registered_;
  // Modules not run because they need a refused proposal, by name ("" for
  // the latest module): what the commands on them are reported as.
  std::map<std::string, std::string> unsupported_;
};

}  // namespace tessera::spec

#endif  // TESSERA_TESTS_SPEC_EXECUTOR_H_
