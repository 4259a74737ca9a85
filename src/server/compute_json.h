// The compute API's JSON (docs/compute.md "HTTP API"): records out as the
// seed's camelCase objects (times in unix milliseconds), request bodies in,
// checked strictly (an unknown field is refused, naming it and the fields
// there are). Shared by the routes and the manifest's boot sync, so a
// trigger in tessera.json is the HTTP trigger body. Pure functions; any
// thread.
#ifndef TESSERA_SERVER_COMPUTE_JSON_H_
#define TESSERA_SERVER_COMPUTE_JSON_H_

#include <cstdint>
#include <initializer_list>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"
#include "compute/compute_types.h"
#include "compute/engine.h"

namespace tessera::server {

// module id -> name, for rows that carry only the id.
using ModuleNames = std::map<int64_t, std::string>;

nlohmann::json ModuleJson(const compute::ModuleView& view);
nlohmann::json VersionJson(const compute::VersionRecord& version);
nlohmann::json TriggerJson(const compute::TriggerRecord& trigger);
nlohmann::json RunJson(const compute::RunRecord& run);
nlohmann::json LogJson(const compute::LogRecord& log, const ModuleNames& names);
nlohmann::json UsageJson(const compute::UsageRow& row,
                         const ModuleNames& names);
nlohmann::json StatsJson(const compute::StatsView& stats);
nlohmann::json DiagnosticsJson(const compute::DiagnosticsView& diagnostics);
nlohmann::json InvokeResultJson(const compute::InvokeResult& result);

// Refuses members of `body` not in `known`: kInvalidArgument "`where`:
// unknown field \"x\" (fields: a, b, c)". `where` names the object
// ("body", "tessera.json: compute[1].triggers[0]").
Status CheckFields(const nlohmann::json& body, std::string_view where,
                   std::initializer_list<std::string_view> known);

// A trigger body {triggerType, tickHz?, onEvent?, eventName?, debounceMs?,
// exportName?, invokePolicy?, contract?}. Fields of another trigger type
// are refused. Errors: kInvalidArgument prefixed with `where`.
Result<compute::TriggerRecord> ParseTriggerBody(const nlohmann::json& body,
                                                std::string_view where);

// A deploy body {files: {path: content}, sdkVersion?, abiVersion?,
// language?} into `request` (module set by the caller).
Status ParseDeployBody(const nlohmann::json& body,
                       compute::DeployRequest* request);

}  // namespace tessera::server

#endif  // TESSERA_SERVER_COMPUTE_JSON_H_
