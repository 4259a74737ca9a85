// Invoke triggers' contracts and invoke policies (docs/compute.md
// "Invoke"). Pure functions; any thread.
//
// Contract JSON: {"description": "...", "params": {"amount": {"type":
// "int", "required": true}, ...}, "result": {"placed": {"type": "bool"}}};
// types int | float | string | bool | object | array. Declared params are
// checked before the sandbox runs; undeclared ones pass through.
//
// Invoke policy JSON (an authority tree): {"type": "anyone"};
// {"type": "user_in_list", "users": ["u1", ...]};
// {"type": "param_equals", "param": "p", "value": <json>};
// {"type": "param_is_caller", "param": "p"} (params.p == the caller's id);
// {"type": "all_of" | "any_of", "policies": [...]};
// "owner_of_self" and other container leaves fail closed. No policy: only
// management tokens may invoke.
#ifndef TESSERA_COMPUTE_CONTRACT_H_
#define TESSERA_COMPUTE_CONTRACT_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace tessera::compute {

struct ContractField {
  std::string name;
  std::string type;  // int | float | string | bool | object | array
  bool required = false;
  std::string description;
};
struct Contract {
  std::string description;
  std::vector<ContractField> params;  // in name order
  std::vector<ContractField> result;
};

// Errors: kInvalidArgument naming the field ("params.amount.type: \"long\"
// is not one of int, float, string, bool, object, array").
Result<Contract> ParseContract(std::string_view json);
// Checks the params object (JSON text) against `contract`. Errors:
// kInvalidArgument with one line per violation, "params.amount: required"
// / "params.amount: expected int, got string"; params not an object.
Status ValidateParams(const Contract& contract, std::string_view params_json);

// Errors: kInvalidArgument naming the node ("policies[1].type: unknown
// policy type \"owner\"").
Status CheckInvokePolicy(std::string_view json);
// Whether a caller may invoke: `caller_user_id` empty for an anonymous
// caller. A malformed policy denies. Management tokens bypass this.
bool InvokeAllowed(std::string_view policy_json,
                   std::string_view caller_user_id,
                   std::string_view params_json);

// TypeScript for `tessera compute types`: per invoke export with a
// contract, `<Module><Export>Params` / `...Result` interfaces and a typed
// wrapper `invoke<Module><Export>(client, params)` calling
// client.invoke(module, export, params). Deterministic output.
struct ExportContract {
  std::string module;
  std::string export_name;
  Contract contract;
};
std::string GenerateTypeScript(const std::vector<ExportContract>& exports);

}  // namespace tessera::compute

#endif  // TESSERA_COMPUTE_CONTRACT_H_
