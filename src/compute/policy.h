// The per-app compute policy: the seed's defaults (compute_types.h Policy),
// JSON in and out, and server-wide ceilings a policy may not exceed.
// Pure functions; any thread.
#ifndef TESSERA_COMPUTE_POLICY_H_
#define TESSERA_COMPUTE_POLICY_H_

#include <string>
#include <string_view>

#include "common/status.h"
#include "compute/compute_types.h"

namespace tessera::compute {

// The server-wide maxima (operator-set; TESSERA_COMPUTE_CEILINGS JSON with
// the policy's field names overrides any of them). `enabled` is ignored.
Policy DefaultCeilings();
// Parses the ceilings JSON over DefaultCeilings(). Errors: kInvalidArgument
// naming the field.
Result<Policy> ParseCeilings(std::string_view json);

// The policy as the API's JSON object: {"enabled", "maxModules",
// "maxTickHz", "fuelPerTick", "fuelPerInvoke", "maxMemoryMb", "maxRunMs",
// "maxDbOpsPerTick", "maxEgressMsgsPerMin", "maxEgressBytesPerMin",
// "failureThreshold", "cooldownMs", "idleUnloadMs"}.
std::string PolicyToJson(const Policy& policy);

// `current` with the fields present in the JSON object `patch` replaced.
// Errors (kInvalidArgument, nothing applied): not an object, an unknown
// field, a wrong type, a value below the field's minimum (1, or 0 where 0
// means off), or above `ceilings`: "maxTickHz 100 exceeds the server
// ceiling (60)".
Result<Policy> ApplyPolicyPatch(const Policy& current, std::string_view patch,
                                const Policy& ceilings);

// `policy` with every field lowered to its ceiling (a stored policy after
// the operator lowered a ceiling).
Policy ClampToCeilings(const Policy& policy, const Policy& ceilings);

}  // namespace tessera::compute

#endif  // TESSERA_COMPUTE_POLICY_H_
