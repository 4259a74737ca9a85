// zone-fns: the zone example's functions (a C++ compute module,
// tessera/compute.h), declared in examples/zone/tessera.json with their
// invoke triggers and policies. Each call runs in one transaction of the
// app's data: an error return commits nothing, and the inputs it sends to
// a zone (shards.send) leave only once it commits.
//
//   joinZone   {zone?, name?}                   policy: anyone
//     The join function: starts the zone if it is not running, finds the
//     caller's Character (by userId) or creates it, tells the zone about it
//     (an `enter` input with the row and its items: how a zone restored
//     from an older save learns what committed since), and returns
//     {shardId, subscriberId, ticket, characterId}.
//   grantItem  {characterId, item, grantKey, n}  management only
//     Loot, as a keyed call from the zone (key == grantKey): inserts the
//     Item and moves the character's nextGrant past n; -> {itemId}.
//   gmHeal     {zone, userId, hp}                policy: the GM list
//     Records a GmAction row and sends the zone {heal: {who, hp}}, an
//     input with an empty subscriber id that no player can send.
//   onZoneStop {shardId, kind, reason, error}    the kind's onStop
//     Records the stop in a ZoneRun row.
//
// The directory holds sources only; the server compiles them at boot with
// the C++ SDK's recipe (sdk/cpp/BUILD.md).
#include <tessera/compute.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace {

namespace tc = tessera::compute;

constexpr char kZoneKind[] = "zone";
constexpr char kDefaultZone[] = "zone-1";
constexpr std::int64_t kMaxHeal = 1000;
constexpr std::int64_t kMaxItemsShown = 1000;

// ---- rows (the fields of tessera.json's "data" section) -------------------

struct CharacterRow {
  std::string id;
  std::string name;
  std::string userId;
  std::string zone;
  std::int64_t hp = 100;
  double x = 1000;
  double y = 1000;
  std::int64_t nextGrant = 1;
};
TESSERA_FIELDS(CharacterRow, id, name, userId, zone, hp, x, y, nextGrant);

struct ItemRow {
  std::string id;
  std::string characterId;
  std::string item;
  std::string grantKey;
};
TESSERA_FIELDS(ItemRow, id, characterId, item, grantKey);

struct IdRow {
  std::string id;
};
TESSERA_FIELDS(IdRow, id);

// Replies of the data and shards ops (tessera/compute_abi.h).
struct CharacterReply {
  std::optional<CharacterRow> row;
};
TESSERA_FIELDS(CharacterReply, row);
struct IdReply {
  std::optional<IdRow> row;
};
TESSERA_FIELDS(IdReply, row);

struct ItemsReply {
  std::vector<ItemRow> rows;
  std::string nextCursor;
};
TESSERA_FIELDS(ItemsReply, rows, nextCursor);

struct ShardInfo {
  std::string id;
  std::string status;
};
TESSERA_FIELDS(ShardInfo, id, status);
struct ShardReply {
  std::optional<ShardInfo> shard;
};
TESSERA_FIELDS(ShardReply, shard);

struct TicketReply {
  std::string ticket;
};
TESSERA_FIELDS(TicketReply, ticket);

// A failed host call as an error the caller sees ("ROW_NOT_FOUND: ...").
tessera::Status Failed(std::string_view what, const tc::Reply& reply) {
  return tessera::Error(reply.status.error_code() + ": " + std::string(what) +
                        ": " + reply.status.message());
}

template <class T>
tessera::Result<T> Parse(std::string_view what, const tc::Reply& reply) {
  if (!reply.ok()) return tessera::Error(Failed(what, reply).message());
  T out{};
  tessera::Status st =
      tessera::decode(tessera::abi::kCodecJson, reply.json, out);
  if (!st.ok()) {
    return tessera::Error(std::string(what) +
                          ": unexpected reply: " + st.message());
  }
  return out;
}

// ---- joinZone ---------------------------------------------------------------

struct JoinParams {
  std::string zone = kDefaultZone;
  std::string name;
  std::string userId;  // management callers only (tests, tools)
};
TESSERA_FIELDS(JoinParams, zone, name, userId);

struct Carried {
  std::string id;
  std::string item;
};
TESSERA_FIELDS(Carried, id, item);

// The zone's `enter` input: the character as the data has it.
struct Enter {
  std::string userId;
  std::string characterId;
  std::string name;
  std::int64_t hp = 100;
  double x = 1000;
  double y = 1000;
  std::int64_t nextGrant = 1;
  std::vector<Carried> items;
};
TESSERA_FIELDS(Enter, userId, characterId, name, hp, x, y, nextGrant, items);
struct EnterInput {
  Enter enter;
};
TESSERA_FIELDS(EnterInput, enter);

struct Joined {
  std::string shardId;
  std::string subscriberId;
  std::string ticket;
  std::string characterId;
};
TESSERA_FIELDS(Joined, shardId, subscriberId, ticket, characterId);

// Starts `zone` unless it runs. Two joins at once are fine: each call holds
// the app's data writer, so the second one sees the first one's shard.
tessera::Status EnsureZone(const std::string& zone) {
  const tc::Reply reply = tc::shards::get(zone);
  // {"shard": null} when there is none (SHARD_NOT_FOUND is taken as none).
  if (reply.ok() || reply.status.error_code() != "SHARD_NOT_FOUND") {
    tessera::Result<ShardReply> got =
        Parse<ShardReply>("shards.get " + zone, reply);
    if (!got.ok()) return tessera::Error(got.error());
    if (got->shard.has_value() && got->shard->status != "stopped") return {};
  }
  tc::Reply created = tc::shards::create(kZoneKind, zone);
  if (created.ok()) return {};
  // A stopped shard the host has not removed yet, or a race with another
  // machine: fine when it runs now.
  tessera::Result<ShardReply> again =
      Parse<ShardReply>("shards.get " + zone, tc::shards::get(zone));
  if (again.ok() && again->shard.has_value() &&
      again->shard->status != "stopped") {
    return {};
  }
  return Failed("shards.create " + zone, created);
}

tessera::Result<CharacterRow> FindOrCreateCharacter(const std::string& user,
                                                    const JoinParams& p) {
  tessera::Result<CharacterReply> found = Parse<CharacterReply>(
      "data.lookup Character",
      tc::data::lookup("Character", "userId", tc::to_json(user)));
  if (!found.ok()) return tessera::Error(found.error());
  if (found->row.has_value()) return *found->row;
  CharacterRow fresh;
  fresh.name = p.name.empty() ? user : p.name.substr(0, 40);
  fresh.userId = user;
  fresh.zone = p.zone;
  std::map<std::string, std::string> fields = {
      {"name", fresh.name}, {"userId", fresh.userId}, {"zone", fresh.zone}};
  tessera::Result<CharacterReply> inserted =
      Parse<CharacterReply>("data.insert Character",
                            tc::data::insert("Character", tc::to_json(fields)));
  if (!inserted.ok()) return tessera::Error(inserted.error());
  if (!inserted->row.has_value()) {
    return tessera::Error("data.insert Character returned no row");
  }
  tc::log_info("new character " + inserted->row->id + " for " + user);
  return *inserted->row;
}

tessera::Result<std::vector<Carried>> ItemsOf(const std::string& character) {
  const std::map<std::string, std::string> where = {{"characterId", character}};
  std::vector<Carried> items;
  std::string cursor;
  do {
    tessera::Result<ItemsReply> page = Parse<ItemsReply>(
        "data.list Item",
        tc::data::list("Item", tc::to_json(where), cursor, 500));
    if (!page.ok()) return tessera::Error(page.error());
    for (ItemRow& row : page->rows) {
      items.push_back(Carried{std::move(row.id), std::move(row.item)});
    }
    cursor = page->nextCursor;
  } while (!cursor.empty() &&
           static_cast<std::int64_t>(items.size()) < kMaxItemsShown);
  return items;
}

tessera::Result<std::string> JoinZone(const tc::Invocation& call) {
  tessera::Result<JoinParams> p = call.params<JoinParams>();
  if (!p.ok()) return tessera::Error(p.error());
  // Players join as themselves; a management caller names the user.
  const std::string user =
      call.caller_user_id.empty() ? p->userId : call.caller_user_id;
  if (user.empty()) {
    return tessera::Error(
        "BAD_REQUEST: sign in first (management callers pass userId)");
  }
  if (p->zone.empty() || p->zone.size() > 64) {
    return tessera::Error("BAD_REQUEST: zone must be 1..64 bytes");
  }
  tessera::Status zone = EnsureZone(p->zone);
  if (!zone.ok()) return tessera::Error(zone.message());
  tessera::Result<CharacterRow> character = FindOrCreateCharacter(user, *p);
  if (!character.ok()) return tessera::Error(character.error());
  tessera::Result<std::vector<Carried>> items = ItemsOf(character->id);
  if (!items.ok()) return tessera::Error(items.error());

  EnterInput enter;
  enter.enter = Enter{
      user,         character->id, character->name,      character->hp,
      character->x, character->y,  character->nextGrant, std::move(*items)};
  tc::Reply sent = tc::shards::send(p->zone, tc::to_json(enter));
  if (!sent.ok()) return tessera::Error(Failed("shards.send", sent).message());

  tessera::Result<TicketReply> ticket =
      Parse<TicketReply>("shards.ticket", tc::shards::ticket(p->zone, user));
  if (!ticket.ok()) return tessera::Error(ticket.error());
  return tc::to_json(
      Joined{p->zone, user, std::move(ticket->ticket), character->id});
}

// ---- grantItem --------------------------------------------------------------

struct GrantParams {
  std::string characterId;
  std::string item;
  std::string grantKey;
  std::int64_t n = 0;
};
TESSERA_FIELDS(GrantParams, characterId, item, grantKey, n);

struct Granted {
  std::string itemId;
};
TESSERA_FIELDS(Granted, itemId);

struct NextGrant {
  std::int64_t nextGrant = 0;
};
TESSERA_FIELDS(NextGrant, nextGrant);

tessera::Result<std::string> GrantItem(const tc::Invocation& call) {
  tessera::Result<GrantParams> p = call.params<GrantParams>();
  if (!p.ok()) return tessera::Error(p.error());
  if (p->characterId.empty() || p->item.empty() || p->grantKey.empty()) {
    return tessera::Error(
        "BAD_REQUEST: characterId, item and grantKey are required");
  }
  tessera::Result<CharacterReply> character = Parse<CharacterReply>(
      "data.get Character", tc::data::get("Character", p->characterId));
  if (!character.ok()) return tessera::Error(character.error());
  if (!character->row.has_value()) {
    return tessera::Error("ROW_NOT_FOUND: no character " + p->characterId);
  }
  // The key is unique for good, so a second grant under it is the same
  // grant (its stored call pruned after 7 days): answer with that item.
  tessera::Result<IdReply> existing = Parse<IdReply>(
      "data.lookup Item",
      tc::data::lookup("Item", "grantKey", tc::to_json(p->grantKey)));
  if (!existing.ok()) return tessera::Error(existing.error());
  std::string item_id;
  if (existing->row.has_value()) {
    item_id = existing->row->id;
  } else {
    const std::map<std::string, std::string> fields = {
        {"characterId", p->characterId},
        {"item", p->item},
        {"grantKey", p->grantKey}};
    tessera::Result<IdReply> inserted = Parse<IdReply>(
        "data.insert Item", tc::data::insert("Item", tc::to_json(fields)));
    if (!inserted.ok()) return tessera::Error(inserted.error());
    if (!inserted->row.has_value()) {
      return tessera::Error("data.insert Item returned no row");
    }
    item_id = inserted->row->id;
  }
  if (character->row->nextGrant <= p->n) {
    tc::Reply bumped = tc::data::update("Character", p->characterId,
                                        tc::to_json(NextGrant{p->n + 1}));
    if (!bumped.ok()) {
      return tessera::Error(Failed("data.update Character", bumped).message());
    }
  }
  tc::log_info("granted " + p->item + " (" + p->grantKey + ") as " + item_id);
  return tc::to_json(Granted{item_id});
}

// ---- gmHeal -----------------------------------------------------------------

struct HealParams {
  std::string zone;
  std::string userId;
  std::int64_t hp = 0;
};
TESSERA_FIELDS(HealParams, zone, userId, hp);

struct GmActionRow {
  std::string zone;
  std::string userId;
  std::string gm;
  std::string action;
  std::int64_t amount = 0;
  std::int64_t at = 0;
};
TESSERA_FIELDS(GmActionRow, zone, userId, gm, action, amount, at);

struct Heal {
  std::string who;
  std::int64_t hp = 0;
};
TESSERA_FIELDS(Heal, who, hp);
struct HealInput {
  Heal heal;
};
TESSERA_FIELDS(HealInput, heal);

struct Recorded {
  std::string actionId;
};
TESSERA_FIELDS(Recorded, actionId);

tessera::Result<std::string> GmHeal(const tc::Invocation& call) {
  tessera::Result<HealParams> p = call.params<HealParams>();
  if (!p.ok()) return tessera::Error(p.error());
  if (p->zone.empty() || p->userId.empty()) {
    return tessera::Error("BAD_REQUEST: zone and userId are required");
  }
  if (p->hp < 1 || p->hp > kMaxHeal) {
    return tessera::Error("BAD_REQUEST: hp must be 1.." +
                          std::to_string(kMaxHeal));
  }
  // The heal goes out after the commit, where a failed send can no longer
  // undo the record: a zone that does not run is refused up front.
  const tc::Reply zone = tc::shards::get(p->zone);
  tessera::Result<ShardReply> running =
      Parse<ShardReply>("shards.get " + p->zone, zone);
  if (!running.ok() && zone.status.error_code() != "SHARD_NOT_FOUND") {
    return tessera::Error(running.error());
  }
  if (!running.ok() || !running->shard.has_value() ||
      running->shard->status == "stopped") {
    return tessera::Error("SHARD_NOT_FOUND: zone \"" + p->zone +
                          "\" is not running");
  }
  const GmActionRow action{
      p->zone,
      p->userId,
      call.caller_user_id.empty() ? std::string("admin") : call.caller_user_id,
      "heal",
      p->hp,
      tc::now_ms()};
  tessera::Result<IdReply> row =
      Parse<IdReply>("data.insert GmAction",
                     tc::data::insert("GmAction", tc::to_json(action)));
  if (!row.ok()) return tessera::Error(row.error());
  if (!row->row.has_value()) {
    return tessera::Error("data.insert GmAction returned no row");
  }
  // Delivered after the commit, with an empty subscriber id.
  tc::Reply sent =
      tc::shards::send(p->zone, tc::to_json(HealInput{Heal{p->userId, p->hp}}));
  if (!sent.ok()) return tessera::Error(Failed("shards.send", sent).message());
  return tc::to_json(Recorded{row->row->id});
}

// ---- onZoneStop -------------------------------------------------------------

struct StopParams {
  std::string shardId;
  std::string kind;
  std::string reason;
  std::optional<std::string> error;
};
TESSERA_FIELDS(StopParams, shardId, kind, reason, error);

struct ZoneRunRow {
  std::string zone;
  std::string reason;
  std::string error;
  std::int64_t at = 0;
};
TESSERA_FIELDS(ZoneRunRow, zone, reason, error, at);

tessera::Result<std::string> OnZoneStop(const tc::Invocation& call) {
  tessera::Result<StopParams> p = call.params<StopParams>();
  if (!p.ok()) return tessera::Error(p.error());
  if (p->shardId.empty()) return tessera::Error("BAD_REQUEST: no shardId");
  const ZoneRunRow run{p->shardId, p->reason.empty() ? "unknown" : p->reason,
                       p->error.value_or(""), tc::now_ms()};
  tc::Reply row = tc::data::insert("ZoneRun", tc::to_json(run));
  if (!row.ok())
    return tessera::Error(Failed("data.insert ZoneRun", row).message());
  tc::log_info("zone " + p->shardId + " stopped: " + run.reason);
  return std::string("{}");
}

tessera::Status Init() { return {}; }
tessera::Status Tick(std::uint32_t) { return {}; }

tessera::Result<std::string> Invoke(const tc::Invocation& call) {
  if (call.export_name == "joinZone") return JoinZone(call);
  if (call.export_name == "grantItem") return GrantItem(call);
  if (call.export_name == "gmHeal") return GmHeal(call);
  if (call.export_name == "onZoneStop") return OnZoneStop(call);
  return tessera::Error("zone-fns has no export " + call.export_name);
}

}  // namespace

TESSERA_COMPUTE_MODULE(Init, Tick, Invoke);
