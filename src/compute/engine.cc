// ComputeEngine: construction, Start/Shutdown and the management
// operations. The rest of the engine is in engine_*.cc (engine_internal.h).
#include "compute/engine.h"

#include <algorithm>
#include <utility>

#include "compute/engine_internal.h"
#include "compute/policy.h"
#include "tessera/compute_abi.h"

namespace tessera::compute {

namespace engine_internal {
namespace {

std::unique_ptr<guest::WorkerPool> OwnPool(const EngineOptions& options,
                                           const Clock* clock) {
  if (options.workers != nullptr) return nullptr;
  guest::WorkerPool::Options pool;
  pool.clock = clock;
  return std::make_unique<guest::WorkerPool>(pool);
}

std::unique_ptr<guest::Watchdog> OwnWatchdog(const EngineOptions& options) {
  if (options.watchdog != nullptr) return nullptr;
  // Real time: maxRunMs is wall-clock time whatever clock drives ticks.
  return std::make_unique<guest::Watchdog>(RealClock::Get());
}

std::string Quote(std::string_view s) { return "\"" + std::string(s) + "\""; }

}  // namespace

Core::Core(EngineOptions opts)
    : options(std::move(opts)),
      store(options.store),
      // Tick deadlines are on the pool's timeline.
      clock(options.clock != nullptr     ? options.clock
            : options.workers != nullptr ? options.workers->clock()
                                         : RealClock::Get()),
      wall(options.wall_clock != nullptr ? options.wall_clock
                                         : RealWallClock::Get()),
      own_pool(OwnPool(options, clock)),
      pool(own_pool ? own_pool.get() : options.workers),
      own_watchdog(OwnWatchdog(options)),
      watchdog(own_watchdog ? own_watchdog.get() : options.watchdog) {
  if (own_watchdog) own_watchdog->Start();
}

Policy Core::CurrentPolicy() const {
  std::lock_guard<std::mutex> lock(mu);
  return policy_value;
}

std::shared_ptr<ModuleSlot> Core::Find(std::string_view name) const {
  std::lock_guard<std::mutex> lock(mu);
  auto it = modules.find(name);
  return it == modules.end() ? nullptr : it->second;
}

Result<std::shared_ptr<ModuleSlot>> Core::Require(std::string_view name) const {
  std::shared_ptr<ModuleSlot> slot = Find(name);
  if (slot == nullptr) return NotFound("no compute module " + Quote(name));
  return slot;
}

std::vector<std::shared_ptr<ModuleSlot>> Core::AllSlots() const {
  std::lock_guard<std::mutex> lock(mu);
  std::vector<std::shared_ptr<ModuleSlot>> out;
  out.reserve(modules.size());
  for (const auto& [name, slot] : modules) out.push_back(slot);
  return out;
}

namespace {

// The parsed contracts of a module's invoke triggers.
std::map<int64_t, std::shared_ptr<const Contract>> ParseContracts(
    const std::vector<TriggerRecord>& triggers) {
  std::map<int64_t, std::shared_ptr<const Contract>> out;
  for (const TriggerRecord& t : triggers) {
    if (t.type != TriggerType::kInvoke || t.contract_json.empty()) continue;
    Result<Contract> contract = ParseContract(t.contract_json);
    // A stored contract was validated on upsert; one that no longer parses
    // refuses every invoke of its export (ValidateParams of a contract
    // with an impossible field would be wrong either way).
    out[t.id] =
        contract.ok() ? std::make_shared<const Contract>(*contract) : nullptr;
    if (!contract.ok()) out.erase(t.id);
  }
  return out;
}

}  // namespace

Status Core::AddSlot(const ModuleRecord& record,
                     std::vector<TriggerRecord> triggers) {
  Policy policy = CurrentPolicy();
  auto slot = std::make_shared<ModuleSlot>(record, policy);
  slot->contracts = ParseContracts(triggers);
  slot->triggers = std::move(triggers);
  slot->task = std::make_shared<ModuleTask>(this, slot);
  {
    std::lock_guard<std::mutex> lock(mu);
    if (shut_down) {
      return Status(StatusCode::kFailedPrecondition,
                    "the compute engine has shut down");
    }
    modules[record.name] = slot;
  }
  CountDataTriggers();
  return pool->Add(slot->task);
}

void Core::CountDataTriggers() {
  int64_t n = 0;
  for (const auto& slot : AllSlots()) {
    std::lock_guard<std::mutex> lock(slot->mu);
    if (slot->deleted) continue;
    for (const TriggerRecord& t : slot->triggers) {
      n += t.type == TriggerType::kEvent && t.on_event != "compute_event";
    }
  }
  data_triggers.store(n);
}

Status Core::RefreshTriggers(ModuleSlot& slot) {
  Result<std::vector<TriggerRecord>> triggers = store->ListTriggers(slot.id);
  if (!triggers.ok()) return triggers.status();
  auto contracts = ParseContracts(*triggers);
  {
    std::lock_guard<std::mutex> lock(slot.mu);
    slot.triggers = std::move(*triggers);
    slot.contracts = std::move(contracts);
  }
  CountDataTriggers();
  Poke(slot);
  return Status::Ok();
}

Status Core::Persist(ModuleSlot& slot) {
  std::lock_guard<std::mutex> persist(slot.persist_mu);
  ModuleRecord copy;
  {
    std::lock_guard<std::mutex> lock(slot.mu);
    if (slot.deleted) return Status::Ok();
    copy = slot.record;
  }
  return store->UpdateModuleState(copy);
}

void Core::Poke(ModuleSlot& slot) {
  if (slot.task) pool->Poke(slot.task);
}

void Core::PokeAll() {
  for (const auto& slot : AllSlots()) Poke(*slot);
}

void Core::OnCompiled(const VersionRecord& version) {
  Apply(version);
  if (options.on_compiled) options.on_compiled(version);
}

void Core::Apply(const VersionRecord& version) {
  std::shared_ptr<ModuleSlot> slot;
  for (const auto& s : AllSlots()) {
    if (s->id == version.module_id) slot = s;
  }
  if (slot == nullptr) return;
  bool enable = false;
  {
    std::lock_guard<std::mutex> lock(slot->mu);
    enable = slot->enable_on_success.erase(version.version_no) > 0;
    if (version.status != CompileStatus::kSucceeded) return;
    if (version.version_no < slot->record.active_version) return;
  }
  // Loads the code here (the compile queue's thread: the loader's C compile
  // takes seconds), not on a worker shared with the shards, also for a
  // disabled module (enabling it picks this version).
  Policy policy = CurrentPolicy();
  (void)Compiled(*slot, version.version_no, policy.max_memory_mb);
  {
    std::lock_guard<std::mutex> lock(slot->mu);
    if (!slot->record.enabled && !enable) return;
  }
  {
    std::lock_guard<std::mutex> lock(slot->mu);
    if (version.version_no < slot->record.active_version) return;
    if (enable && !slot->record.enabled) {
      slot->record.enabled = true;
      slot->circuit.Reset();
      slot->record.circuit = CircuitState::kClosed;
      slot->record.consecutive_failures = 0;
      slot->record.circuit_opened_ms = 0;
      slot->record.last_error.clear();
    }
    slot->record.active_version = version.version_no;
  }
  (void)Persist(*slot);
  Poke(*slot);
}

Snapshot TakeSnapshot(const ModuleSlot& slot) {
  Snapshot snap;
  snap.enabled = slot.record.enabled;
  snap.active_version = slot.record.active_version;
  snap.compiling = !slot.enable_on_success.empty();
  snap.always_on = slot.record.always_on;
  for (const TriggerRecord& t : slot.triggers) {
    if (t.type == TriggerType::kTick) snap.tick_hz = t.tick_hz;
  }
  return snap;
}

ModuleSlot::ModuleSlot(ModuleRecord rec, const Policy& policy)
    : id(rec.id),
      name(rec.name),
      record(std::move(rec)),
      circuit(policy.failure_threshold, policy.cooldown_ms),
      egress(policy.max_egress_msgs_per_min, policy.max_egress_bytes_per_min) {
  circuit.Restore(record.circuit, record.consecutive_failures,
                  record.circuit_opened_ms);
}

}  // namespace engine_internal

using engine_internal::ModuleSlot;

ComputeEngine::ComputeEngine(EngineOptions options)
    : impl_(std::make_unique<Impl>(std::move(options))) {}

ComputeEngine::~ComputeEngine() { Shutdown(); }

Status ComputeEngine::Start() {
  Impl& e = *impl_;
  if (e.store == nullptr) {
    return InvalidArgument("the compute engine needs a store");
  }
  {
    std::lock_guard<std::mutex> lock(e.mu);
    if (e.started || e.shut_down) {
      return Status(StatusCode::kFailedPrecondition,
                    "the compute engine was started before");
    }
    e.started = true;
  }
  Result<std::optional<Policy>> stored = e.store->GetPolicy();
  if (!stored.ok()) return stored.status();
  {
    std::lock_guard<std::mutex> lock(e.mu);
    e.policy_value =
        ClampToCeilings(stored->value_or(Policy{}), e.options.ceilings);
  }
  Result<std::vector<ModuleRecord>> modules = e.store->ListModules();
  if (!modules.ok()) return modules.status();
  Result<std::vector<TriggerRecord>> triggers = e.store->ListTriggers(0);
  if (!triggers.ok()) return triggers.status();
  for (const ModuleRecord& record : *modules) {
    std::vector<TriggerRecord> mine;
    for (const TriggerRecord& t : *triggers) {
      if (t.module_id == record.id) mine.push_back(t);
    }
    TESSERA_RETURN_IF_ERROR(e.AddSlot(record, std::move(mine)));
  }
  e.house = std::make_shared<engine_internal::HouseTask>(&e);
  TESSERA_RETURN_IF_ERROR(e.pool->Add(e.house));
  if (e.options.compiler != nullptr) {
    e.queue = std::make_unique<CompileQueue>(
        e.store, e.options.compiler,
        [&e](const VersionRecord& version) { e.OnCompiled(version); }, e.wall);
    TESSERA_RETURN_IF_ERROR(e.queue->Start());
  }
  return Status::Ok();
}

void ComputeEngine::Shutdown() {
  Impl& e = *impl_;
  {
    std::lock_guard<std::mutex> lock(e.mu);
    if (e.shut_down) return;
    e.shut_down = true;
  }
  if (e.queue) e.queue->Shutdown();
  if (e.house) e.pool->Remove(*e.house);
  for (const auto& slot : e.AllSlots()) {
    if (slot->task) e.pool->Remove(*slot->task);
    e.Unload(*slot);
  }
  (void)e.Flush();
  if (e.own_pool) e.own_pool->Shutdown();
  if (e.own_watchdog) e.own_watchdog->Stop();
}

Result<ModuleRecord> ComputeEngine::UpsertModule(std::string_view name,
                                                 std::string_view description,
                                                 bool always_on) {
  Impl& e = *impl_;
  if (!IsValidModuleName(name)) {
    return InvalidArgument(
        "module name " + engine_internal::Quote(name) +
        " is not crate-shaped: a lowercase letter, then lowercase letters, "
        "digits, '-' or '_' (at most 128)");
  }
  std::shared_ptr<ModuleSlot> slot = e.Find(name);
  if (slot == nullptr) {
    Policy policy = e.CurrentPolicy();
    size_t count = e.AllSlots().size();
    if (static_cast<int64_t>(count) >= policy.max_modules) {
      return Status(StatusCode::kResourceExhausted,
                    "the app has " + std::to_string(count) +
                        " modules, its policy's maxModules");
    }
  }
  Result<ModuleRecord> record =
      e.store->UpsertModule(name, description, always_on);
  if (!record.ok()) return record.status();
  if (slot == nullptr) {
    TESSERA_RETURN_IF_ERROR(e.AddSlot(*record, {}));
  } else {
    {
      std::lock_guard<std::mutex> lock(slot->mu);
      slot->record.description = record->description;
      slot->record.always_on = record->always_on;
      slot->record.updated_ms = record->updated_ms;
    }
    e.Poke(*slot);
  }
  return record;
}

Status ComputeEngine::DeleteModule(std::string_view name) {
  Impl& e = *impl_;
  Result<std::shared_ptr<ModuleSlot>> required = e.Require(name);
  if (!required.ok()) return required.status();
  std::shared_ptr<ModuleSlot> slot = std::move(required).value();
  {
    std::lock_guard<std::mutex> persist(slot->persist_mu);
    std::lock_guard<std::mutex> lock(slot->mu);
    slot->deleted = true;
  }
  e.pool->Remove(*slot->task);
  e.Unload(*slot);
  {
    std::lock_guard<std::mutex> lock(e.mu);
    auto it = e.modules.find(name);
    if (it != e.modules.end() && it->second == slot) e.modules.erase(it);
  }
  e.recorder.Forget(slot->id);
  e.CountDataTriggers();
  return e.store->DeleteModule(slot->id);
}

Result<VersionRecord> ComputeEngine::DeployVersion(DeployRequest request) {
  Impl& e = *impl_;
  Result<std::shared_ptr<ModuleSlot>> required = e.Require(request.module);
  if (!required.ok()) return required.status();
  std::shared_ptr<ModuleSlot> slot = std::move(required).value();
  if (e.queue == nullptr) {
    return Status(StatusCode::kFailedPrecondition,
                  "this server compiles no compute modules (no compiler)");
  }
  const Language language =
      request.language.value_or(DetectLanguage(request.files));
  TESSERA_RETURN_IF_ERROR(CheckSources(
      language, request.files, request.sdk_version, request.abi_version));
  VersionRecord version;
  version.module_id = slot->id;
  version.language = language;
  version.sdk_version = request.sdk_version;
  version.abi_version = request.abi_version;
  version.source_hash =
      SourceHash(language, request.sdk_version, request.files);
  version.files = std::move(request.files);
  version.template_name = std::move(request.template_name);
  version.status = CompileStatus::kPending;
  version.created_ms = e.wall->UnixNowMs();
  Result<int64_t> no = e.store->AddVersion(version);
  if (!no.ok()) return no.status();
  version.version_no = *no;
  if (request.enable_on_success) {
    std::lock_guard<std::mutex> lock(slot->mu);
    slot->enable_on_success.insert(*no);
  }
  e.queue->Enqueue(slot->id, *no);
  version.files.clear();
  return version;
}

Status ComputeEngine::EnableWhenCompiled(std::string_view module,
                                         int64_t version_no) {
  Impl& e = *impl_;
  Result<std::shared_ptr<ModuleSlot>> required = e.Require(module);
  if (!required.ok()) return required.status();
  std::shared_ptr<ModuleSlot> slot = std::move(required).value();
  {
    std::lock_guard<std::mutex> lock(slot->mu);
    slot->enable_on_success.insert(version_no);
  }
  // The queue's Apply takes the mark when the version finishes; if it had
  // finished before the mark was set, the mark is still here to take.
  Result<VersionRecord> version = e.store->GetVersion(slot->id, version_no);
  if (!version.ok()) return version.status();
  if (version->status != CompileStatus::kSucceeded &&
      version->status != CompileStatus::kFailed) {
    return Status::Ok();
  }
  bool ours = false;
  {
    std::lock_guard<std::mutex> lock(slot->mu);
    ours = slot->enable_on_success.erase(version_no) > 0;
  }
  if (!ours || version->status != CompileStatus::kSucceeded) {
    return Status::Ok();
  }
  Result<ModuleRecord> enabled = SetEnabled(module, true);
  return enabled.ok() ? Status::Ok() : enabled.status();
}

Result<ModuleRecord> ComputeEngine::SetEnabled(std::string_view module,
                                               bool enabled) {
  Impl& e = *impl_;
  Result<std::shared_ptr<ModuleSlot>> required = e.Require(module);
  if (!required.ok()) return required.status();
  std::shared_ptr<ModuleSlot> slot = std::move(required).value();
  int64_t active = 0;
  if (enabled) {
    Result<std::vector<VersionRecord>> versions =
        e.store->ListVersions(slot->id, 1'000'000, /*with_files=*/false);
    if (!versions.ok()) return versions.status();
    for (const VersionRecord& v : *versions) {
      if (v.status == CompileStatus::kSucceeded) {
        active = v.version_no;
        break;
      }
    }
    if (active == 0) {
      std::string latest =
          versions->empty()
              ? "it has no versions"
              : "its latest version " +
                    std::to_string(versions->front().version_no) + " is " +
                    CompileStatusName(versions->front().status);
      return Status(StatusCode::kFailedPrecondition,
                    "module " + engine_internal::Quote(module) +
                        " has no successfully compiled version (" + latest +
                        ")");
    }
  }
  {
    std::lock_guard<std::mutex> lock(slot->mu);
    slot->record.enabled = enabled;
    if (enabled) {
      slot->record.active_version = active;
      slot->circuit.Reset();
      slot->record.circuit = CircuitState::kClosed;
      slot->record.consecutive_failures = 0;
      slot->record.circuit_opened_ms = 0;
      slot->record.last_error.clear();
    }
  }
  TESSERA_RETURN_IF_ERROR(e.Persist(*slot));
  e.Poke(*slot);
  std::lock_guard<std::mutex> lock(slot->mu);
  return slot->record;
}

Result<Policy> ComputeEngine::SetPolicy(std::string_view patch_json) {
  Impl& e = *impl_;
  Result<Policy> next =
      ApplyPolicyPatch(e.CurrentPolicy(), patch_json, e.options.ceilings);
  if (!next.ok()) return next.status();
  TESSERA_RETURN_IF_ERROR(e.store->SetPolicy(*next));
  {
    std::lock_guard<std::mutex> lock(e.mu);
    e.policy_value = *next;
  }
  e.PokeAll();
  return next;
}

Policy ComputeEngine::policy() const { return impl_->CurrentPolicy(); }

void ComputeEngine::OnSessionsChanged() {
  if (impl_->house) impl_->pool->Poke(impl_->house);
}

Status ComputeEngine::Flush() { return impl_->Flush(); }

ComputeEngine::Counters ComputeEngine::counters() const {
  const Impl& e = *impl_;
  Counters c;
  c.runs = e.c_runs.load();
  c.failures = e.c_failures.load();
  c.ticks = e.c_ticks.load();
  c.fuel_used = e.c_fuel.load();
  c.cpu_us = e.c_cpu_us.load();
  c.egress_msgs = e.c_egress_msgs.load();
  c.egress_bytes = e.c_egress_bytes.load();
  c.egress_refused = e.c_egress_refused.load();
  c.circuit_opens = e.c_circuit_opens.load();
  for (const auto& slot : e.AllSlots()) c.loaded_modules += slot->is_loaded;
  return c;
}

}  // namespace tessera::compute
