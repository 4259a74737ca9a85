// The manifest's "realms" section (docs/realms.md "The realm kind"):
// each entry is parsed by realm::ParseRealmKind, then checked against the
// rest of the manifest. Internal to tessera_app (manifest.cc calls it).
#ifndef TESSERA_APP_MANIFEST_REALMS_H_
#define TESSERA_APP_MANIFEST_REALMS_H_

#include <nlohmann/json.hpp>
#include <string>

#include "app/manifest.h"
#include "common/status.h"

namespace tessera::app::internal {

// Parses the array `realms` into m->realms. `m`'s shard kinds and compute
// modules must already be parsed: a realm kind may not share a shard kind's
// name (clients address both by name) and its "module" must be one of the
// manifest's compute modules. Errors (kInvalidArgument) start with
// `file_label` and the entry: 'tessera.json: realms[1] ("match"): ...'.
Status ParseRealmsSection(const nlohmann::json& realms,
                          const std::string& file_label, Manifest* m);

}  // namespace tessera::app::internal

#endif  // TESSERA_APP_MANIFEST_REALMS_H_
