// The engine and the app's data: which calls run in a transaction
// (NeedsTxn, BeginScope), what waits for a commit (Deferred, RunEffects),
// the data events of committed changes (DispatchChanges, AfterCommit,
// OnDataChanges), and functions (ResolveFunction; InvokeInTxn is in
// engine_invoke.cc).
#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <utility>

#include "compute/engine_internal.h"
#include "compute/flow_id.h"
#include "tessera/compute_abi.h"

namespace tessera::compute {

void Deferred::Effects::Append(Effects&& other) {
  for (auto& s : other.sends) sends.push_back(std::move(s));
  for (auto& p : other.publishes) publishes.push_back(std::move(p));
  for (auto& e : other.events) events.push_back(std::move(e));
  other.sends.clear();
  other.publishes.clear();
  other.events.clear();
}

Deferred::Deferred() : effects_(std::make_unique<Effects>()) {}
Deferred::~Deferred() = default;
Deferred::Deferred(Deferred&&) noexcept = default;
Deferred& Deferred::operator=(Deferred&&) noexcept = default;
bool Deferred::empty() const {
  return effects_ == nullptr || effects_->empty();
}
void Deferred::Append(Deferred&& other) {
  if (other.effects_ == nullptr) return;
  if (effects_ == nullptr) {
    effects_ = std::move(other.effects_);
    return;
  }
  effects_->Append(std::move(*other.effects_));
}

namespace engine_internal {
namespace {

using nlohmann::json;

std::string Dump(const json& j) {
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

json Parsed(std::string_view text) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  return j.is_discarded() ? json(nullptr) : j;
}

// "module:<name>" -> name; anything else (admin, shard:<id>) -> "".
std::string SourceModule(std::string_view origin) {
  constexpr std::string_view kPrefix = "module:";
  if (origin.substr(0, kPrefix.size()) != kPrefix) return "";
  return std::string(origin.substr(kPrefix.size()));
}

EmittedEvent DataEvent(const char* on_event, const data::ChangeEvent& c,
                       std::string_view flow_id, int depth) {
  EmittedEvent e;
  e.on_event = on_event;
  e.name = on_event;
  e.entity_type = c.type;
  e.flow_id = std::string(flow_id);
  e.depth = depth;
  return e;
}

}  // namespace

bool Core::NeedsTxn(ModuleSlot& slot, const Policy& policy) {
  if (options.data == nullptr) return false;
  if (slot.loaded_data.load()) return true;
  int64_t active = 0;
  {
    std::lock_guard<std::mutex> lock(slot.mu);
    active = slot.record.active_version;
  }
  if (active == 0) return false;
  Result<std::shared_ptr<const wasm::CompiledModule>> module =
      Compiled(slot, active, policy.max_memory_mb);
  return module.ok() && ImportsData(**module);
}

Status Core::BeginScope(DataScope* scope, int64_t wait_ms) {
  Result<std::unique_ptr<data::DataTxn>> txn =
      options.data->Begin(data::TxnMode::kWrite, wait_ms);
  if (!txn.ok()) {
    const StatusCode code = txn.status().code() == StatusCode::kIo
                                ? StatusCode::kIo
                                : StatusCode::kUnavailable;
    return Status(code, "the app's data: " + txn.status().message());
  }
  scope->owned = std::move(txn).value();
  scope->txn = scope->owned.get();
  return Status::Ok();
}

void Core::WarnModule(int64_t module_id, std::string_view module,
                      std::string_view text, TriggerSource source,
                      std::string_view flow_id) {
  LogRecord log;
  log.module_id = module_id;
  log.ts_ms = wall->UnixNowMs();
  log.level = compute_abi::kLogWarn;
  log.message = std::string(text);
  log.source = source;
  log.flow_id = std::string(flow_id);
  if (options.forward_log) {
    options.forward_log(module, compute_abi::kLogWarn, text);
  }
  std::vector<LogRecord> logs;
  logs.push_back(std::move(log));
  recorder.AddLogs(std::move(logs));
}

void Core::RunEffects(Deferred::Effects fx) {
  for (const Deferred::Effects::Send& s : fx.sends) {
    Status st = options.shards != nullptr
                    ? options.shards->Send(s.shard, s.input)
                    : Status(StatusCode::kUnavailable, "no shards");
    if (!st.ok()) {
      WarnModule(s.module_id, s.module,
                 "shards.send to \"" + s.shard +
                     "\" after the commit failed: " + st.message(),
                 TriggerSource::kInvoke, s.flow_id);
    }
  }
  for (const Deferred::Effects::Publish& p : fx.publishes) {
    Status st = options.shards != nullptr
                    ? options.shards->Publish(p.target, p.topic, p.data)
                    : Status(StatusCode::kUnavailable, "no shards");
    if (!st.ok()) {
      WarnModule(p.module_id, p.module,
                 "shards.publish to \"" + p.target +
                     "\" after the commit failed: " + st.message(),
                 TriggerSource::kInvoke, p.flow_id);
    }
  }
  // Events in order, grouped by consecutive source module.
  size_t i = 0;
  while (i < fx.events.size()) {
    const std::string source = fx.events[i].first;
    std::vector<EmittedEvent> batch;
    while (i < fx.events.size() && fx.events[i].first == source) {
      batch.push_back(std::move(fx.events[i].second));
      ++i;
    }
    Dispatch(source, std::move(batch));
  }
}

void Core::DispatchChanges(const std::vector<data::ChangeEvent>& changes,
                           int depth, std::string_view flow_id) {
  if (changes.empty() || data_triggers.load(std::memory_order_relaxed) == 0) {
    return;
  }
  const std::string flow =
      IsValidFlowId(flow_id) ? std::string(flow_id) : NewFlowId();
  // Grouped by the module that made them (its name is the events'
  // sourceModule).
  std::map<std::string, std::vector<EmittedEvent>> by_source;
  for (const data::ChangeEvent& c : changes) {
    const std::string source = SourceModule(c.origin);
    std::vector<EmittedEvent>& out = by_source[source];
    if (c.op == data::ChangeOp::kUpdated) {
      for (const data::FieldChange& f : c.fields) {
        EmittedEvent e = DataEvent("field_changed", c, flow, depth);
        e.field_name = f.field;
        e.payload = Dump({{"type", c.type},
                          {"id", c.id},
                          {"field", f.field},
                          {"oldValue", Parsed(f.old_json)},
                          {"newValue", Parsed(f.new_json)},
                          {"origin", c.origin}});
        out.push_back(std::move(e));
      }
      continue;
    }
    EmittedEvent e = DataEvent(
        c.op == data::ChangeOp::kCreated ? "row_created" : "row_deleted", c,
        flow, depth);
    e.payload = Dump({{"type", c.type},
                      {"id", c.id},
                      {"row", Parsed(c.row_json)},
                      {"origin", c.origin}});
    out.push_back(std::move(e));
  }
  for (auto& [source, events] : by_source) {
    if (depth > static_cast<int>(compute_abi::kMaxEventDepth)) {
      // A cascade of data events (a handler's writes raising the events
      // that run it again) stops at the depth limit.
      if (std::shared_ptr<ModuleSlot> slot = Find(source)) {
        WarnModule(slot->id, source,
                   std::to_string(events.size()) +
                       " data events not raised: the cascade is at the "
                       "event depth limit (" +
                       std::to_string(compute_abi::kMaxEventDepth) + ")",
                   TriggerSource::kEvent, flow);
      }
      continue;
    }
    Dispatch(source, std::move(events));
  }
}

}  // namespace engine_internal

Result<FunctionRef> ComputeEngine::ResolveFunction(
    std::string_view function) const {
  const auto& e = *impl_;
  auto valid_char = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
  };
  if (function.empty() || function.size() > 257 ||
      !std::all_of(function.begin(), function.end(), valid_char)) {
    return InvalidArgument(
        "BAD_REQUEST: a function is \"module.export\" or an export name "
        "(1..257 of letters, digits, '_', '-' and '.')");
  }
  auto has_export = [](const engine_internal::ModuleSlot& slot,
                       std::string_view export_name) {
    std::lock_guard<std::mutex> lock(slot.mu);
    for (const TriggerRecord& t : slot.triggers) {
      if (t.type == TriggerType::kInvoke && t.export_name == export_name) {
        return true;
      }
    }
    return false;
  };
  // "module.export": module names have no '.', so the first one splits.
  if (const size_t dot = function.find('.'); dot != std::string_view::npos) {
    const std::string_view module = function.substr(0, dot);
    const std::string_view export_name = function.substr(dot + 1);
    if (std::shared_ptr<engine_internal::ModuleSlot> slot = e.Find(module)) {
      if (!export_name.empty() && has_export(*slot, export_name)) {
        return FunctionRef{std::string(module), std::string(export_name)};
      }
      return NotFound("FUNCTION_NOT_FOUND: module \"" + std::string(module) +
                      "\" has no invoke trigger for export \"" +
                      std::string(export_name) + "\"");
    }
  }
  std::vector<std::string> modules;
  for (const auto& slot : e.AllSlots()) {
    if (has_export(*slot, function)) modules.push_back(slot->name);
  }
  if (modules.size() == 1) {
    return FunctionRef{modules.front(), std::string(function)};
  }
  if (modules.empty()) {
    return NotFound(
        "FUNCTION_NOT_FOUND: no module has an invoke trigger for "
        "\"" +
        std::string(function) + "\"");
  }
  std::string names;
  for (const std::string& m : modules) {
    names += (names.empty() ? "" : ", ") + m;
  }
  return InvalidArgument("BAD_REQUEST: function \"" + std::string(function) +
                         "\" is ambiguous: modules " + names +
                         " have an invoke trigger for it; name it "
                         "\"module.export\"");
}

void ComputeEngine::AfterCommit(Deferred deferred,
                                const std::vector<data::ChangeEvent>& changes,
                                std::string_view flow_id) {
  if (deferred.effects_ != nullptr) {
    impl_->RunEffects(std::move(*deferred.effects_));
  }
  impl_->DispatchChanges(changes, 1, flow_id);
}

void ComputeEngine::OnDataChanges(const std::vector<data::ChangeEvent>& changes,
                                  std::string_view flow_id) {
  impl_->DispatchChanges(changes, 1, flow_id);
}

}  // namespace tessera::compute
