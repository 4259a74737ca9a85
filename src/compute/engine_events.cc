// Compute events and data events: dispatch to the modules whose event
// triggers match (on_event equal; compute_event: event_name equal or
// empty; data events: the entityType / fieldName / functionName filters
// set equal, the most specific trigger winning), debounce
// coalescing per trigger (the first event opens a window of debounceMs; the
// delivery at its end carries the last event and "coalesced": N), the depth
// carried along a cascade (a run at kMaxEventDepth cannot emit: kErrDepth,
// engine_run.cc), and delivery on the module's task: on its loaded instance,
// or a short-lived one when it is not loaded.
#include <algorithm>
#include <nlohmann/json.hpp>
#include <utility>

#include "compute/engine_internal.h"
#include "compute/flow_id.h"

namespace tessera::compute::engine_internal {
namespace {

// Events waiting for one module at most (a runaway emitter cannot grow
// the queue without bound); more are dropped with a warning in its logs.
constexpr size_t kMaxPendingEvents = 1024;

// The trigger of `slot` that takes event `e`: of its onEvent, every filter
// it sets matching, the one setting the most filters (compute_event: one
// naming it, else one for any name). Under slot.mu.
const TriggerRecord* MatchTrigger(const ModuleSlot& slot,
                                  const EmittedEvent& e) {
  const TriggerRecord* best = nullptr;
  int best_score = -1;
  for (const TriggerRecord& t : slot.triggers) {
    if (t.type != TriggerType::kEvent || t.on_event != e.on_event) continue;
    int score = 0;
    auto filter = [&score](const std::string& want, const std::string& have) {
      if (want.empty()) return true;
      ++score;
      return want == have;
    };
    if (!filter(t.event_name, e.on_event == "compute_event" ? e.name : "") ||
        !filter(t.entity_type, e.entity_type) ||
        !filter(t.field_name, e.field_name)) {
      continue;
    }
    if (!t.function_name.empty()) {
      ++score;
      if (t.function_name != e.function && t.function_name != e.export_name) {
        continue;
      }
    }
    if (score > best_score) {
      best = &t;
      best_score = score;
    }
  }
  return best;
}

std::string EventInput(const PendingEvent& e) {
  nlohmann::json input = {{"event", e.on_event}, {"name", e.name}};
  nlohmann::json payload =
      nlohmann::json::parse(e.payload, nullptr, /*allow_exceptions=*/false);
  if (!e.payload.empty() && !payload.is_discarded()) {
    input["payload"] = std::move(payload);
  } else {
    input["payload"] = nullptr;
    if (!e.payload.empty()) input["payloadBase64"] = Base64Encode(e.payload);
  }
  input["sourceModule"] = e.source_module;
  input["flowId"] = e.flow_id;
  input["depth"] = e.depth;
  if (e.coalesced > 1) input["coalesced"] = e.coalesced;
  return input.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

void Core::Dispatch(std::string_view source_module,
                    std::vector<EmittedEvent> events) {
  if (events.empty()) return;
  const Policy policy = CurrentPolicy();
  if (!policy.enabled) return;  // the kill switch: nothing runs
  const int64_t now_us = clock->NowUs();
  std::vector<LogRecord> dropped;
  for (const auto& slot : AllSlots()) {
    bool poke = false;
    {
      std::lock_guard<std::mutex> lock(slot->mu);
      if (slot->deleted || !slot->record.enabled ||
          slot->record.active_version == 0) {
        continue;
      }
      for (const EmittedEvent& e : events) {
        const TriggerRecord* t = MatchTrigger(*slot, e);
        if (t == nullptr) continue;
        if (t->debounce_ms > 0) {
          auto it = std::find_if(
              slot->events.begin(), slot->events.end(),
              [&](const PendingEvent& p) { return p.trigger_id == t->id; });
          if (it != slot->events.end()) {
            // Folded into the window already open: the last one wins.
            it->on_event = e.on_event;
            it->name = e.name;
            it->payload = e.payload;
            it->source_module = std::string(source_module);
            it->flow_id = e.flow_id;
            it->depth = e.depth;
            ++it->coalesced;
            continue;
          }
        }
        if (slot->events.size() >= kMaxPendingEvents) {
          LogRecord warn;
          warn.module_id = slot->id;
          warn.ts_ms = wall->UnixNowMs();
          warn.level = 2;
          warn.message = "event \"" + e.name +
                         "\" dropped: " + std::to_string(kMaxPendingEvents) +
                         " events already wait for this module";
          warn.source = TriggerSource::kEvent;
          warn.flow_id = e.flow_id;
          dropped.push_back(std::move(warn));
          continue;
        }
        PendingEvent p;
        p.trigger_id = t->id;
        p.on_event = e.on_event;
        p.name = e.name;
        p.payload = e.payload;
        p.source_module = std::string(source_module);
        p.flow_id = e.flow_id;
        p.depth = e.depth;
        p.debounced = t->debounce_ms > 0;
        p.due_us = now_us + t->debounce_ms * 1000;
        slot->events.push_back(std::move(p));
        poke = true;
      }
    }
    if (poke) Poke(*slot);
  }
  if (!dropped.empty()) recorder.AddLogs(std::move(dropped));
}

std::optional<int64_t> Core::DeliverEvents(ModuleSlot& slot, int64_t now_us,
                                           const Policy& policy, bool data) {
  std::vector<PendingEvent> due;
  std::optional<int64_t> next;
  {
    std::lock_guard<std::mutex> lock(slot.mu);
    const bool runnable = policy.enabled && slot.record.enabled &&
                          slot.record.active_version != 0 && !slot.deleted;
    for (auto it = slot.events.begin(); it != slot.events.end();) {
      if (!runnable) {
        it = slot.events.erase(it);  // disabled or switched off: dropped
      } else if (it->due_us <= now_us) {
        due.push_back(std::move(*it));
        it = slot.events.erase(it);
      } else {
        next = next ? std::min(*next, it->due_us) : it->due_us;
        ++it;
      }
    }
  }
  // Each event is one entry call: its transaction (a module importing
  // data), then the run lock.
  for (PendingEvent& e : due) {
    RunRequest request;
    request.source = TriggerSource::kEvent;
    request.entry = "event:" + e.name;
    request.flow_id = e.flow_id.empty() ? NewFlowId() : e.flow_id;
    request.depth = e.depth;
    request.input = EventInput(e);
    DataScope scope;
    if (data) {
      Status begun = BeginScope(&scope, kTaskTxnWaitMs);
      if (!begun.ok()) {
        WarnModule(slot.id, slot.name,
                   "event \"" + e.name + "\" dropped: " + begun.message(),
                   TriggerSource::kEvent, request.flow_id);
        continue;
      }
    }
    std::lock_guard<std::mutex> run(slot.run_mu);
    (void)CallLocked(slot, std::move(request), policy, data ? &scope : nullptr);
  }
  return next;
}

}  // namespace tessera::compute::engine_internal

namespace tessera::compute {

void ComputeEngine::RaiseEvent(std::string_view on_event, std::string_view name,
                               std::string_view payload_json,
                               std::string_view flow_id) {
  // Data events come from commits (AfterCommit, OnDataChanges).
  if (on_event != "compute_event" || name.empty()) return;
  engine_internal::EmittedEvent e;
  e.name = std::string(name);
  e.payload = std::string(payload_json);
  e.flow_id = IsValidFlowId(flow_id) ? std::string(flow_id) : NewFlowId();
  e.depth = 1;
  std::vector<engine_internal::EmittedEvent> events;
  events.push_back(std::move(e));
  impl_->Dispatch("", std::move(events));
}

}  // namespace tessera::compute
