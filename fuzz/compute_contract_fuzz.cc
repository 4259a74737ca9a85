// libFuzzer target: the compute policies that read untrusted JSON
// (src/compute/contract.cc, policy.cc, ts_types.cc). The input is split at
// NUL bytes into a document (a contract, an invoke policy or a policy
// patch: each reader gets it), the params an invoker sends, and a caller
// id. Checks what must hold whatever the bytes: refusals carry a message,
// a malformed invoke policy never allows, accepted params meet the
// contract, an accepted patch stays within the ceilings and round-trips
// through its JSON, and TypeScript generation does not throw.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "compute/contract.h"
#include "compute/policy.h"

namespace {

using namespace tessera::compute;

void Check(bool ok) {
  if (!ok) std::abort();
}

std::vector<std::string_view> Split(std::string_view text, size_t parts) {
  std::vector<std::string_view> out;
  while (out.size() + 1 < parts) {
    const size_t nul = text.find('\0');
    if (nul == std::string_view::npos) break;
    out.push_back(text.substr(0, nul));
    text.remove_prefix(nul + 1);
  }
  out.push_back(text);
  while (out.size() < parts) out.emplace_back();
  return out;
}

bool Within(const Policy& p, const Policy& c) {
  return p.max_modules <= c.max_modules && p.max_tick_hz <= c.max_tick_hz &&
         p.fuel_per_tick <= c.fuel_per_tick &&
         p.fuel_per_invoke <= c.fuel_per_invoke &&
         p.max_memory_mb <= c.max_memory_mb && p.max_run_ms <= c.max_run_ms &&
         p.max_db_ops_per_tick <= c.max_db_ops_per_tick &&
         p.max_egress_msgs_per_min <= c.max_egress_msgs_per_min &&
         p.max_egress_bytes_per_min <= c.max_egress_bytes_per_min &&
         p.failure_threshold <= c.failure_threshold &&
         p.cooldown_ms <= c.cooldown_ms && p.idle_unload_ms <= c.idle_unload_ms;
}

void Contracts(std::string_view doc, std::string_view params,
               std::string_view name) {
  auto contract = ParseContract(doc);
  if (!contract.ok()) {
    Check(!contract.status().message().empty());
    return;
  }
  const tessera::Status valid = ValidateParams(*contract, params);
  Check(valid.ok() || !valid.message().empty());
  if (valid.ok()) {
    // Params that passed are an object holding every required field, and
    // every declared field present has its type.
    const nlohmann::json p = nlohmann::json::parse(params, nullptr, false);
    Check(p.is_object());
    for (const ContractField& f : contract->params) {
      auto it = p.find(f.name);
      if (it == p.end()) {
        Check(!f.required);
        continue;
      }
      if (f.type == "int") Check(it->is_number_integer());
      if (f.type == "float") Check(it->is_number());
      if (f.type == "string") Check(it->is_string());
      if (f.type == "bool") Check(it->is_boolean());
      if (f.type == "object") Check(it->is_object());
      if (f.type == "array") Check(it->is_array());
    }
  } else {
    // One line per violation, none empty.
    Check(valid.message().find("\n\n") == std::string::npos &&
          valid.message().back() != '\n');
  }
  const std::string ts =
      GenerateTypeScript({{std::string(name), "e", *contract},
                          {"m", std::string(name), *contract}});
  Check(ts.find("export interface ComputeInvoker") != std::string::npos);
}

void InvokePolicies(std::string_view doc, std::string_view params,
                    std::string_view caller) {
  const tessera::Status check = CheckInvokePolicy(doc);
  const bool allowed = InvokeAllowed(doc, caller, params);
  if (!check.ok()) {
    Check(!check.message().empty());
    Check(!allowed);
  }
  Check(InvokeAllowed(doc, caller, params) == allowed);  // no hidden state
  if (check.ok()) {
    // The same tree under any_of beside anyone allows everything; under
    // all_of beside a container leaf, nothing (unless one more level is
    // too deep: then both are malformed and deny).
    const std::string tree(doc);
    const std::string any =
        R"({"type":"any_of","policies":[{"type":"anyone"},)" + tree + "]}";
    const std::string all =
        R"({"type":"all_of","policies":[{"type":"owner_of_self"},)" + tree +
        "]}";
    Check(InvokeAllowed(any, caller, params) == CheckInvokePolicy(any).ok());
    Check(!InvokeAllowed(all, caller, params));
  }
}

void PolicyPatches(std::string_view doc) {
  const Policy ceilings = DefaultCeilings();
  auto patched = ApplyPolicyPatch(Policy{}, doc, ceilings);
  if (!patched.ok()) {
    Check(!patched.status().message().empty());
  } else {
    Check(Within(*patched, ceilings));
    const std::string text = PolicyToJson(*patched);
    auto again = ApplyPolicyPatch(Policy{}, text, ceilings);
    Check(again.ok() && PolicyToJson(*again) == text);
    Check(PolicyToJson(ClampToCeilings(*patched, ceilings)) == text);
  }
  auto parsed = ParseCeilings(doc);
  if (!parsed.ok()) {
    Check(!parsed.status().message().empty());
  } else {
    Check(Within(ClampToCeilings(Policy{}, *parsed), *parsed));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::vector<std::string_view> parts = Split(text, 3);
  Contracts(parts[0], parts[1], parts[2]);
  InvokePolicies(parts[0], parts[1], parts[2]);
  PolicyPatches(parts[0]);
  return 0;
}
