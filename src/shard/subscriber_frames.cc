#include "shard/subscriber_frames.h"

#include <algorithm>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "interest/group.h"
#include "replication/config.h"
#include "tessera/abi.h"

namespace tessera::shard {

Status SubscriberFrames::Abi(GuestShard& guest, const Status& status) {
  return guest.FailAbi(status.message());
}

Result<std::unique_ptr<SubscriberFrames>> SubscriberFrames::Create(
    GuestShard& guest) {
  std::unique_ptr<SubscriberFrames> views(new SubscriberFrames());
  if (guest.has_hook(Hook::kInterestConfig)) {
    Result<HookOutput> out = guest.CallHook(Hook::kInterestConfig);
    if (!out.ok()) return out.status();
    if (out->code == abi::kOk) {
      Result<GuestInterestConfig> config = ParseInterestConfig(out->bytes);
      if (!config.ok()) return Abi(guest, config.status());
      if (!guest.has_hook(Hook::kInterestAreas)) {
        return guest.FailAbi(
            "interest is on (tessera_interest_config) but the module "
            "exports no tessera_interest_areas");
      }
      interest::Config grid;
      grid.cell_size = static_cast<float>(config->cell_size);
      grid.margin = static_cast<float>(config->margin);
      Result<interest::InterestManager> manager =
          interest::InterestManager::Create(grid);
      if (!manager.ok()) return Abi(guest, manager.status());
      views->manager_.emplace(std::move(manager).value());
      views->shared_snapshots_ = config->shared_snapshots;
    }
  }
  if (guest.has_hook(Hook::kReplicationConfig)) {
    Result<HookOutput> out = guest.CallHook(Hook::kReplicationConfig);
    if (!out.ok()) return out.status();
    if (out->code == abi::kOk) {
      if (!guest.has_hook(Hook::kReplicated)) {
        return guest.FailAbi(
            "replication is on (tessera_replication_config) but the module "
            "exports no tessera_replicated");
      }
      Result<replication::Config> config = replication::ParseConfig(out->bytes);
      if (!config.ok()) {
        return guest.FailAbi("tessera_replication_config output: " +
                             config.status().message());
      }
      views->mirror_.emplace(*config);
    }
  }
  Result<std::optional<LagCompensationConfig>> lag =
      ReadLagCompensation(guest, views->replication());
  if (!lag.ok()) return lag.status();
  if (lag->has_value()) {
    views->lag_ = **lag;
    views->history_.emplace(views->lag_->history_ticks);
    views->tick_rate_ = guest.kind().tick_rate;
  }
  if (!views->interest() && !views->replication()) {
    return std::unique_ptr<SubscriberFrames>();
  }
  if (views->interest() && !views->replication() &&
      !guest.has_hook(Hook::kEntities)) {
    return guest.FailAbi(
        "interest is on but the module exports no tessera_entities (and "
        "has no replicated store to take positions from)");
  }
  views->wants_snapshot_ =
      views->replication() || !guest.has_hook(Hook::kSnapshotVisible);
  views->share_streams_ = views->replication() && !views->interest() &&
                          (views->mirror_->config().max_bytes_per_tick == 0 ||
                           !guest.has_hook(Hook::kInterestAreas));
  return views;
}

void SubscriberFrames::PrepareRewinds(std::span<PendingInput> inputs,
                                      uint64_t tick) const {
  if (!history_) return;
  // A subscriber's inputs of one tick usually share a view tick and round
  // trip: draw and encode that rewind once, copy it to the others.
  struct Drawn {
    double view_tick;
    std::optional<int64_t> rtt_us;
    const std::string* rewind;
  };
  std::unordered_map<std::string_view, std::vector<Drawn>> drawn;
  for (PendingInput& in : inputs) {
    if (!in.timing.view_tick) continue;
    std::vector<Drawn>& mine = drawn[in.subscriber];
    auto same = std::find_if(mine.begin(), mine.end(), [&](const Drawn& d) {
      return d.view_tick == *in.timing.view_tick &&
             d.rtt_us == in.timing.rtt_us;
    });
    if (same != mine.end()) {
      in.rewind = *same->rewind;
      continue;
    }
    std::optional<replication::DrawnPicture> picture =
        history_->Draw(in.subscriber, *in.timing.view_tick,
                       MaxBackTicks(*lag_, in.timing.rtt_us, tick_rate_));
    if (!picture) {
      picture.emplace();
      picture->view_tick = static_cast<double>(tick);
      picture->now_tick = tick;
    }
    in.rewind = EncodeRewind(*picture);
    mine.push_back(Drawn{*in.timing.view_tick, in.timing.rtt_us, &*in.rewind});
  }
}

std::shared_ptr<const std::string> SubscriberFrames::ShareSnapshot(
    std::string bytes) {
  if (!replication()) {
    if (bytes.empty()) return nullptr;
    return std::make_shared<const std::string>(std::move(bytes));
  }
  if (last_snapshot_ == nullptr || *last_snapshot_ != bytes) {
    last_snapshot_ = std::make_shared<const std::string>(std::move(bytes));
  }
  return last_snapshot_;
}

Status SubscriberFrames::Compute(
    GuestShard& guest, std::span<const std::string> subscribers,
    const std::set<std::string, std::less<>>& restart, uint64_t tick,
    ViewFrame& frame) {
  frame.tick = tick;
  frame.replication = replication();
  if (replication()) {
    // Every tick, subscribers or not: the guest's change log must drain.
    Result<HookOutput> out = guest.CallHook(Hook::kReplicated);
    if (!out.ok()) return out.status();
    Status applied = mirror_->Apply(out->bytes, tick);
    if (!applied.ok()) {
      return guest.FailAbi("tessera_replicated output: " + applied.message());
    }
    if (history_) history_->RecordWorld(*mirror_, tick);
  }
  // Areas: for interest, and to rank updates under the budget.
  areas_.assign(subscribers.size(), std::nullopt);
  if (!subscribers.empty() && guest.has_hook(Hook::kInterestAreas)) {
    Result<HookOutput> out =
        guest.CallHook(Hook::kInterestAreas, EncodeSubscriberList(subscribers));
    if (!out.ok()) return out.status();
    Status parsed = ParseAreas(out->bytes, subscribers.size(), areas_);
    if (!parsed.ok()) return Abi(guest, parsed);
  }
  KeepCentres(guest, subscribers);
  if (interest()) TESSERA_RETURN_IF_ERROR(ComputeInterest(guest, subscribers));
  if (replication()) return EncodeEntities(subscribers, restart, tick, frame);
  return SnapshotsVisible(guest, subscribers, frame);
}

void SubscriberFrames::KeepCentres(GuestShard& guest,
                                   std::span<const std::string> subscribers) {
  if (!guest.has_hook(Hook::kInterestAreas)) {
    centres_ = nullptr;
    return;
  }
  auto centres = std::make_shared<AreaCentres>();
  for (size_t i = 0; i < subscribers.size(); ++i) {
    if (areas_[i]) {
      centres->push_back({subscribers[i], areas_[i]->x, areas_[i]->y});
    }
  }
  centres_ = std::move(centres);
}

Status SubscriberFrames::ComputeInterest(
    GuestShard& guest, std::span<const std::string> subscribers) {
  entities_.clear();
  if (guest.has_hook(Hook::kEntities)) {
    Result<HookOutput> out = guest.CallHook(Hook::kEntities);
    if (!out.ok()) return out.status();
    Status parsed = ParseEntities(out->bytes, guest_entities_);
    if (!parsed.ok()) return Abi(guest, parsed);
    entities_.reserve(guest_entities_.size());
    for (const GuestEntity& e : guest_entities_) {
      entities_.push_back({e.id, e.generation, e.x, e.y});
    }
  } else {
    const replication::Mirror& m = *mirror_;
    entities_.reserve(m.size());
    for (size_t i = 0; i < m.size(); ++i) {
      const replication::MirrorEntity& e = m.entity_at(i);
      const replication::GroundPoint g = m.Ground(e);
      entities_.push_back({e.id, static_cast<uint32_t>(e.incarnation),
                           static_cast<float>(g.x), static_cast<float>(g.y)});
    }
  }
  subscribers_.resize(subscribers.size());
  for (size_t i = 0; i < subscribers.size(); ++i) {
    subscribers_[i].id = subscribers[i];
    subscribers_[i].area.reset();
    if (areas_[i]) {
      subscribers_[i].area =
          interest::Area{areas_[i]->x, areas_[i]->y, areas_[i]->radius};
    }
  }
  interest::Filter filter = [&](std::span<const interest::Subscriber> subs,
                                interest::FilterBatch& batch) -> Status {
    std::vector<std::span<const uint64_t>> candidates(subs.size());
    for (size_t i = 0; i < subs.size(); ++i)
      candidates[i] = batch.candidates(i);
    Result<HookOutput> out = guest.CallHook(
        Hook::kFilter, EncodeFilterRequest(subscribers, candidates));
    if (!out.ok()) return out.status();
    std::span<uint8_t> bits = batch.all_keep_bits();
    if (out->bytes.size() != bits.size()) {
      return guest.FailAbi("tessera_filter output: expected " +
                           std::to_string(bits.size()) + " bytes, got " +
                           std::to_string(out->bytes.size()));
    }
    std::copy(out->bytes.begin(), out->bytes.end(), bits.begin());
    return Status::Ok();
  };
  const bool filtered = guest.has_hook(Hook::kFilter) && !subscribers.empty();
  Status updated = manager_->Update(entities_, subscribers_,
                                    filtered ? &filter : nullptr, views_);
  if (!updated.ok()) {
    if (guest.failed()) return updated;  // the filter call failed it
    return Abi(guest, updated);
  }
  return Status::Ok();
}

Status SubscriberFrames::EncodeEntities(
    std::span<const std::string> subscribers,
    const std::set<std::string, std::less<>>& restart, uint64_t tick,
    ViewFrame& frame) {
  // A client starting again from a BASELINE no longer draws what it held.
  if (history_) {
    for (const std::string& name : restart) history_->Forget(name);
  }
  // Forget the streams of subscribers who left (both lists ascending).
  for (auto it = streams_.begin(); it != streams_.end();) {
    if (!std::binary_search(subscribers.begin(), subscribers.end(),
                            it->first)) {
      if (history_) history_->Forget(it->first);
      it = streams_.erase(it);
    } else {
      ++it;
    }
  }
  std::shared_ptr<const std::string> shared =
      EncodeShared(subscribers, restart, tick);
  frame.views.clear();
  frame.views.reserve(subscribers.size());
  // The group's members are sorted like `subscribers`: walk them along
  // (a member joining below is behind the walk).
  auto member = shared_members_.begin();
  for (size_t i = 0; i < subscribers.size(); ++i) {
    SubscriberView view;
    view.subscriber = subscribers[i];
    while (member != shared_members_.end() && *member < subscribers[i]) {
      ++member;
    }
    if (member != shared_members_.end() && *member == subscribers[i]) {
      view.entities = shared;
      frame.views.push_back(std::move(view));
      continue;
    }
    auto [it, fresh] = streams_.try_emplace(subscribers[i]);
    replication::SubscriberStream& stream = it->second;
    if (!fresh && restart.contains(subscribers[i])) stream.Reset();
    std::optional<replication::Focus> focus;
    if (areas_[i]) {
      focus = replication::Focus{areas_[i]->x, areas_[i]->y, areas_[i]->radius};
    }
    std::span<const uint64_t> visible =
        interest() ? std::span<const uint64_t>(views_[i].visible)
                   : mirror_->ids();
    stream.Encode(*mirror_, visible, focus, tick, payload_);
    if (history_) history_->RecordSent(subscribers[i], stream, tick);
    view.entities = std::make_shared<const std::string>(payload_);
    view.baseline = stream.last().baseline;
    frame.views.push_back(std::move(view));
    if (share_streams_) MaybeJoinShared(it);
  }
  return Status::Ok();
}

std::shared_ptr<const std::string> SubscriberFrames::EncodeShared(
    std::span<const std::string> subscribers,
    const std::set<std::string, std::less<>>& restart, uint64_t tick) {
  std::erase_if(shared_members_, [&](const std::string& name) {
    if (std::binary_search(subscribers.begin(), subscribers.end(), name)) {
      return restart.contains(name);  // (forgotten with every restart)
    }
    if (history_) history_->Forget(name);
    return true;
  });
  if (shared_members_.empty()) {
    shared_.reset();
    return nullptr;
  }
  // Focus-free: sharing is on only when no budget ranks by distance.
  shared_->Encode(*mirror_, mirror_->ids(), std::nullopt, tick, payload_);
  if (history_) {
    shared_list_.assign(shared_members_.begin(), shared_members_.end());
    history_->RecordShared(shared_list_, *shared_, tick);
  }
  return std::make_shared<const std::string>(payload_);
}

void SubscriberFrames::MaybeJoinShared(Streams::iterator it) {
  // Nothing deferred: the client holds exactly the mirror's state, and so
  // does the group when its own encode deferred nothing this tick.
  if (it->second.last().deferred != 0) return;
  if (!shared_) {
    shared_.emplace(std::move(it->second));
  } else if (shared_->last().deferred != 0) {
    return;  // (the group always encoded this tick: it has members)
  }
  shared_members_.insert(it->first);
  streams_.erase(it);
}

Status SubscriberFrames::SnapshotsVisible(
    GuestShard& guest, std::span<const std::string> subscribers,
    ViewFrame& frame) {
  frame.views.clear();
  frame.views.resize(subscribers.size());
  for (size_t i = 0; i < subscribers.size(); ++i) {
    frame.views[i].subscriber = subscribers[i];
  }
  if (!guest.has_hook(Hook::kSnapshotVisible)) {
    // Interest only ranks nothing here: everyone gets the shard snapshot.
    for (SubscriberView& v : frame.views) v.snapshot = frame.snapshot;
    return Status::Ok();
  }
  std::vector<std::vector<size_t>> groups;
  if (shared_snapshots_) {
    groups = interest::GroupByVisible(views_);
  } else {
    groups.resize(subscribers.size());
    for (size_t i = 0; i < subscribers.size(); ++i) groups[i] = {i};
  }
  for (const std::vector<size_t>& group : groups) {
    const size_t first = group.front();
    const interest::View& v = views_[first];
    Result<HookOutput> out = guest.CallHook(
        Hook::kSnapshotVisible,
        EncodeViewRequest(subscribers[first], v.visible, v.entered, v.left));
    if (!out.ok()) return out.status();
    auto shared = std::make_shared<const std::string>(std::move(out->bytes));
    for (size_t i : group) frame.views[i].snapshot = shared;
  }
  return Status::Ok();
}

}  // namespace tessera::shard
