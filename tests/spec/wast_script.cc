#include "wast_script.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "common/subprocess.h"

namespace tessera::spec {
namespace fs = std::filesystem;
namespace {

using Json = nlohmann::json;

std::string Str(const Json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

std::vector<Value> Values(const Json& j, const char* key) {
  std::vector<Value> out;
  auto it = j.find(key);
  if (it == j.end() || !it->is_array()) return out;
  for (const Json& v : *it) out.push_back({Str(v, "type"), Str(v, "value")});
  return out;
}

Command ToCommand(const Json& j) {
  Command c;
  c.type = Str(j, "type");
  c.line = j.value("line", 0);
  c.filename = Str(j, "filename");
  c.module_type = Str(j, "module_type");
  c.name = Str(j, "name");
  c.as = Str(j, "as");
  c.text = Str(j, "text");
  c.expected = Values(j, "expected");
  auto a = j.find("action");
  if (a != j.end() && a->is_object()) {
    c.action.type = Str(*a, "type");
    c.action.module = Str(*a, "module");
    c.action.field = Str(*a, "field");
    c.action.args = Values(*a, "args");
  }
  return c;
}

}  // namespace

Result<Script> ConvertScript(const std::string& wast_path,
                             const std::string& out_dir) {
  Script script;
  fs::path wast(wast_path);
  script.name = wast.filename().string();
  fs::path dir = fs::path(out_dir) / wast.stem();
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return IoError("cannot create " + dir.string() + ": " + ec.message());
  script.dir = dir.string();
  fs::path json_path = dir / (wast.stem().string() + ".json");
  auto run = RunProcess({"wast2json", wast_path, "-o", json_path.string()});
  if (run.ok() && run->exit_code != 0) {
    // A script of a proposal tessera refuses by design does not parse with
    // the default features: convert it with them on, so that its modules
    // reach the loader, which refuses them (reported as unsupported).
    run = RunProcess({"wast2json", "--enable-memory64",
                      "--enable-multi-memory", "--enable-tail-call",
                      "--enable-threads", "--enable-exceptions", wast_path,
                      "-o", json_path.string()});
  }
  if (!run.ok()) return run.status();
  if (run->exit_code != 0) {
    return IoError("wast2json " + script.name + " failed: " + run->output);
  }
  script.converter_errors = run->output;
  std::ifstream in(json_path);
  if (!in) return IoError("wast2json wrote no " + json_path.string());
  Json doc = Json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.contains("commands")) {
    return InvalidArgument("unreadable JSON from wast2json: " +
                           json_path.string());
  }
  for (const Json& c : doc["commands"]) script.commands.push_back(ToCommand(c));
  return script;
}

}  // namespace tessera::spec
