// Realm patches (docs/realms.md "Patches"): the one way a realm's JSON
// document changes. A commit is an ordered list of ops applied atomically;
// its version is the realm's version after it.
//
//   set     path value   creates or replaces the value at path (the parent
//                        must exist and be an object, or a list with the
//                        index in range; index == size appends)
//   delete  path         removes an object key or a list element (absent:
//                        a refusal, not a no-op)
//   append  path value   pushes value onto the list at path (the list is
//                        created when the path is absent and its parent is
//                        an object)
//
// A path is a list of segments: a string is an object key, an integer a
// list index. The empty path is the root (set only: replaces the whole
// document, which must stay an object).
//
// Two encodings, both produced and checked here (patch.cc, patch_codec.cc):
// JSON ({"op":"set","path":["a",0],"value":...}) for the admin API and
// tests; and MessagePack with interned keys (KeyTable: every object key and
// path key is sent once as a string and then as its integer id) for the
// wire, with one table per direction of a connection, and for the patch
// log, where each commit is encoded with a fresh table so that it decodes
// on its own. Every decoder takes untrusted bytes and
// answers a Status naming what is wrong; nothing throws.
#ifndef TESSERA_REALM_PATCH_H_
#define TESSERA_REALM_PATCH_H_

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <variant>
#include <vector>

#include "common/status.h"
#include "common/string_map.h"

namespace tessera::realm {

using Json = nlohmann::json;

enum class OpKind { kSet, kDelete, kAppend };
std::string_view OpName(OpKind kind);  // "set", "delete", "append"

using PathSegment = std::variant<std::string, int64_t>;
using Path = std::vector<PathSegment>;

struct Op {
  OpKind kind = OpKind::kSet;
  Path path;
  Json value;  // null for delete
  bool operator==(const Op&) const = default;
};

using Patch = std::vector<Op>;  // one commit's ops, in order

// "a/0/b"-style text for messages (keys escaped as in JSON Pointer).
std::string PathText(const Path& path);

// Applies `patch` to `doc` atomically: on error `doc` is unchanged and the
// Status names the failing op's index, op and path. kInvalidArgument.
Status ApplyPatch(const Patch& patch, Json* doc);

// JSON form. Errors: kInvalidArgument naming the op index and field.
Result<Patch> PatchFromJson(const Json& ops);
Json PatchToJson(const Patch& patch);

// Interned keys. Ids are dense from 0 in order of first use.
class KeyTable {
 public:
  // The id of `key`, adding it if new; `added` says it was new.
  uint32_t Intern(std::string_view key, bool* added);
  // Decoder side: the key with id `id`, or nullptr.
  const std::string* Find(uint32_t id) const;
  // The id of `key` if it is in the table (nothing is added).
  std::optional<uint32_t> IdOf(std::string_view key) const;
  // Decoder side: records a key the peer announced with its id (must be
  // the next dense id). Errors: kInvalidArgument.
  Status Learn(uint32_t id, std::string key);
  size_t size() const { return keys_.size(); }

  // Encoder side, for a patch planned with a shared table (KeyPlan): the
  // id of `key`, whose id in the shared table is `shared_id`. Indexes a
  // vector instead of hashing the key once it has been seen (a broadcast
  // encodes every key of every commit for every reader). A table follows
  // one shared table (`source`); given another, it forgets the first's ids
  // (its own stay).
  uint32_t InternShared(uint64_t source, uint32_t shared_id,
                        std::string_view key, bool* added);

 private:
  std::vector<std::string> keys_;
  uint64_t shared_source_ = 0;
  std::vector<uint32_t> by_shared_;  // shared id -> own id + 1; 0: unknown
  // Looked up by string_view (the encoder interns every key of every op
  // sent to every reader).
  StringMap<uint32_t> ids_;
};

// Limits a decoder enforces on untrusted bytes (docs/realms.md "Ingress
// limits"); the defaults are the realm defaults.
struct DecodeLimits {
  size_t max_ops = 64;               // ops in one patch
  size_t max_bytes = 64 * 1024;      // encoded bytes of one patch
  size_t max_key_length = 128;       // one object or path key
  size_t max_depth = 32;             // nesting of values and paths
  size_t max_expanded_leaves = 256;  // leaves one op's value expands to
};

// MessagePack with interned keys (byte format: docs/realms.md "Patches").
// Encode adds new keys to `keys` (a list index must be >= 0; a negative one
// is written as index INT64_MAX, which no document has); Decode
// learns announced keys into `keys` and fails (kInvalidArgument, or
// kResourceExhausted for a broken limit, naming it) without changing
// `keys` on error.
std::string EncodePatch(const Patch& patch, KeyTable* keys);

// The ids a shared KeyTable (one per realm instance, used on its thread)
// gives the keys of one patch, in the order EncodePatch meets them. Made
// once per commit; each reader's EncodePatch with it indexes its own table
// by these ids (KeyTable::InternShared) instead of hashing every key, and
// writes the same bytes as without it.
struct KeyPlan {
  uint64_t source = 0;  // the shared table's NewKeySource(); 0: no plan
  std::vector<uint32_t> ids;
};
// A process-unique, nonzero id for a shared table (thread-safe).
uint64_t NewKeySource();
KeyPlan PlanKeys(const Patch& patch, KeyTable* shared, uint64_t source);
// EncodePatch with the plan PlanKeys made for this very patch (`plan` null
// or without a source: as above).
std::string EncodePatch(const Patch& patch, KeyTable* keys,
                        const KeyPlan* plan);
// The same bytes into `*out` (replaced; its capacity reused).
void EncodePatchTo(const Patch& patch, KeyTable* keys, const KeyPlan* plan,
                   std::string* out);
Result<Patch> DecodePatch(std::span<const uint8_t> bytes, KeyTable* keys,
                          const DecodeLimits& limits = {});

}  // namespace tessera::realm

#endif  // TESSERA_REALM_PATCH_H_
