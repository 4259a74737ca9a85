// The compute API's monitoring routes (docs/compute.md "Monitoring"):
// runs, logs, stats, diagnostics and usage. The engine writes its buffered
// records before each read.
#include <charconv>
#include <optional>
#include <string>

#include "server/compute_json.h"
#include "server/compute_routes_internal.h"
#include "server/http_json.h"

namespace tessera::server::compute_routes {

HttpResponse BadRequest(const std::string& message) {
  return ErrorResponse(400, "invalid_argument", message);
}

HttpResponse Engine(const Status& status) { return ErrorFromStatus(status); }

// Refuses query parameters not in `known`.
std::optional<HttpResponse> CheckQuery(
    const Call& c, std::initializer_list<std::string_view> known) {
  for (const auto& [name, value] : c.query) {
    bool ok = false;
    for (std::string_view k : known) ok = ok || name == k;
    if (ok) continue;
    std::string list;
    for (std::string_view k : known) {
      if (!list.empty()) list += ", ";
      list += k;
    }
    return BadRequest("unknown query parameter \"" + name + "\"" +
                      (list.empty() ? " (this route takes none)"
                                    : " (parameters: " + list + ")"));
  }
  return std::nullopt;
}

// An integer query parameter in [min, max], `fallback` when absent.
std::optional<int64_t> IntParam(const Call& c, const char* name,
                                int64_t fallback, int64_t min, int64_t max,
                                HttpResponse* error) {
  auto it = c.query.find(name);
  if (it == c.query.end() || it->second.empty()) return fallback;
  int64_t v = 0;
  const std::string& t = it->second;
  auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (ec != std::errc() || end != t.data() + t.size() || v < min || v > max) {
    *error =
        BadRequest(std::string("\"") + name + "\" must be an integer from " +
                   std::to_string(min) + " to " + std::to_string(max));
    return std::nullopt;
  }
  return v;
}

std::optional<std::string> ModuleParam(const Call& c) {
  auto it = c.query.find("module");
  if (it == c.query.end() || it->second.empty()) return std::nullopt;
  return it->second;
}

Result<ModuleNames> Names(compute::ComputeEngine& engine) {
  Result<std::vector<compute::ModuleView>> modules = engine.Modules();
  if (!modules.ok()) return modules.status();
  ModuleNames names;
  for (const compute::ModuleView& m : *modules) {
    names[m.record.id] = m.record.name;
  }
  return names;
}

HttpResponse Runs(Call& c) {
  if (auto e = CheckQuery(c, {"module", "success", "flowId", "limit"})) {
    return *e;
  }
  HttpResponse error;
  compute::RunFilter filter;
  std::optional<int64_t> limit = IntParam(c, "limit", 100, 1, 1000, &error);
  if (!limit) return error;
  filter.limit = *limit;
  if (auto s = c.query.find("success");
      s != c.query.end() && !s->second.empty()) {
    if (s->second != "true" && s->second != "false") {
      return BadRequest("\"success\" must be true or false");
    }
    filter.success = s->second == "true";
  }
  if (auto f = c.query.find("flowId");
      f != c.query.end() && !f->second.empty()) {
    filter.flow_id = f->second;
  }
  Result<std::vector<compute::RunRecord>> runs =
      c.engine.Runs(ModuleParam(c), filter);
  if (!runs.ok()) return Engine(runs.status());
  json out = json::array();
  for (const compute::RunRecord& r : *runs) out.push_back(RunJson(r));
  return JsonResponse(200, json{{"runs", out}});
}

HttpResponse Logs(Call& c) {
  if (auto e = CheckQuery(c, {"module", "limit"})) return *e;
  HttpResponse error;
  compute::LogFilter filter;
  std::optional<int64_t> limit = IntParam(c, "limit", 100, 1, 1000, &error);
  if (!limit) return error;
  filter.limit = *limit;
  Result<std::vector<compute::LogRecord>> logs =
      c.engine.Logs(ModuleParam(c), filter);
  if (!logs.ok()) return Engine(logs.status());
  Result<ModuleNames> names = Names(c.engine);
  if (!names.ok()) return Engine(names.status());
  json out = json::array();
  for (const compute::LogRecord& l : *logs) out.push_back(LogJson(l, *names));
  return JsonResponse(200, json{{"logs", out}});
}

HttpResponse Stats(Call& c) {
  if (auto e = CheckQuery(c, {"windowMinutes"})) return *e;
  HttpResponse error;
  std::optional<int64_t> window =
      IntParam(c, "windowMinutes", 60, 1, 30 * 24 * 60, &error);
  if (!window) return error;
  Result<compute::StatsView> stats = c.engine.Stats(*window);
  if (!stats.ok()) return Engine(stats.status());
  return JsonResponse(200, StatsJson(*stats));
}

HttpResponse Diagnostics(Call& c) {
  if (auto e = CheckQuery(c, {})) return *e;
  Result<compute::DiagnosticsView> d = c.engine.Diagnostics();
  if (!d.ok()) return Engine(d.status());
  return JsonResponse(200, DiagnosticsJson(*d));
}

HttpResponse Usage(Call& c) {
  if (auto e = CheckQuery(c, {"module", "minutes"})) return *e;
  HttpResponse error;
  std::optional<int64_t> minutes =
      IntParam(c, "minutes", 60, 1, 30 * 24 * 60, &error);
  if (!minutes) return error;
  const int64_t since = c.clock.UnixNowMs() - *minutes * 60'000;
  Result<std::vector<compute::UsageRow>> rows =
      c.engine.Usage(ModuleParam(c), since - since % 60'000);
  if (!rows.ok()) return Engine(rows.status());
  Result<ModuleNames> names = Names(c.engine);
  if (!names.ok()) return Engine(names.status());
  json out = json::array();
  for (const compute::UsageRow& u : *rows) out.push_back(UsageJson(u, *names));
  return JsonResponse(200, json{{"usage", out}});
}

}  // namespace tessera::server::compute_routes
