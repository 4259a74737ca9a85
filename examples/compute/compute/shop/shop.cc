// The shop: a callable compute module (C++, tessera/compute.h). Its invoke
// trigger publishes `buy` with a typed contract (examples/compute/
// tessera.json): `amount` (int, required) items of `item` (string,
// default "seeds") are paid for with the gold kept in the module's state
// blob, and the buyer gets a NOTIFY on channel player:<callerUserId>.
//
//   buy      {"amount": 3, "item": "plank"}
//            -> {"item":"plank","amount":3,"cost":15,"gold":85,"owned":3}
//   balance  {} -> {"gold":85,"inventory":{"plank":3}}
//
// The state blob is JSON {"gold": int, "inventory": {item: count}}; a shop
// without one starts with kStartingGold (seeds cost 2, planks 5, lanterns
// 20).
//
//   tessera compute invoke shop buy '{"amount": 3, "item": "plank"}'
//
// The manifest deploys this directory with "source": "compute/shop"; the
// server compiles its *.cc files with the C++ SDK's recipe, unchanged
// (sdk/cpp/BUILD.md, ABI in docs/compute-abi.md). The directory holds
// sources only: a deployed C++ module may contain nothing but .cc and .h
// files. The repository's build compiles it too (compute_test_guest_shop,
// exercised by compute_instance_test).
#include <tessera/compute.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace {

namespace tc = tessera::compute;

constexpr std::int64_t kStartingGold = 100;
const std::map<std::string, std::int64_t>& Prices() {
  static const auto* prices = new std::map<std::string, std::int64_t>{
      {"seeds", 2}, {"plank", 5}, {"lantern", 20}};
  return *prices;
}

struct Shop {
  std::int64_t gold = kStartingGold;
  std::map<std::string, std::int64_t> inventory;
};
TESSERA_FIELDS(Shop, gold, inventory);

struct BuyParams {
  std::int64_t amount = 0;
  std::string item = "seeds";
};
TESSERA_FIELDS(BuyParams, amount, item);

struct Receipt {
  std::string item;
  std::int64_t amount = 0;
  std::int64_t cost = 0;
  std::int64_t gold = 0;
  std::int64_t owned = 0;
};
TESSERA_FIELDS(Receipt, item, amount, cost, gold, owned);

tessera::Result<Shop> Load() {
  Shop shop;
  std::optional<std::string> blob = tc::state_get();
  if (!blob) return shop;
  tessera::Status st = tessera::decode(tessera::abi::kCodecJson, *blob, shop);
  if (!st.ok())
    return tessera::Error("the shop's state is corrupt: " + st.message());
  return shop;
}

tessera::Result<std::string> Buy(const tc::Invocation& call) {
  tessera::Result<BuyParams> p = call.params<BuyParams>();
  if (!p.ok()) return tessera::Error(p.error());
  auto price = Prices().find(p->item);
  if (price == Prices().end()) {
    return tessera::Error("the shop sells no " + p->item);
  }
  if (p->amount <= 0 || p->amount > 1000) {
    return tessera::Error("amount must be 1..1000, got " +
                          std::to_string(p->amount));
  }
  tessera::Result<Shop> shop = Load();
  if (!shop.ok()) return tessera::Error(shop.error());
  const std::int64_t cost = p->amount * price->second;
  if (cost > shop->gold) {
    return tessera::Error("not enough gold: " + std::to_string(cost) +
                          " needed, " + std::to_string(shop->gold) + " left");
  }
  shop->gold -= cost;
  std::int64_t& owned = shop->inventory[p->item];
  owned += p->amount;
  tc::HostStatus saved = tc::state_set(tc::to_json(*shop));
  if (!saved.ok()) {
    // stale_state: another instance wrote the blob since we read it.
    return tessera::Error("the purchase was not saved (" + saved.error_code() +
                          "): try again");
  }
  const Receipt receipt{p->item, p->amount, cost, shop->gold, owned};
  const std::string text = tc::to_json(receipt);
  const std::string channel = call.caller_user_id.empty()
                                  ? std::string("all")
                                  : "player:" + call.caller_user_id;
  tc::HostStatus sent = tc::emit_channel(channel, text);
  if (!sent.ok()) {
    // The purchase stands; the notification is best effort.
    tc::log_warn("no NOTIFY for the purchase: " + sent.error_code() + ": " +
                 sent.message());
  }
  tc::log_info("sold " + std::to_string(p->amount) + " " + p->item + " for " +
               std::to_string(cost) + " gold");
  return text;
}

tessera::Status Init() { return {}; }
tessera::Status Tick(std::uint32_t) { return {}; }

tessera::Result<std::string> Invoke(const tc::Invocation& call) {
  if (call.export_name == "buy") return Buy(call);
  if (call.export_name == "balance") {
    tessera::Result<Shop> shop = Load();
    if (!shop.ok()) return tessera::Error(shop.error());
    return tc::to_json(*shop);
  }
  return tessera::Error("the shop has no export " + call.export_name);
}

}  // namespace

TESSERA_COMPUTE_MODULE(Init, Tick, Invoke);
