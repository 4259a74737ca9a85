// Who may write and who may read which paths of a realm's document
// (docs/realms.md "Rules"). Pure functions over a parsed rule list; no
// state, thread-safe.
//
// A kind declares an ordered list:
//   "rules": [{"path": "players/{avatar}/**", "write": "owner"},
//             {"path": "chat", "write": "append"},
//             {"path": "hands/{avatar}/**", "read": "owner"},
//             {"path": "secret/**", "read": "server"}]
// A pattern is "/"-separated segments: a literal (matches that object key
// only, never a list index), `*` (any one segment), `{avatar}` (any one
// object key, which names the owner of what lies under it) and, last only,
// `**` (zero or more segments).
//
// Writes (clients only; the server's own update path is not checked): the
// first rule with a "write" that matches the op's path decides; no match
// means server-only. Modes: "server", "everyone", "owner" (only the avatar
// the {avatar} segment names; every other avatar is refused, the rule does
// not fall through) and "append" (only an append op on exactly that list
// path). A set or delete replaces a whole subtree, so it is also refused
// when a rule naming a path below the op's path would refuse this avatar
// (a set on "players" may not replace other avatars' subtrees).
//
// Reads: a path is readable when it and every path above it are; each is
// decided by the first rule with a "read" matching it, or "everyone".
// Modes: "everyone", "owner", "server" (no client). Unreadable object
// members are left out of what a client receives; unreadable list elements
// become null so that list indices stay the same for every reader.
#ifndef TESSERA_REALM_RULES_H_
#define TESSERA_REALM_RULES_H_

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "realm/patch.h"

namespace tessera::realm {

enum class WriteMode { kServer, kEveryone, kOwner, kAppend };
enum class ReadMode { kEveryone, kOwner, kServer };

struct PatternSegment {
  enum class Kind { kLiteral, kStar, kAvatar, kRest };
  Kind kind = Kind::kLiteral;
  std::string text;  // kLiteral only
};

struct Rule {
  std::string text;  // the pattern as written, for messages
  std::vector<PatternSegment> pattern;
  std::optional<WriteMode> write;
  std::optional<ReadMode> read;
};

struct Rules {
  std::vector<Rule> rules;  // in declaration order: first match wins
};

inline constexpr size_t kMaxRules = 256;
inline constexpr size_t kMaxPatternSegments = 32;

// Parses a pattern. Errors: kInvalidArgument saying what is wrong (empty
// segment, `**` not last, an unknown {placeholder}, two {avatar}, a `*`
// inside a literal).
Result<std::vector<PatternSegment>> ParsePattern(std::string_view text);

// Parses a kind's "rules" array. `where` prefixes messages, e.g.
// "app/tessera.json: realms[0].rules". Errors: kInvalidArgument naming the
// rule index and field (unknown fields and modes, an owner rule without
// {avatar}, an append rule ending in `**`, a rule with neither "write" nor
// "read").
Result<Rules> ParseRules(const Json& rules, std::string_view where);

// Whether client `avatar_id` may apply `op`. Errors: kPermissionDenied
// naming the op's path and the rule that refuses it.
Status CheckWrite(const Rules& rules, const Op& op, std::string_view avatar_id);

// Whether `avatar` may read the value at `path` (and so all of it that no
// rule hides further down).
bool CanRead(const Rules& rules, const Path& path, std::string_view avatar);

// Whether some rule keeps something from some client (a "read" other than
// "everyone"). False: every client reads the whole document, so slicing
// is the identity and may be skipped.
bool RestrictsReads(const Rules& rules);

// `doc` as `avatar` may see it (see the file comment). An unreadable root
// gives an empty object.
Json SliceForReader(const Rules& rules, const Json& doc,
                    std::string_view avatar);

// `op` as `avatar` may see it: nullopt when it touches nothing the reader
// may read; a set's value trimmed of unreadable parts; a set, append or
// delete of an unreadable list element under a readable list kept with a
// null value, so the reader's indices stay in step.
std::optional<Op> SliceOp(const Rules& rules, const Op& op,
                          std::string_view avatar);

// Rules' text form for messages: "players/b/x", "(root)" for the root.
std::string RulePathText(const Path& path);

}  // namespace tessera::realm

#endif  // TESSERA_REALM_RULES_H_
