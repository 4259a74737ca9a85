// The keyed-grant template (C++): the function a shard's keyed call runs
// (docs/guest-abi.md "Keyed calls and entity writes"). Invoke export
// "grant" with params {"player": "...", "item": "..."} inserts one row of
// entity type "Item" {owner, kind, shard} and returns {"itemId": "<id>"}.
//
// The host runs it in one transaction that also stores the call's key and
// this result: if the insert fails (or anything after it), nothing is
// stored and the shard gets the error ("BAD_VALUE: ..."); if it commits,
// a retry of the same key returns the stored {"itemId"} without running
// again, so the item exists exactly once. Declare the type in tessera.json:
//   "data": {"types": [{"name": "Item", "owner": "owner", "fields": [
//     {"name": "owner", "type": "string", "required": true},
//     {"name": "kind", "type": "string", "required": true},
//     {"name": "shard", "type": "string"}]}]}
// and have the shard call "grant" (or "<module>.grant").
#include <cstdint>
#include <string>

#include "tessera/compute.h"

namespace {

namespace tc = tessera::compute;

struct GrantParams {
  std::string player;
  std::string item;
};
TESSERA_FIELDS(GrantParams, player, item);

// The new row, as written to the Item table.
struct ItemFields {
  std::string owner;
  std::string kind;
  std::string shard;
};
TESSERA_FIELDS(ItemFields, owner, kind, shard);

// What insert replies: {"row": {"id": ..., ...}} (other members skipped).
struct RowId {
  std::string id;
};
TESSERA_FIELDS(RowId, id);
struct Inserted {
  RowId row;
};
TESSERA_FIELDS(Inserted, row);

struct Granted {
  std::string itemId;
};
TESSERA_FIELDS(Granted, itemId);

void Init() {}

void Tick(std::uint32_t) {}

tessera::Result<std::string> Invoke(const tc::Invocation& call) {
  if (call.export_name != "grant") {
    return tessera::Error("no export " + call.export_name);
  }
  tessera::Result<GrantParams> p = call.params<GrantParams>();
  if (!p.ok()) return tessera::Error(p.error());
  if (p->player.empty() || p->item.empty()) {
    return tessera::Error("BAD_REQUEST: grant needs a player and an item");
  }
  const ItemFields fields{p->player, p->item, call.caller_shard_id};
  tessera::Result<Inserted> row =
      tc::data::insert("Item", tc::to_json(fields)).decode<Inserted>();
  if (!row.ok()) return tessera::Error(row.error());
  return tc::to_json(Granted{row->row.id});
}

}  // namespace

TESSERA_COMPUTE_MODULE(Init, Tick, Invoke);
