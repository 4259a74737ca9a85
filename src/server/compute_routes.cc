// The compute API's routes (compute_service.h; the table in
// docs/compute.md): routing, the scope check, strict bodies and queries,
// then one engine call each. The monitoring handlers and the shared checks
// are in compute_monitor_routes.cc / compute_routes_internal.h.
#include <charconv>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "compute/flow_id.h"
#include "compute/policy.h"
#include "net/ticket.h"
#include "server/bearer_auth.h"
#include "server/compute_json.h"
#include "server/compute_routes_internal.h"
#include "server/compute_service.h"
#include "server/http_json.h"
#include "server/request_target.h"

namespace tessera::server {

using compute_routes::BadRequest;
using compute_routes::Call;
using compute_routes::CheckQuery;
using compute_routes::Engine;
using compute_routes::Handler;
using compute_routes::IntParam;
using compute_routes::Invoke;
using compute_routes::ModuleParam;
using compute_routes::Names;
using compute_routes::Need;
using compute_routes::Query;
using json = nlohmann::json;
using net::HttpRequest;
using net::HttpResponse;

namespace {

// The module's view (after a change), or the record alone if it went.
HttpResponse ModuleResponse(Call& c, const compute::ModuleRecord& record,
                            int status = 200) {
  Result<std::vector<compute::ModuleView>> modules = c.engine.Modules();
  if (modules.ok()) {
    for (const compute::ModuleView& m : *modules) {
      if (m.record.name == record.name)
        return JsonResponse(status, ModuleJson(m));
    }
  }
  compute::ModuleView view;
  view.record = record;
  return JsonResponse(status, ModuleJson(view));
}

// --- handlers

HttpResponse ListModules(Call& c) {
  if (auto e = CheckQuery(c, {})) return *e;
  Result<std::vector<compute::ModuleView>> modules = c.engine.Modules();
  if (!modules.ok()) return Engine(modules.status());
  json list = json::array();
  for (const compute::ModuleView& m : *modules) list.push_back(ModuleJson(m));
  return JsonResponse(200, json{{"modules", list}});
}

HttpResponse UpsertModule(Call& c) {
  if (auto e = CheckQuery(c, {})) return *e;
  Status fields = CheckFields(c.body, "body", {"description", "alwaysOn"});
  if (!fields.ok()) return BadRequest(fields.message());
  std::string description;
  bool always_on = false;
  std::optional<compute::ModuleView> existing;
  if (Result<std::vector<compute::ModuleView>> all = c.engine.Modules();
      all.ok()) {
    for (const compute::ModuleView& m : *all) {
      if (m.record.name == c.vars[0]) existing = m;
    }
  }
  if (existing) {
    description = existing->record.description;
    always_on = existing->record.always_on;
  }
  if (auto d = c.body.find("description"); d != c.body.end()) {
    if (!d->is_string()) return BadRequest("\"description\" must be a string");
    description = d->get<std::string>();
  }
  if (auto a = c.body.find("alwaysOn"); a != c.body.end()) {
    if (!a->is_boolean()) return BadRequest("\"alwaysOn\" must be a boolean");
    always_on = a->get<bool>();
  }
  Result<compute::ModuleRecord> m =
      c.engine.UpsertModule(c.vars[0], description, always_on);
  if (!m.ok()) return Engine(m.status());
  return ModuleResponse(c, *m, existing ? 200 : 201);
}

HttpResponse DeleteModule(Call& c) {
  if (auto e = CheckQuery(c, {})) return *e;
  Status s = c.engine.DeleteModule(c.vars[0]);
  if (!s.ok()) return Engine(s);
  return JsonResponse(200, json{{"name", c.vars[0]}, {"deleted", true}});
}

HttpResponse Deploy(Call& c) {
  if (auto e = CheckQuery(c, {})) return *e;
  compute::DeployRequest request;
  request.module = c.vars[0];
  Status parsed = ParseDeployBody(c.body, &request);
  if (!parsed.ok()) return BadRequest(parsed.message());
  Result<compute::VersionRecord> v = c.engine.DeployVersion(std::move(request));
  if (!v.ok()) return Engine(v.status());
  json out = VersionJson(*v);
  out["module"] = c.vars[0];
  return JsonResponse(202, out);
}

HttpResponse Versions(Call& c) {
  if (auto e = CheckQuery(c, {"limit"})) return *e;
  HttpResponse error;
  std::optional<int64_t> limit = IntParam(c, "limit", 20, 1, 1000, &error);
  if (!limit) return error;
  Result<std::vector<compute::VersionRecord>> list =
      c.engine.Versions(c.vars[0], *limit);
  if (!list.ok()) return Engine(list.status());
  json out = json::array();
  for (const compute::VersionRecord& v : *list) out.push_back(VersionJson(v));
  return JsonResponse(200, json{{"versions", out}});
}

HttpResponse Templates(Call& c) {
  if (auto e = CheckQuery(c, {})) return *e;
  json out = json::array();
  for (const compute::TemplateInfo& t : c.engine.Templates()) {
    out.push_back(json{{"name", t.name},
                       {"description", t.description},
                       {"language", compute::LanguageName(t.language)}});
  }
  return JsonResponse(200, json{{"templates", out}});
}

HttpResponse DeployTemplate(Call& c) {
  if (auto e = CheckQuery(c, {})) return *e;
  Status fields = CheckFields(c.body, "body", {"module"});
  if (!fields.ok()) return BadRequest(fields.message());
  std::string module = c.vars[0];
  if (auto m = c.body.find("module"); m != c.body.end() && !m->is_null()) {
    if (!m->is_string() || m->get_ref<const std::string&>().empty()) {
      return BadRequest("\"module\" must be a module name");
    }
    module = m->get<std::string>();
  }
  Result<compute::VersionRecord> v = c.engine.DeployTemplate(c.vars[0], module);
  if (!v.ok()) return Engine(v.status());
  json out = VersionJson(*v);
  out["module"] = module;
  return JsonResponse(202, out);
}

HttpResponse UpsertTrigger(Call& c) {
  if (auto e = CheckQuery(c, {})) return *e;
  Result<compute::TriggerRecord> t = ParseTriggerBody(c.body, "body");
  if (!t.ok()) return BadRequest(t.status().message());
  Result<compute::TriggerRecord> stored =
      c.engine.UpsertTrigger(compute::TriggerSpec{c.vars[0], *t});
  if (!stored.ok()) return Engine(stored.status());
  return JsonResponse(200, TriggerJson(*stored));
}

HttpResponse Triggers(Call& c) {
  if (auto e = CheckQuery(c, {})) return *e;
  Result<std::vector<compute::TriggerRecord>> list =
      c.engine.Triggers(c.vars[0]);
  if (!list.ok()) return Engine(list.status());
  json out = json::array();
  for (const compute::TriggerRecord& t : *list) out.push_back(TriggerJson(t));
  return JsonResponse(200, json{{"triggers", out}});
}

HttpResponse DeleteTrigger(Call& c) {
  if (auto e = CheckQuery(c, {})) return *e;
  int64_t id = 0;
  const std::string& t = c.vars[1];
  auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), id);
  if (ec != std::errc() || end != t.data() + t.size() || id < 1) {
    return BadRequest("the trigger id must be a positive integer, got \"" + t +
                      "\"");
  }
  Status s = c.engine.DeleteTrigger(c.vars[0], id);
  if (!s.ok()) return Engine(s);
  return JsonResponse(200, json{{"id", id}, {"deleted", true}});
}

HttpResponse SetEnabled(Call& c) {
  if (auto e = CheckQuery(c, {})) return *e;
  Status fields = CheckFields(c.body, "body", {"enabled"});
  if (!fields.ok()) return BadRequest(fields.message());
  auto e = c.body.find("enabled");
  if (e == c.body.end() || !e->is_boolean()) {
    return BadRequest("\"enabled\" is required: true or false");
  }
  Result<compute::ModuleRecord> m =
      c.engine.SetEnabled(c.vars[0], e->get<bool>());
  if (!m.ok()) return Engine(m.status());
  return ModuleResponse(c, *m);
}

HttpResponse GetPolicy(Call& c) {
  if (auto e = CheckQuery(c, {})) return *e;
  return JsonResponse(200,
                      json::parse(compute::PolicyToJson(c.engine.policy())));
}

HttpResponse SetPolicy(Call& c) {
  if (auto e = CheckQuery(c, {})) return *e;
  Result<compute::Policy> p = c.engine.SetPolicy(c.body.dump());
  if (!p.ok()) return Engine(p.status());
  return JsonResponse(200, json::parse(compute::PolicyToJson(*p)));
}

HttpResponse RaiseEvent(Call& c) {
  if (auto e = CheckQuery(c, {})) return *e;
  Status fields = CheckFields(c.body, "body", {"name", "payload"});
  if (!fields.ok()) return BadRequest(fields.message());
  auto name = c.body.find("name");
  if (name == c.body.end() || !name->is_string() ||
      name->get_ref<const std::string&>().empty()) {
    return BadRequest("\"name\" is required: the event's name");
  }
  auto payload = c.body.find("payload");
  const std::string payload_json =
      payload == c.body.end() ? "null" : payload->dump();
  const std::string flow = compute::NewFlowId();
  c.engine.RaiseEvent("compute_event", name->get<std::string>(), payload_json,
                      flow);
  return JsonResponse(202, json{{"name", *name}, {"flowId", flow}});
}

// --- the route table: method, path pattern under /api/compute ("*" is a
// variable segment), the scope it needs and its handler.
struct RouteEntry {
  const char* method;
  std::vector<std::string_view> pattern;
  Need need;
  Handler handler;
};

const std::vector<RouteEntry>& Routes() {
  static const std::vector<RouteEntry> kRoutes = {
      {"GET", {"modules"}, Need::kView, ListModules},
      {"PUT", {"modules", "*"}, Need::kManage, UpsertModule},
      {"DELETE", {"modules", "*"}, Need::kManage, DeleteModule},
      {"POST", {"modules", "*", "versions"}, Need::kManage, Deploy},
      {"GET", {"modules", "*", "versions"}, Need::kView, Versions},
      {"PUT", {"modules", "*", "triggers"}, Need::kManage, UpsertTrigger},
      {"GET", {"modules", "*", "triggers"}, Need::kView, Triggers},
      {"DELETE",
       {"modules", "*", "triggers", "*"},
       Need::kManage,
       DeleteTrigger},
      {"PUT", {"modules", "*", "enabled"}, Need::kManage, SetEnabled},
      {"POST", {"modules", "*", "invoke", "*"}, Need::kInvoke, Invoke},
      {"GET", {"templates"}, Need::kView, Templates},
      {"POST", {"templates", "*", "deploy"}, Need::kManage, DeployTemplate},
      {"GET", {"policy"}, Need::kView, GetPolicy},
      {"PUT", {"policy"}, Need::kManage, SetPolicy},
      {"GET", {"runs"}, Need::kView, compute_routes::Runs},
      {"GET", {"stats"}, Need::kView, compute_routes::Stats},
      {"GET", {"logs"}, Need::kView, compute_routes::Logs},
      {"GET", {"diagnostics"}, Need::kView, compute_routes::Diagnostics},
      {"GET", {"usage"}, Need::kView, compute_routes::Usage},
      {"POST", {"events"}, Need::kManage, RaiseEvent},
  };
  return kRoutes;
}

bool Matches(const std::vector<std::string_view>& pattern,
             const std::vector<std::string>& rest,
             std::vector<std::string>* vars) {
  if (pattern.size() != rest.size()) return false;
  vars->clear();
  for (size_t i = 0; i < rest.size(); ++i) {
    if (pattern[i] == "*") {
      vars->push_back(rest[i]);
    } else if (pattern[i] != rest[i]) {
      return false;
    }
  }
  return true;
}

HttpResponse Unauthorized(const std::string& message) {
  HttpResponse r = ErrorResponse(401, "unauthorized", message);
  r.headers.emplace_back("WWW-Authenticate", "Bearer");
  return r;
}

}  // namespace

namespace compute_routes {

HttpResponse Invoke(Call& c) {
  if (auto e = CheckQuery(c, {})) return *e;
  Status fields = CheckFields(c.body, "body", {"params"});
  if (!fields.ok()) return BadRequest(fields.message());
  json params = json::object();
  if (auto p = c.body.find("params"); p != c.body.end() && !p->is_null()) {
    if (!p->is_object()) {
      return ErrorResponse(400, "BAD_REQUEST", "params: must be an object");
    }
    params = *p;
  }
  compute::InvokeRequest request;
  request.module = c.vars[0];
  request.export_name = c.vars[1];
  request.params_json = params.dump();
  request.management = c.management;
  request.caller_user_id = c.caller_user_id;
  Result<compute::InvokeResult> r = c.engine.Invoke(request);
  if (r.ok()) return JsonResponse(200, InvokeResultJson(*r));
  return InvokeError(r.status());
}

HttpResponse InvokeError(const Status& s) {
  switch (s.code()) {
    case StatusCode::kInvalidArgument: {
      std::string message = s.message();
      constexpr std::string_view kPrefix = "BAD_REQUEST: ";
      if (message.starts_with(kPrefix)) message.erase(0, kPrefix.size());
      return ErrorResponse(400, "BAD_REQUEST", message);
    }
    case StatusCode::kPermissionDenied:
      return ErrorResponse(403, "forbidden", s.message());
    case StatusCode::kTrap:
    case StatusCode::kResourceExhausted:
    case StatusCode::kDeadlineExceeded:
    case StatusCode::kRefused:
      return ErrorResponse(422, StatusCodeName(s.code()), s.message());
    default:
      return Engine(s);
  }
}

std::optional<HttpResponse> AuthorizeInvoke(const ApiTokens& tokens,
                                            std::string_view ticket_secret,
                                            const HttpRequest& request,
                                            Call* call) {
  std::optional<std::string_view> token = BearerToken(request);
  if (!token || token->empty()) {
    return Unauthorized(
        "invoke needs Authorization: Bearer <token>: a manage_compute "
        "token or a player's ticket");
  }
  const Scopes scopes = tokens.ScopesOf(request);
  if (scopes.Has(Scope::kManageCompute)) {
    call->management = true;
  } else if (!scopes.empty()) {
    return ErrorResponse(403, "forbidden",
                         "this token has view_compute_diagnostics only; "
                         "invoke takes a manage_compute token or a "
                         "player's ticket");
  } else {
    net::TicketCheck check = net::VerifyTicketAnyResource(
        ticket_secret, *token, call->clock.UnixNowSecs());
    if (check.error != net::TicketError::kNone) {
      return Unauthorized(
          "the bearer token is neither an API token nor a valid ticket (" +
          check.message + ")");
    }
    call->caller_user_id = check.ticket.subscriber_id;
  }
  return std::nullopt;
}

std::optional<HttpResponse> ParseBody(const HttpRequest& request, Call* call) {
  if (request.body.find_first_not_of(" \t\r\n") == std::string::npos) {
    call->body = json::object();
    return std::nullopt;
  }
  call->body = json::parse(request.body, nullptr, false);
  if (call->body.is_discarded()) {
    return ErrorResponse(400, "bad_json", "the body is not valid JSON");
  }
  if (!call->body.is_object()) {
    return ErrorResponse(400, "bad_json", "the body must be a JSON object");
  }
  return std::nullopt;
}

}  // namespace compute_routes

HttpResponse ComputeService::Handle(const HttpRequest& request) {
  std::optional<RequestTarget> target = ParseTarget(request.target);
  if (!target) {
    return ErrorResponse(400, "bad_target",
                         "the request target is not a valid path");
  }
  const std::vector<std::string>& s = target->segments;
  if (s.size() == 3 && s[0] == "api" && s[1] == "dev" &&
      s[2] == "player-token") {
    return DevPlayerToken(request);
  }
  return Route(request);
}

HttpResponse ComputeService::Route(const HttpRequest& request) {
  std::optional<RequestTarget> target = ParseTarget(request.target);
  const std::vector<std::string> rest(target->segments.begin() + 2,
                                      target->segments.end());
  const std::string method = request.method == "HEAD" ? "GET" : request.method;
  // The method is checked before the token, so a wrong method is told
  // without one (and nothing about modules is).
  const RouteEntry* found = nullptr;
  std::string allowed;
  std::vector<std::string> vars;
  for (const RouteEntry& r : Routes()) {
    std::vector<std::string> v;
    if (!Matches(r.pattern, rest, &v)) continue;
    if (!allowed.empty()) allowed += ", ";
    allowed += r.method;
    if (method == r.method) {
      found = &r;
      vars = std::move(v);
    }
  }
  if (allowed.empty()) {
    return ErrorResponse(404, "not_found", "no route " + target->path);
  }
  if (found == nullptr) {
    HttpResponse r = ErrorResponse(
        405, "method_not_allowed",
        request.method + " is not allowed here (allowed: " + allowed + ")");
    r.headers.emplace_back("Allow", allowed);
    return r;
  }

  Call call{*engine_, wall_clock_, std::move(vars), {}, nullptr, false, ""};
  const Scopes scopes = options_.tokens.ScopesOf(request);
  const char* scope_name = nullptr;
  if (found->need == Need::kView) {
    scope_name = ScopeName(Scope::kViewComputeDiagnostics);
  } else if (found->need == Need::kManage) {
    scope_name = ScopeName(Scope::kManageCompute);
  }
  if (found->need == Need::kInvoke) {
    if (auto refused = compute_routes::AuthorizeInvoke(
            options_.tokens, options_.ticket_secret, request, &call)) {
      return *refused;
    }
  } else if (scopes.empty()) {
    return Unauthorized(std::string("this route needs a token with the ") +
                        scope_name + " scope: Authorization: Bearer <token>");
  } else if (!scopes.Has(found->need == Need::kView
                             ? Scope::kViewComputeDiagnostics
                             : Scope::kManageCompute)) {
    return ErrorResponse(
        403, "forbidden",
        std::string("this token lacks the ") + scope_name + " scope");
  }

  std::optional<Query> query = ParseQuery(request.target);
  if (!query) {
    return BadRequest(
        "the query string has a bad escape or a parameter given twice");
  }
  call.query = std::move(*query);
  if (method == "PUT" || method == "POST") {
    if (auto bad = compute_routes::ParseBody(request, &call)) return *bad;
  }
  return found->handler(call);
}

}  // namespace tessera::server
