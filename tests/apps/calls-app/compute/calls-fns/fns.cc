// The functions of the calls test app (tests/apps/calls-app): what the
// server's keyed-call, onStop and bench tests call from shards. Built with
// the C++ compute SDK (tessera/compute.h); the app's data types are in the
// test's tessera.json (Item, Stop).
//   grant  {"item", "owner"?} inserts an Item, returns {"id"}; a data
//          error fails the call
//   refuse {"item"}           inserts an Item, then fails: "refused: <item>"
//                             (its insert rolls back)
//   trap   {"item"}           inserts an Item, then traps
//   noop   anything           returns {} (the bench's trivial export)
//   onStop {"shardId", "kind", "reason", "error"} inserts a Stop row
//          {shard, kind, reason} (a kind's onStop function)
//   caller                    returns {"shard": callerShardId}
#include <tessera/compute.h>

#include <string>

namespace {

namespace tc = tessera::compute;

struct GrantParams {
  std::string item;
  std::string owner;
};
TESSERA_FIELDS(GrantParams, item, owner);

struct ItemFields {
  std::string name;
  std::string owner;
};
TESSERA_FIELDS(ItemFields, name, owner);

struct StopParams {
  std::string shardId;
  std::string kind;
  std::string reason;
};
TESSERA_FIELDS(StopParams, shardId, kind, reason);

struct StopFields {
  std::string shard;
  std::string kind;
  std::string reason;
};
TESSERA_FIELDS(StopFields, shard, kind, reason);

struct RowId {
  std::string id;
};
TESSERA_FIELDS(RowId, id);
struct Inserted {
  RowId row;
};
TESSERA_FIELDS(Inserted, row);

struct Caller {
  std::string shard;
};
TESSERA_FIELDS(Caller, shard);

tessera::Result<std::string> InsertItem(const tc::Invocation& call) {
  tessera::Result<GrantParams> p = call.params<GrantParams>();
  if (!p.ok()) return tessera::Error(p.error());
  tessera::Result<Inserted> row =
      tc::data::insert("Item", tc::to_json(ItemFields{p->item, p->owner}))
          .decode<Inserted>();
  if (!row.ok()) return tessera::Error(row.error());
  return p->item;
}

void Init() {}
void Tick(std::uint32_t) {}

tessera::Result<std::string> Invoke(const tc::Invocation& call) {
  const std::string& name = call.export_name;
  if (name == "noop") return std::string("{}");
  if (name == "caller") return tc::to_json(Caller{call.caller_shard_id});
  if (name == "grant") {
    tessera::Result<GrantParams> p = call.params<GrantParams>();
    if (!p.ok()) return tessera::Error(p.error());
    tessera::Result<Inserted> row =
        tc::data::insert("Item", tc::to_json(ItemFields{p->item, p->owner}))
            .decode<Inserted>();
    if (!row.ok()) return tessera::Error(row.error());
    return tc::to_json(row->row);
  }
  if (name == "refuse" || name == "trap") {
    tessera::Result<std::string> item = InsertItem(call);
    if (!item.ok()) return item;
    if (name == "trap") tc::panic("trap after inserting " + *item);
    return tessera::Error("refused: " + *item);
  }
  if (name == "onStop") {
    tessera::Result<StopParams> p = call.params<StopParams>();
    if (!p.ok()) return tessera::Error(p.error());
    tc::Reply r = tc::data::insert(
        "Stop", tc::to_json(StopFields{p->shardId, p->kind, p->reason}));
    if (!r.ok()) return r.status.status();
    return std::string("{}");
  }
  return tessera::Error("no export " + name);
}

}  // namespace

TESSERA_COMPUTE_MODULE(Init, Tick, Invoke);
