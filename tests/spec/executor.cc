#include "executor.h"

#include <cstring>
#include <filesystem>

#include "spec_values.h"

namespace tessera::spec {
namespace {

namespace fs = std::filesystem;
using wasm::Instance;

// Fuel for one command: far more than any spec command needs, so a
// runaway loop ends as a failure instead of a hung run.
constexpr int64_t kCommandFuel = int64_t{1} << 34;

CommandResult Pass() { return {CommandResult::kPassed, ""}; }
CommandResult Fail(std::string why) {
  return {CommandResult::kFailed, std::move(why)};
}
CommandResult Skip(std::string why) {
  return {CommandResult::kSkipped, std::move(why)};
}
CommandResult Unsupported(std::string proposal) {
  return {CommandResult::kUnsupported, std::move(proposal)};
}

const char* TypeName(wasm::ValType t) { return wasm::ValTypeName(t); }

}  // namespace

std::string RefusedProposal(const Status& status) {
  if (status.code() != StatusCode::kRefused) return "";
  // The loader's refusals of proposals tessera does not run (wasm/parse.cc),
  // by a word each is sure to contain.
  struct Proposal {
    const char* keyword;
    const char* name;
  };
  static constexpr Proposal kProposals[] = {
      {"memory64", "memory64 (64-bit memory)"},
      {"SIMD", "SIMD (v128)"},
      {"threads", "threads (shared memory, atomics)"},
      {"tail call", "tail calls"},
      {"exception handling", "exception handling"},
      {"multiple memories", "multi-memory"},
      {"more than one memory", "multi-memory"},
  };
  for (const Proposal& p : kProposals) {
    if (status.message().find(p.keyword) != std::string::npos) return p.name;
  }
  return "";
}

Executor::Executor(const Script& script, const ModuleMap& modules,
                   const wasm::LoadOptions& options)
    : script_(script), modules_(modules), options_(options) {}

Executor::~Executor() {
  // Instances may hold each other's functions and memories: none is used
  // again, so any order is fine, but all go before the spectest module.
  instances_.clear();
}

LoadResult Executor::Module(const std::string& filename) {
  auto it = modules_.find(filename);
  if (it != modules_.end()) return it->second.get();
  return LoadFile((fs::path(script_.dir) / filename).string(), options_);
}

Result<Instance*> Executor::Instantiate(
    const std::shared_ptr<const wasm::CompiledModule>& module) {
  std::vector<wasm::Extern> imports;
  for (const wasm::ImportEntry& imp : module->info.import_types) {
    Result<wasm::Extern> x = NotFound("");
    if (imp.module == "spectest") {
      x = spectest_.Get(imp.field);
    } else {
      auto it = registered_.find(imp.module);
      if (it != registered_.end()) x = it->second->Export(imp.field);
    }
    if (!x.ok()) {
      return NotFound(
          "unknown import `" + imp.module + "." + imp.field + "`" +
          (x.status().message().empty() ? "" : ": " + x.status().message()));
    }
    imports.push_back(*x);
  }
  auto inst = Instance::CreateLinked(module, std::move(imports));
  if (!inst.ok()) return inst.status();
  instances_.push_back(std::move(*inst));
  return instances_.back().get();
}

Result<Instance*> Executor::Target(const std::string& name) {
  Instance* inst = current_;
  if (!name.empty()) {
    auto it = named_.find(name);
    inst = it == named_.end() ? nullptr : it->second;
  }
  if (!inst) {
    return NotFound("no module " + (name.empty() ? "defined" : name) +
                    " (an earlier module command failed?)");
  }
  return inst;
}

Result<Executor::Invocation> Executor::Invoke(const Action& a) {
  auto target = Target(a.module);
  if (!target.ok()) return target.status();
  Instance* inst = *target;
  Invocation out;
  if (a.type == "get") {
    auto x = inst->Export(a.field);
    if (!x.ok()) return x.status();
    if (x->type.kind != wasm::ExternKind::kGlobal) {
      return InvalidArgument("`" + a.field + "` is not a global");
    }
    uint64_t v = 0;
    bool wide = x->type.value == wasm::ValType::kI64 ||
                x->type.value == wasm::ValType::kF64;
    std::memcpy(&v, x->ptr, wide ? 8 : 4);
    out.results.push_back(v);
    out.result_types.push_back(x->type.value);
    return out;
  }
  if (a.type != "invoke") return InvalidArgument("unknown action " + a.type);
  int f = inst->info().FindFunc(a.field);
  if (f < 0) return NotFound("no exported function `" + a.field + "`");
  std::vector<uint64_t> args;
  for (const Value& v : a.args) {
    auto raw = ToRaw(v);
    if (!raw.ok()) return raw.status();
    args.push_back(*raw);
  }
  out.result_types = inst->info().funcs[f].sig.results;
  out.results.assign(out.result_types.size(), 0);
  inst->SetFuel(kCommandFuel);
  out.status = inst->Call(f, args, out.results);
  if (out.status.code() == StatusCode::kTrap) {
    out.trap = inst->last_trap();
    inst->ClearTrap();  // spec instances live on after a trap
  } else if (!out.status.ok()) {
    return out.status;
  }
  return out;
}

std::string Executor::UnsupportedTarget(const std::string& module) const {
  auto it = unsupported_.find(module);
  return it == unsupported_.end() ? "" : it->second;
}

CommandResult Executor::Run(const Command& c) {
  const std::string& t = c.type;
  if (t == "module") return DefineModule(c);
  if (t == "register" || t == "action" || t == "assert_return" ||
      t == "assert_trap" || t == "assert_exhaustion") {
    const std::string proposal =
        UnsupportedTarget(t == "register" ? c.name : c.action.module);
    if (!proposal.empty()) return Unsupported(proposal);
  }
  if (t == "register") return Register(c);
  if (t == "action") {
    auto r = Invoke(c.action);
    if (!r.ok()) return Fail(r.status().message());
    if (!r->status.ok()) return Fail("trapped: " + r->status.message());
    return Pass();
  }
  if (t == "assert_return") return AssertReturn(c);
  if (t == "assert_trap") return AssertTrap(c, false);
  if (t == "assert_exhaustion") return AssertTrap(c, true);
  if (t == "assert_invalid" || t == "assert_malformed") {
    return AssertRejected(c);
  }
  if (t == "assert_unlinkable") return AssertUnlinkable(c);
  if (t == "assert_uninstantiable") return AssertUninstantiable(c);
  return Fail("unsupported command type " + t);
}

CommandResult Executor::DefineModule(const Command& c) {
  current_ = nullptr;
  unsupported_.erase("");
  if (!c.name.empty()) {
    named_[c.name] = nullptr;
    unsupported_.erase(c.name);
  }
  auto m = Module(c.filename);
  if (!m.ok()) {
    const std::string proposal = RefusedProposal(m.status());
    if (proposal.empty()) return Fail("not loaded: " + m.status().ToString());
    unsupported_[""] = proposal;
    if (!c.name.empty()) unsupported_[c.name] = proposal;
    return Unsupported(proposal);
  }
  auto inst = Instantiate(*m);
  if (!inst.ok()) return Fail("not linked: " + inst.status().message());
  if ((*inst)->dead()) {
    return Fail("instantiation trapped: " + (*inst)->last_trap_message());
  }
  current_ = *inst;
  if (!c.name.empty()) named_[c.name] = *inst;
  return Pass();
}

CommandResult Executor::Register(const Command& c) {
  auto inst = Target(c.name);
  if (!inst.ok()) return Fail(inst.status().message());
  registered_[c.as] = *inst;
  return Pass();
}

CommandResult Executor::AssertReturn(const Command& c) {
  auto r = Invoke(c.action);
  if (!r.ok()) return Fail(r.status().message());
  if (!r->status.ok()) return Fail("trapped: " + r->status.message());
  if (r->results.size() != c.expected.size()) {
    return Fail("returned " + std::to_string(r->results.size()) +
                " values, expected " + std::to_string(c.expected.size()));
  }
  for (size_t i = 0; i < c.expected.size(); ++i) {
    const Value& want = c.expected[i];
    if (want.type != TypeName(r->result_types[i])) {
      return Fail("result " + std::to_string(i) + " has type " +
                  TypeName(r->result_types[i]) + ", expected " + want.type);
    }
    if (!Matches(want, r->results[i])) {
      return Fail(c.action.field + ": got " +
                  Describe(want.type, r->results[i]) + ", expected " +
                  want.type + ":" + want.value);
    }
  }
  return Pass();
}

CommandResult Executor::AssertTrap(const Command& c, bool exhaustion) {
  auto r = Invoke(c.action);
  if (!r.ok()) return Fail(r.status().message());
  if (r->status.ok()) return Fail("returned instead of trapping: " + c.text);
  bool kind_ok = exhaustion
                     ? r->trap == wasm::TrapKind::kStackExhausted
                     : r->status.message().find(c.text) != std::string::npos;
  if (!kind_ok) {
    return Fail("trapped with `" + r->status.message() + "`, expected `" +
                c.text + "`");
  }
  return Pass();
}

CommandResult Executor::AssertRejected(const Command& c) {
  if (c.module_type == "text") {
    return Skip(
        "text-format module: wast2json keeps (module quote ...) as .wat "
        "text, which a binary loader cannot read");
  }
  auto m = Module(c.filename);
  if (m.ok()) return Fail("loaded a module that should fail: " + c.text);
  StatusCode code = m.status().code();
  if (code != StatusCode::kInvalidArgument && code != StatusCode::kRefused) {
    return Fail("rejected, but not as invalid: " + m.status().ToString());
  }
  return Pass();
}

CommandResult Executor::AssertUnlinkable(const Command& c) {
  auto m = Module(c.filename);
  if (!m.ok()) {
    const std::string proposal = RefusedProposal(m.status());
    if (!proposal.empty()) return Unsupported(proposal);
    return Fail("not loaded: " + m.status().ToString());
  }
  auto inst = Instantiate(*m);
  if (inst.ok()) return Fail("linked a module that should not: " + c.text);
  if (inst.status().message().find(c.text) == std::string::npos) {
    return Fail("unlinkable as `" + inst.status().message() + "`, expected `" +
                c.text + "`");
  }
  return Pass();
}

CommandResult Executor::AssertUninstantiable(const Command& c) {
  auto m = Module(c.filename);
  if (!m.ok()) {
    const std::string proposal = RefusedProposal(m.status());
    if (!proposal.empty()) return Unsupported(proposal);
    return Fail("not loaded: " + m.status().ToString());
  }
  auto inst = Instantiate(*m);
  if (!inst.ok()) return Fail("not linked: " + inst.status().message());
  if (!(*inst)->dead()) return Fail("instantiated; expected " + c.text);
  const std::string& msg = (*inst)->last_trap_message();
  if (msg.find(c.text) == std::string::npos) {
    return Fail("instantiation trapped with `" + msg + "`, expected `" +
                c.text + "`");
  }
  return Pass();
}

}  // namespace tessera::spec
