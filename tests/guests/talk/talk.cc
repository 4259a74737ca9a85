// Test guest "talk": moves players between shards and sends messages, for
// the host's, the network's and the benches' tests of shards that talk.
// Deterministic.
//   params   {"groups": [str], "refuse": str|nil, "require_claim": str|nil,
//             "refuse_return": bool}
//     refuse         transfer_in refuses non-returning players with this text
//     require_claim  transfer_in refuses non-returning players without this
//                    claim: "missing claim <name>"
//     refuse_return  transfer_in refuses returning players too (a module
//                    bug, for the host's error path): "refusing the return"
//   inputs   {"join": {}}                      adds the sender {n: 0}, from ""
//                                              (a player already here stays)
//            {"step": {}}                      increments the sender's n
//            {"go": {"to": str}}               asks to move the sender to `to`
//            {"send": {"kind": "shard"|"group"|"all", "to": str,
//                      "topic": str, "data": str}}
//            {"burst": {"kind", "to", "count": uint, "bytes": uint}}
//                                              queues `count` messages, topic
//                                              "b", data "i:<index>" padded
//                                              with '.' to exactly `bytes`
//   step/go from a subscriber not here: "not here"; an unknown kind:
//   "unknown kind <kind>".
//   snapshot {"players": {sid: {"n", "from"}}, "inbox": [[from, topic,
//             data], ...] (the last 256 received), "received": uint,
//             "ticks": uint}; `from`: the shard a player came from, "" when
//             it joined here.
//   transfer state: MessagePack {"n"}. save/restore: the whole state.
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "tessera/shard_sdk.h"

struct Params {
  std::vector<std::string> groups;
  std::optional<std::string> refuse;
  std::optional<std::string> require_claim;
  bool refuse_return = false;
};
TESSERA_FIELDS(Params, groups, refuse, require_claim, refuse_return);

struct Join {};
TESSERA_FIELDS(Join);
struct Step {};
TESSERA_FIELDS(Step);
struct Go {
  std::string to;
};
TESSERA_FIELDS(Go, to);
struct Send {
  std::string kind;
  std::string to;
  std::string topic;
  std::string data;
};
TESSERA_FIELDS(Send, kind, to, topic, data);
struct Burst {
  std::string kind;
  std::string to;
  std::uint32_t count = 0;
  std::uint32_t bytes = 0;
};
TESSERA_FIELDS(Burst, kind, to, count, bytes);
using Input = std::variant<Join, Step, Go, Send, Burst>;

struct Player {
  std::int64_t n = 0;
  std::string from;
};
TESSERA_FIELDS(Player, n, from);

struct Moving {
  std::int64_t n = 0;
};
TESSERA_FIELDS(Moving, n);

struct Snapshot {
  std::map<std::string, Player> players;
  std::vector<std::vector<std::string>> inbox;
  std::uint64_t received = 0;
  std::uint64_t ticks = 0;
};
TESSERA_FIELDS(Snapshot, players, inbox, received, ticks);

// Saved: the snapshot's state and where each player that left came from
// (restored to it if it comes back).
struct Saved {
  Snapshot state;
  std::map<std::string, std::string> left_from;
};
TESSERA_FIELDS(Saved, state, left_from);

constexpr std::size_t kInboxKept = 256;

std::optional<tessera::Target> TargetOf(std::string_view kind,
                                        const std::string& to) {
  if (kind == "shard") return tessera::Target::shard(to);
  if (kind == "group") return tessera::Target::group(to);
  if (kind == "all") return tessera::Target::all();
  return std::nullopt;
}

class Talk {
 public:
  static tessera::Result<Talk> init(std::string_view, Params params) {
    Talk talk;
    talk.params_ = std::move(params);
    return talk;
  }

  static tessera::Result<Talk> restore(std::string_view, Params params,
                                       Saved saved) {
    Talk talk;
    talk.params_ = std::move(params);
    talk.inbox_.assign(saved.state.inbox.begin(), saved.state.inbox.end());
    saved.state.inbox.clear();
    talk.state_ = std::move(saved.state);
    talk.left_from_ = std::move(saved.left_from);
    return talk;
  }

  tessera::Status apply_input(std::string_view sid_view, Input input) {
    const std::string sid(sid_view);
    if (std::holds_alternative<Join>(input)) {
      state_.players.emplace(sid, Player{});
      return {};
    }
    if (const Send* send = std::get_if<Send>(&input)) {
      std::optional<tessera::Target> to = TargetOf(send->kind, send->to);
      if (!to) return tessera::Error("unknown kind " + send->kind);
      outbox_.push_back({std::move(*to), send->topic, send->data});
      return {};
    }
    if (const Burst* burst = std::get_if<Burst>(&input)) {
      std::optional<tessera::Target> to = TargetOf(burst->kind, burst->to);
      if (!to) return tessera::Error("unknown kind " + burst->kind);
      for (std::uint32_t i = 0; i < burst->count; ++i) {
        std::string data = "i:" + std::to_string(i);
        data.resize(burst->bytes, '.');
        outbox_.push_back({*to, "b", std::move(data)});
      }
      return {};
    }
    auto it = state_.players.find(sid);
    if (it == state_.players.end()) return tessera::Error("not here");
    if (std::holds_alternative<Step>(input)) {
      ++it->second.n;
    } else {
      requests_.push_back({sid, std::get<Go>(input).to});
    }
    return {};
  }

  void tick(double) { ++state_.ticks; }

  Snapshot snapshot() const {
    Snapshot snap = state_;
    snap.inbox.assign(inbox_.begin(), inbox_.end());
    return snap;
  }

  Saved save() const { return Saved{snapshot(), left_from_}; }

  tessera::Result<std::optional<Moving>> transfer_out(std::string_view sid) {
    auto it = state_.players.find(std::string(sid));
    if (it == state_.players.end()) return std::optional<Moving>();
    Moving moving{it->second.n};
    left_from_[it->first] = it->second.from;
    state_.players.erase(it);
    return std::optional<Moving>(moving);
  }

  tessera::Status transfer_in(std::string_view sid, Moving moving,
                              const tessera::Auth& auth, bool returning) {
    if (returning && params_.refuse_return) {
      return tessera::Error("refusing the return");
    }
    if (!returning && params_.refuse) return tessera::Error(*params_.refuse);
    if (!returning && params_.require_claim &&
        !auth.claim(*params_.require_claim)) {
      return tessera::Error("missing claim " + *params_.require_claim);
    }
    Player player;
    player.n = moving.n;
    if (returning) {
      auto left = left_from_.find(std::string(sid));
      if (left != left_from_.end()) {
        player.from = left->second;
        left_from_.erase(left);
      }
    } else {
      player.from = std::string(auth.from_shard());
    }
    state_.players[std::string(sid)] = std::move(player);
    return {};
  }

  std::vector<tessera::TransferRequest> transfer_requests() {
    return std::exchange(requests_, {});
  }

  std::vector<std::string> groups() const { return params_.groups; }

  std::vector<tessera::Outgoing> outbox() { return std::exchange(outbox_, {}); }

  void on_message(std::string_view from, std::string_view topic,
                  std::string_view data) {
    ++state_.received;
    if (inbox_.size() == kInboxKept) inbox_.pop_front();
    inbox_.push_back(
        {std::string(from), std::string(topic), std::string(data)});
  }

 private:
  Params params_;
  Snapshot state_;  // without the inbox, kept in inbox_
  std::deque<std::vector<std::string>> inbox_;
  std::map<std::string, std::string> left_from_;
  std::vector<tessera::TransferRequest> requests_;
  std::vector<tessera::Outgoing> outbox_;
};

TESSERA_SHARD(Talk);
