#include "server/compute_service.h"

#include <nlohmann/json.hpp>
#include <optional>
#include <utility>
#include <vector>

#include "net/router.h"
#include "net/ticket.h"
#include "server/compute_json.h"
#include "server/function_routes.h"
#include "server/http_json.h"
#include "server/module_dir.h"
#include "server/request_target.h"

namespace tessera::server {

using json = nlohmann::json;
using net::HttpRequest;
using net::HttpResponse;

namespace {

compute::EngineOptions WithParts(compute::EngineOptions options,
                                 compute::ComputeStore* store,
                                 compute::SourceCompiler* compiler,
                                 compute::NotifySink* notify) {
  options.store = store;
  options.compiler = compiler;
  options.notify = notify;
  return options;
}

}  // namespace

ComputeMetrics::ComputeMetrics(Metrics* m)
    : runs_(m->GetCounter("tessera_compute_runs_total",
                          "Compute module runs (init, tick, invoke, event, "
                          "probe), failed ones included.")),
      failures_(m->GetCounter("tessera_compute_failures_total",
                              "Compute module runs that failed.")),
      ticks_(m->GetCounter("tessera_compute_ticks_total",
                           "Compute module ticks run.")),
      fuel_(m->GetCounter("tessera_compute_fuel_used_total",
                          "Fuel used by compute module runs.")),
      cpu_us_(m->GetCounter("tessera_compute_cpu_microseconds_total",
                            "Thread CPU time of compute module runs, in "
                            "microseconds (1000 = one compute unit).")),
      egress_msgs_(m->GetCounter("tessera_compute_egress_messages_total",
                                 "Notifications compute modules sent.")),
      egress_bytes_(m->GetCounter("tessera_compute_egress_bytes_total",
                                  "Payload bytes of the notifications "
                                  "compute modules sent.")),
      egress_refused_(m->GetCounter(
          "tessera_compute_egress_refused_total",
          "Emits refused by a module's per-minute egress budget.")),
      circuit_opens_(m->GetCounter("tessera_compute_circuit_opens_total",
                                   "Times a module's failure circuit "
                                   "opened.")),
      loaded_(m->GetGauge("tessera_compute_loaded_modules",
                          "Compute modules with a running instance.")),
      compile_queue_(m->GetGauge("tessera_compute_compile_queue",
                                 "Versions waiting for or in a compile.")) {}

void ComputeMetrics::Update(const compute::ComputeEngine::Counters& now,
                            int64_t compile_queue) {
  std::lock_guard<std::mutex> lock(mu_);
  // Totals only grow; a smaller one (never expected) adds nothing.
  auto add = [](Counter* c, int64_t now_v, int64_t& seen) {
    if (now_v > seen) c->Add(static_cast<uint64_t>(now_v - seen));
    if (now_v > seen) seen = now_v;
  };
  add(runs_, now.runs, seen_.runs);
  add(failures_, now.failures, seen_.failures);
  add(ticks_, now.ticks, seen_.ticks);
  add(fuel_, now.fuel_used, seen_.fuel_used);
  add(cpu_us_, now.cpu_us, seen_.cpu_us);
  add(egress_msgs_, now.egress_msgs, seen_.egress_msgs);
  add(egress_bytes_, now.egress_bytes, seen_.egress_bytes);
  add(egress_refused_, now.egress_refused, seen_.egress_refused);
  add(circuit_opens_, now.circuit_opens, seen_.circuit_opens);
  loaded_->Set(now.loaded_modules);
  compile_queue_->Set(compile_queue);
}

ComputeService::ComputeService(
    std::unique_ptr<compute::ComputeStore> store,
    std::unique_ptr<compute::SourceCompiler> compiler,
    std::unique_ptr<compute::NotifySink> notify, Metrics& metrics,
    ComputeServiceOptions options)
    : options_(std::move(options)),
      wall_clock_(options_.wall_clock != nullptr ? *options_.wall_clock
                                                 : *RealWallClock::Get()),
      store_(std::move(store)),
      compiler_(std::move(compiler)),
      notify_(std::move(notify)),
      engine_(std::make_unique<compute::ComputeEngine>(WithParts(
          options_.engine, store_.get(), compiler_.get(), notify_.get()))),
      metrics_(&metrics) {}

ComputeService::~ComputeService() { Shutdown(); }

void ComputeService::RegisterRoutes(net::Router& router) {
  router.AddHttp("/api/compute", *this);
  if (options_.dev) router.AddHttp("/api/dev/player-token", *this);
  join_routes_ =
      JoinRoutes::Register(router, *engine_, options_.tokens,
                           options_.ticket_secret, options_.dev, wall_clock_);
}

Status ComputeService::Start() { return engine_->Start(); }

void ComputeService::Shutdown() {
  if (shut_down_) return;
  shut_down_ = true;
  engine_->Shutdown();
}

void ComputeService::RefreshMetrics() {
  int64_t queue = 0;
  Result<std::vector<compute::VersionRecord>> unfinished =
      store_->ListUnfinishedVersions();
  if (unfinished.ok()) queue = static_cast<int64_t>(unfinished->size());
  metrics_.Update(engine_->counters(), queue);
}

Status ComputeService::SyncManifest(
    const app::Manifest& manifest,
    const std::function<void(const std::string&)>& log) {
  for (const app::ComputeModuleSpec& spec : manifest.compute) {
    const std::string& where = spec.where;
    // Triggers first: a bad one fails the boot before anything changes.
    std::vector<compute::TriggerRecord> triggers;
    for (size_t i = 0; i < spec.triggers.size(); ++i) {
      const std::string at = where + ".triggers[" + std::to_string(i) + "]";
      Result<compute::TriggerRecord> t =
          ParseTriggerBody(json::parse(spec.triggers[i]), at);
      if (!t.ok()) return t.status();
      triggers.push_back(std::move(t).value());
    }
    Result<compute::SourceFiles> files = ReadModuleDir(spec.dir());
    if (!files.ok()) {
      return InvalidArgument(where + ": " + files.status().message());
    }
    Result<compute::ModuleRecord> module =
        engine_->UpsertModule(spec.name, spec.description, spec.always_on);
    if (!module.ok()) {
      return Status(module.status().code(),
                    where + ": " + module.status().message());
    }
    const compute::Language language = compute::DetectLanguage(*files);
    compute::DeployRequest deploy;
    deploy.module = spec.name;
    deploy.language = language;
    deploy.files = *files;
    deploy.enable_on_success = spec.enabled;
    const std::string hash =
        compute::SourceHash(language, deploy.sdk_version, *files);
    Result<std::vector<compute::VersionRecord>> latest =
        engine_->Versions(spec.name, 1);
    if (!latest.ok()) return latest.status();
    if (latest->empty() || latest->front().source_hash != hash) {
      Result<compute::VersionRecord> version =
          engine_->DeployVersion(std::move(deploy));
      if (!version.ok()) {
        return Status(version.status().code(),
                      where + ": " + version.status().message());
      }
      log("compute: " + spec.name + ": deployed version " +
          std::to_string(version->version_no) + " from " + spec.dir().string() +
          " (" + compute::LanguageName(language) +
          (spec.enabled ? ", enabled once it compiles)" : ")"));
    } else if (spec.enabled && !module->enabled &&
               module->active_version == 0 &&
               latest->front().status == compute::CompileStatus::kSucceeded) {
      // Compiled before a restart, never enabled yet: what the manifest
      // asks. (A module an operator disabled stays disabled.)
      Result<compute::ModuleRecord> enabled =
          engine_->SetEnabled(spec.name, true);
      if (!enabled.ok()) return enabled.status();
    } else if (spec.enabled && !module->enabled &&
               module->active_version == 0 &&
               (latest->front().status == compute::CompileStatus::kPending ||
                latest->front().status == compute::CompileStatus::kCompiling)) {
      // A restart interrupted its first compile, which the queue resumed:
      // enable it when that compile succeeds, as the deploy asked.
      TESSERA_RETURN_IF_ERROR(
          engine_->EnableWhenCompiled(spec.name, latest->front().version_no));
    }
    for (compute::TriggerRecord& t : triggers) {
      Result<compute::TriggerRecord> stored =
          engine_->UpsertTrigger(compute::TriggerSpec{spec.name, t});
      if (!stored.ok()) {
        return Status(stored.status().code(),
                      where + ": " + stored.status().message());
      }
    }
  }
  return Status::Ok();
}

HttpResponse ComputeService::DevPlayerToken(const HttpRequest& request) {
  if (request.method != "POST") {
    HttpResponse r =
        ErrorResponse(405, "method_not_allowed",
                      request.method + " is not allowed here (allowed: POST)");
    r.headers.emplace_back("Allow", "POST");
    return r;
  }
  json body = request.body.find_first_not_of(" \t\r\n") == std::string::npos
                  ? json::object()
                  : json::parse(request.body, nullptr, false);
  if (body.is_discarded() || !body.is_object()) {
    return ErrorResponse(400, "bad_json", "the body must be a JSON object");
  }
  Status fields = CheckFields(body, "body", {"userId"});
  if (!fields.ok())
    return ErrorResponse(400, "invalid_argument", fields.message());
  auto user = body.find("userId");
  if (user == body.end() || !user->is_string() ||
      !IsValidSubscriberId(user->get_ref<const std::string&>())) {
    return ErrorResponse(
        400, "invalid_argument",
        "\"userId\" is required: 1-128 characters without control "
        "characters");
  }
  net::Ticket ticket;
  ticket.resource_kind = "player";
  ticket.resource_id = "*";
  ticket.subscriber_id = user->get<std::string>();
  ticket.expires_unix =
      wall_clock_.UnixNowSecs() + net::kDefaultTicketLifetimeSecs;
  return JsonResponse(
      200, json{{"userId", ticket.subscriber_id},
                {"ticket",
                 net::MintTicket(options_.ticket_secret, ticket, &wall_clock_)},
                {"expires", ticket.expires_unix}});
}

}  // namespace tessera::server
