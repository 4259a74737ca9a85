// `tessera compute ...`: the compute API (docs/compute.md) from the command
// line, against a running server:
//
//   tessera compute deploy DIR [--module NAME] [--no-wait]
//   tessera compute versions M [--limit N]
//   tessera compute enable M | disable M
//   tessera compute trigger M --tick HZ | --event NAME [--debounce MS] |
//                             --invoke EXPORT [--policy JSON] [--contract JSON]
//   tessera compute invoke M EXPORT [PARAMS-JSON]
//   tessera compute runs [M] [--failed] [--limit N]
//   tessera compute logs [M] [--limit N]
//   tessera compute stats [--window MINUTES]
//   tessera compute templates
//   tessera compute deploy-template T [M]
//   tessera compute types [--out FILE]
//
// Every subcommand takes --url (env TESSERA_URL; default
// http://127.0.0.1:4321) and --token (env TESSERA_ADMIN_TOKEN, else the
// admin token of the dev secrets of --app DIR or the current directory).
// Exit code 0, or 1 with the server's {"code", "message"} on stderr.
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cli/commands.h"
#include "compute/contract.h"
#include "net/client/http_client.h"
#include "net/client/url.h"
#include "server/dev_secrets.h"
#include "server/env_config.h"
#include "server/module_dir.h"

namespace tessera::cli {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

constexpr char kEnvUrl[] = "TESSERA_URL";
constexpr int kTimeoutMs = 30'000;

struct Common {
  std::string url;
  std::string token;
  std::string app_dir;
};

struct Args {
  Common common;
  std::string dir, module, export_name, params, template_name, out;
  bool no_wait = false, failed = false;
  int64_t limit = 20, window = 60, debounce = -1;
  double tick = 0;
  std::string event, invoke, policy, contract;
};

// The server's answer: status and parsed body (null when not JSON).
struct Reply {
  int status = 0;
  json body;
  bool ok() const { return status >= 200 && status < 300; }
};

class Api {
 public:
  static Result<Api> Connect(const Common& c) {
    const std::string text = server::Setting(
        c.url.empty() ? std::nullopt : std::optional<std::string>(c.url),
        kEnvUrl, "http://127.0.0.1:4321");
    Result<net::client::Url> url = net::client::ParseUrl(text);
    if (!url.ok()) return url.status();
    if (url->scheme != "http") {
      return InvalidArgument("--url must be an http:// URL, got " + text);
    }
    std::string token = c.token;
    if (token.empty()) {
      token = server::EnvString(server::kEnvAdminToken).value_or("");
    }
    if (token.empty()) {
      std::error_code ec;
      fs::path app = c.app_dir.empty() ? fs::path(".") : fs::path(c.app_dir);
      if (fs::exists(server::DevSecretsPath(app), ec)) {
        Result<server::DevSecrets> secrets = server::ReadDevSecrets(app);
        if (secrets.ok()) token = secrets->admin_token;
      }
    }
    Api api;
    api.host_ = url->host;
    api.port_ = url->port;
    api.base_ = url->path == "/" ? "" : url->path;
    api.token_ = token;
    return api;
  }

  Result<Reply> Call(const std::string& method, const std::string& path,
                     const json& body = nullptr) const {
    net::client::HttpHeaders headers;
    if (!token_.empty())
      headers.emplace_back("Authorization", "Bearer " + token_);
    std::string text;
    if (!body.is_null()) {
      headers.emplace_back("Content-Type", "application/json");
      text = body.dump();
    }
    Result<net::client::HttpResponse> r = net::client::HttpCall(
        host_, port_, method, base_ + path, text, headers, kTimeoutMs);
    if (!r.ok()) return r.status();
    Reply reply;
    reply.status = r->status;
    reply.body = json::parse(r->body, nullptr, false);
    if (reply.body.is_discarded()) reply.body = r->body;
    return reply;
  }

 private:
  std::string host_;
  uint16_t port_ = 0;
  std::string base_;
  std::string token_;
};

std::string Enc(const std::string& s) { return net::client::PercentEncode(s); }

// Unix milliseconds as "2026-12-01 19:02:03.456" (UTC).
std::string Time(int64_t ms) {
  const std::time_t secs = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%d %H:%M:%S", &tm);
  char millis[8];
  std::snprintf(millis, sizeof(millis), ".%03d", static_cast<int>(ms % 1000));
  return std::string(text) + millis;
}

// Prints a failed reply (or transport error) and returns 1.
int Fail(const Result<Reply>& r) {
  if (!r.ok()) {
    std::cerr << "error: " << r.status().message() << "\n";
    return 1;
  }
  const json& b = r->body;
  if (b.is_object() && b.contains("code")) {
    std::cerr << "error: " << r->status << " " << b.value("code", "") << ": "
              << b.value("message", "") << "\n";
  } else {
    std::cerr << "error: HTTP " << r->status << ": " << b.dump() << "\n";
  }
  return 1;
}

// Runs `call`; on success prints `print(body)` and returns 0.
template <typename F>
int Run(const Common& c, const std::string& method, const std::string& path,
        const json& body, F print) {
  Result<Api> api = Api::Connect(c);
  if (!api.ok()) {
    std::cerr << "error: " << api.status().message() << "\n";
    return 1;
  }
  Result<Reply> r = api->Call(method, path, body);
  if (!r.ok() || !r->ok()) return Fail(r);
  print(r->body);
  return 0;
}

std::string ModuleLine(const json& m) {
  std::string line = m.value("name", "") + ": " +
                     (m.value("enabled", false) ? "enabled" : "disabled") +
                     ", circuit " + m.value("circuitState", "") +
                     ", active version " +
                     std::to_string(m.value("activeVersion", 0));
  if (m.value("alwaysOn", false)) line += ", alwaysOn";
  if (m.value("loaded", false)) line += ", loaded";
  return line;
}

std::string VersionLine(const json& v) {
  std::string line = "version " + std::to_string(v.value("versionNo", 0)) +
                     ": " + v.value("compileStatus", "") + " (" +
                     v.value("language", "") + ", sdk " +
                     v.value("sdkVersion", "");
  if (v.value("compiledSizeBytes", 0) > 0) {
    line += ", " + std::to_string(v.value("compiledSizeBytes", 0)) + " bytes";
  }
  if (v.value("cacheHit", false)) line += ", cache hit";
  if (!v.value("templateName", "").empty()) {
    line += ", template " + v.value("templateName", "");
  }
  return line + ")";
}

// Polls the versions of `module` until `version_no` finished compiling.
int WaitForCompile(const Api& api, const std::string& module,
                   int64_t version_no) {
  for (;;) {
    Result<Reply> r = api.Call(
        "GET", "/api/compute/modules/" + Enc(module) + "/versions?limit=50");
    if (!r.ok() || !r->ok()) return Fail(r);
    for (const json& v : r->body.value("versions", json::array())) {
      if (v.value("versionNo", 0) != version_no) continue;
      const std::string status = v.value("compileStatus", "");
      if (status == "succeeded") {
        std::cout << module << ": " << VersionLine(v) << "\n";
        return 0;
      }
      if (status == "failed") {
        std::cout << module << ": " << VersionLine(v) << "\n"
                  << v.value("compileLog", "") << "\n";
        return 1;
      }
    }
    // Polling a remote server: its compile takes seconds.
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
}

int Deploy(const Args& a) {
  Result<compute::SourceFiles> files = server::ReadModuleDir(a.dir);
  if (!files.ok()) {
    std::cerr << "error: " << files.status().message() << "\n";
    return 1;
  }
  std::string module = a.module;
  if (module.empty()) module = fs::path(a.dir).lexically_normal().filename();
  if (module.empty())
    module = fs::path(a.dir).lexically_normal().parent_path().filename();
  Result<Api> api = Api::Connect(a.common);
  if (!api.ok()) {
    std::cerr << "error: " << api.status().message() << "\n";
    return 1;
  }
  const std::string path = "/api/compute/modules/" + Enc(module);
  // Created when missing (disabled); an existing one keeps its settings.
  Result<Reply> upsert = api->Call("PUT", path, json::object());
  if (!upsert.ok() || !upsert->ok()) return Fail(upsert);
  json body{{"files", *files}};
  Result<Reply> r = api->Call("POST", path + "/versions", body);
  if (!r.ok() || !r->ok()) return Fail(r);
  const int64_t version_no = r->body.value("versionNo", 0);
  std::cout << module << ": deployed version " << version_no << " ("
            << files->size() << " files), "
            << r->body.value("compileStatus", "") << "\n";
  if (a.no_wait) return 0;
  return WaitForCompile(*api, module, version_no);
}

int Trigger(const Args& a) {
  const int kinds =
      int{a.tick > 0} + int{!a.event.empty()} + int{!a.invoke.empty()};
  if (kinds != 1) {
    std::cerr
        << "error: give one of --tick HZ, --event NAME, --invoke EXPORT\n";
    return 1;
  }
  json body;
  if (a.tick > 0) {
    body = {{"triggerType", "tick"}, {"tickHz", a.tick}};
  } else if (!a.event.empty()) {
    body = {{"triggerType", "event"}, {"eventName", a.event}};
    if (a.debounce >= 0) body["debounceMs"] = a.debounce;
  } else {
    body = {{"triggerType", "invoke"}, {"exportName", a.invoke}};
    for (auto [flag, text, key] :
         {std::tuple{"--policy", &a.policy, "invokePolicy"},
          std::tuple{"--contract", &a.contract, "contract"}}) {
      if (text->empty()) continue;
      json v = json::parse(*text, nullptr, false);
      if (v.is_discarded() || !v.is_object()) {
        std::cerr << "error: " << flag << " must be a JSON object\n";
        return 1;
      }
      body[key] = v;
    }
  }
  return Run(a.common, "PUT",
             "/api/compute/modules/" + Enc(a.module) + "/triggers", body,
             [&](const json& t) {
               std::cout << a.module << ": trigger " << t.value("id", 0) << " ("
                         << t.value("triggerType", "") << ")\n";
             });
}

int Invoke(const Args& a) {
  json params = json::object();
  if (!a.params.empty()) {
    params = json::parse(a.params, nullptr, false);
    if (params.is_discarded() || !params.is_object()) {
      std::cerr << "error: PARAMS must be a JSON object\n";
      return 1;
    }
  }
  return Run(
      a.common, "POST",
      "/api/compute/modules/" + Enc(a.module) + "/invoke/" + Enc(a.export_name),
      json{{"params", params}}, [](const json& r) {
        if (r.contains("resultJson")) {
          std::cout << r["resultJson"].dump(2) << "\n";
        } else {
          std::cout << "base64: " << r.value("resultBase64", "") << "\n";
        }
        std::cerr << "fuel " << r.value("fuelUsed", 0) << ", "
                  << r.value("durationUs", 0) << " us, flow "
                  << r.value("flowId", "") << "\n";
      });
}

// `tessera compute types`: the invoke contracts as TypeScript.
int Types(const Args& a) {
  Result<Api> api = Api::Connect(a.common);
  if (!api.ok()) {
    std::cerr << "error: " << api.status().message() << "\n";
    return 1;
  }
  Result<Reply> modules = api->Call("GET", "/api/compute/modules");
  if (!modules.ok() || !modules->ok()) return Fail(modules);
  std::vector<compute::ExportContract> exports;
  for (const json& m : modules->body.value("modules", json::array())) {
    const std::string name = m.value("name", "");
    Result<Reply> triggers =
        api->Call("GET", "/api/compute/modules/" + Enc(name) + "/triggers");
    if (!triggers.ok() || !triggers->ok()) return Fail(triggers);
    for (const json& t : triggers->body.value("triggers", json::array())) {
      if (t.value("triggerType", "") != "invoke") continue;
      const json& contract = t.contains("contract") ? t["contract"] : json();
      if (!contract.is_object()) continue;
      Result<compute::Contract> parsed =
          compute::ParseContract(contract.dump());
      if (!parsed.ok()) {
        std::cerr << "error: " << name << "." << t.value("exportName", "")
                  << ": " << parsed.status().message() << "\n";
        return 1;
      }
      exports.push_back({name, t.value("exportName", ""), *parsed});
    }
  }
  const std::string ts = compute::GenerateTypeScript(exports);
  if (a.out.empty()) {
    std::cout << ts;
    return 0;
  }
  std::ofstream out(a.out, std::ios::binary | std::ios::trunc);
  out << ts;
  out.close();
  if (!out) {
    std::cerr << "error: cannot write " << a.out << "\n";
    return 1;
  }
  std::cout << "wrote " << exports.size() << " typed export(s) to " << a.out
            << "\n";
  return 0;
}

void AddCommon(CLI::App* cmd, Common* c) {
  cmd->add_option(
      "--url", c->url,
      "The server (env TESSERA_URL; default http://127.0.0.1:4321)");
  cmd->add_option("--token", c->token,
                  "A manage_compute / view token (env TESSERA_ADMIN_TOKEN, "
                  "else the dev secrets of --app or the current directory)");
  cmd->add_option("--app", c->app_dir,
                  "App directory whose dev admin token to use");
}

}  // namespace

void RegisterComputeCommands(CLI::App& app, int* exit_code) {
  CLI::App* compute = app.add_subcommand(
      "compute", "Compute modules on a running server (docs/compute.md)");
  compute->require_subcommand(1);
  auto sub = [&](const char* name, const char* help) {
    auto args = std::make_shared<Args>();
    CLI::App* cmd = compute->add_subcommand(name, help);
    AddCommon(cmd, &args->common);
    return std::pair{cmd, args};
  };
  auto set = [exit_code](CLI::App* cmd, std::function<int()> run) {
    cmd->callback([exit_code, run] { *exit_code = run(); });
  };
  auto print_modules = [](const json& m) {
    std::cout << ModuleLine(m) << "\n";
  };

  {
    auto [cmd, a] = sub("deploy",
                        "Deploy a module's sources from a directory "
                        "and wait for the compile");
    cmd->add_option("DIR", a->dir, "A Rust crate or a C++ source directory")
        ->required();
    cmd->add_option("--module", a->module,
                    "The module's name (default: the directory's name)");
    cmd->add_flag("--no-wait", a->no_wait, "Do not wait for the compile");
    set(cmd, [a] { return Deploy(*a); });
  }
  {
    auto [cmd, a] = sub("versions", "A module's versions, newest first");
    cmd->add_option("MODULE", a->module)->required();
    cmd->add_option("--limit", a->limit)->capture_default_str();
    set(cmd, [a] {
      return Run(a->common, "GET",
                 "/api/compute/modules/" + Enc(a->module) +
                     "/versions?limit=" + std::to_string(a->limit),
                 nullptr, [](const json& r) {
                   for (const json& v : r.value("versions", json::array())) {
                     std::cout << VersionLine(v) << "\n";
                   }
                 });
    });
  }
  for (const char* verb : {"enable", "disable"}) {
    auto [cmd, a] =
        sub(verb, verb[0] == 'e' ? "Enable a module" : "Disable a module");
    cmd->add_option("MODULE", a->module)->required();
    const bool on = verb[0] == 'e';
    set(cmd, [a, on, print_modules] {
      return Run(a->common, "PUT",
                 "/api/compute/modules/" + Enc(a->module) + "/enabled",
                 json{{"enabled", on}}, print_modules);
    });
  }
  {
    auto [cmd, a] = sub("trigger", "Bind a tick, event or invoke trigger");
    cmd->add_option("MODULE", a->module)->required();
    cmd->add_option("--tick", a->tick, "Tick rate in Hz");
    cmd->add_option("--event", a->event, "A compute event's name");
    cmd->add_option("--debounce", a->debounce, "Event debounce in ms");
    cmd->add_option("--invoke", a->invoke, "An export to publish");
    cmd->add_option("--policy", a->policy, "The invoke policy, JSON");
    cmd->add_option("--contract", a->contract, "The typed contract, JSON");
    set(cmd, [a] { return Trigger(*a); });
  }
  {
    auto [cmd, a] = sub("invoke", "Call a module's export");
    cmd->add_option("MODULE", a->module)->required();
    cmd->add_option("EXPORT", a->export_name)->required();
    cmd->add_option("PARAMS", a->params, "The params, a JSON object");
    set(cmd, [a] { return Invoke(*a); });
  }
  {
    auto [cmd, a] = sub("runs", "Run history, newest first");
    cmd->add_option("MODULE", a->module);
    cmd->add_flag("--failed", a->failed, "Failed runs only");
    cmd->add_option("--limit", a->limit)->capture_default_str();
    set(cmd, [a] {
      std::string q = "/api/compute/runs?limit=" + std::to_string(a->limit);
      if (!a->module.empty()) q += "&module=" + Enc(a->module);
      if (a->failed) q += "&success=false";
      return Run(a->common, "GET", q, nullptr, [](const json& r) {
        for (const json& run : r.value("runs", json::array())) {
          std::cout << Time(run.value("startedAt", int64_t{0})) << " "
                    << run.value("module", "") << " v"
                    << run.value("versionNo", 0) << " "
                    << run.value("triggerSource", "") << " "
                    << run.value("entry", "") << " "
                    << (run.value("success", false) ? "ok" : "FAILED") << " "
                    << run.value("durationUs", 0) << "us fuel "
                    << run.value("fuelUsed", 0);
          if (!run.value("errorMessage", "").empty()) {
            std::cout << " error: " << run.value("errorMessage", "");
          }
          if (!run.value("circuitAction", "").empty()) {
            std::cout << " circuit: " << run.value("circuitAction", "");
          }
          std::cout << " flow " << run.value("flowId", "") << "\n";
        }
      });
    });
  }
  {
    auto [cmd, a] = sub("logs", "Module log lines, newest first");
    cmd->add_option("MODULE", a->module);
    cmd->add_option("--limit", a->limit)->capture_default_str();
    set(cmd, [a] {
      std::string q = "/api/compute/logs?limit=" + std::to_string(a->limit);
      if (!a->module.empty()) q += "&module=" + Enc(a->module);
      return Run(a->common, "GET", q, nullptr, [](const json& r) {
        for (const json& l : r.value("logs", json::array())) {
          std::cout << Time(l.value("ts", int64_t{0})) << " "
                    << l.value("module", "") << " [" << l.value("level", 0)
                    << "] " << l.value("triggerSource", "") << ": "
                    << l.value("message", "") << "\n";
        }
      });
    });
  }
  {
    auto [cmd, a] = sub("stats", "Activity over a window");
    cmd->add_option("--window", a->window, "Minutes")->capture_default_str();
    set(cmd, [a] {
      return Run(
          a->common, "GET",
          "/api/compute/stats?windowMinutes=" + std::to_string(a->window),
          nullptr, [](const json& s) { std::cout << s.dump(2) << "\n"; });
    });
  }
  {
    auto [cmd, a] = sub("templates", "The bundled module templates");
    set(cmd, [a] {
      return Run(a->common, "GET", "/api/compute/templates", nullptr,
                 [](const json& r) {
                   for (const json& t : r.value("templates", json::array())) {
                     std::cout << t.value("name", "") << " ("
                               << t.value("language", "")
                               << "): " << t.value("description", "") << "\n";
                   }
                 });
    });
  }
  {
    auto [cmd, a] = sub("deploy-template", "Deploy a bundled template");
    cmd->add_option("TEMPLATE", a->template_name)->required();
    cmd->add_option("MODULE", a->module, "The module (default: the template)");
    cmd->add_flag("--no-wait", a->no_wait, "Do not wait for the compile");
    set(cmd, [a] {
      Result<Api> api = Api::Connect(a->common);
      if (!api.ok()) {
        std::cerr << "error: " << api.status().message() << "\n";
        return 1;
      }
      json body = json::object();
      if (!a->module.empty()) body["module"] = a->module;
      Result<Reply> r = api->Call(
          "POST", "/api/compute/templates/" + Enc(a->template_name) + "/deploy",
          body);
      if (!r.ok() || !r->ok()) return Fail(r);
      const std::string module = r->body.value("module", a->template_name);
      std::cout << module << ": deployed version "
                << r->body.value("versionNo", 0) << " of template "
                << a->template_name << "\n";
      if (a->no_wait) return 0;
      return WaitForCompile(*api, module, r->body.value("versionNo", 0));
    });
  }
  {
    auto [cmd, a] = sub("types", "TypeScript for the invoke contracts");
    cmd->add_option("--out", a->out, "Write to FILE instead of stdout");
    set(cmd, [a] { return Types(*a); });
  }
}

}  // namespace tessera::cli
