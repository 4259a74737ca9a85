// A realm kind's declarative presence (docs/realms.md "Presence"): the
// kind's "presence" field,
//
//   "presence": {"path": "here/{avatar}", "value": true,
//                "prune": ["cursors/{avatar}", "names/{avatar}"]}
//
// makes the server keep a row per attached avatar: when an avatar's first
// connection attaches, `path` (with {avatar} filled in) is set to `value`
// (default true), creating missing parent objects; when its last
// connection leaves, `path` and every `prune` path that exists are
// deleted. Paths are literal keys and exactly one {avatar}. These are
// RealmHooks (host.h); a realm module's own hooks run beside them.
#ifndef TESSERA_REALM_PRESENCE_H_
#define TESSERA_REALM_PRESENCE_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "realm/patch.h"

namespace tessera::realm {

struct PresenceConfig {
  // Literal keys, with the {avatar} segment as the empty string at
  // avatar_index.
  struct Pattern {
    std::string text;
    std::vector<std::string> keys;
    size_t avatar_index = 0;
    Path For(std::string_view avatar) const;
  };
  Pattern path;
  Json value = true;
  std::vector<Pattern> prune;
};

// Parses the "presence" object. Errors: kInvalidArgument naming the field
// (unknown fields, a path without exactly one {avatar}, a `*` or `**`).
Result<PresenceConfig> ParsePresence(const Json& presence,
                                     std::string_view where);

// The patch that attaches (detaches) `avatar` in `state`: empty when there
// is nothing to do.
Patch PresenceAttach(const PresenceConfig& presence, std::string_view avatar,
                     const Json& state);
Patch PresenceDetach(const PresenceConfig& presence, std::string_view avatar,
                     const Json& state);

}  // namespace tessera::realm

#endif  // TESSERA_REALM_PRESENCE_H_
