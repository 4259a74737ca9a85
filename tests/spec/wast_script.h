// A .wast script converted by Debian's `wast2json` (wabt 1.0.32): the
// commands of its JSON, with module files beside it.
#ifndef TESSERA_TESTS_SPEC_WAST_SCRIPT_H_
#define TESSERA_TESTS_SPEC_WAST_SCRIPT_H_

#include <string>
#include <vector>

#include "common/status.h"

namespace tessera::spec {

// A value as wast2json writes it: a type ("i32", "f32", ...) and its bits
// in decimal, or "nan:canonical" / "nan:arithmetic" for expected floats.
struct Value {
  std::string type;
  std::string value;
};

struct Action {
  std::string type;    // "invoke" or "get"
  std::string module;  // "$name", or empty for the latest module
  std::string field;
  std::vector<Value> args;
};

struct Command {
  std::string type;  // "module", "assert_return", ...
  int line = 0;
  std::string filename;     // module commands and assertions on modules
  std::string module_type;  // "binary" or "text" (assertions on modules)
  std::string name;         // `module`: its $name; `register`: whose
  std::string as;           // `register`: the import module name
  Action action;
  std::vector<Value> expected;
  std::string text;  // the expected failure, as the spec words it
};

struct Script {
  std::string name;  // "i32.wast"
  std::string dir;   // where the JSON and module files are
  std::vector<Command> commands;
  // Errors wast2json printed (it still writes the modules it complained
  // about), for the report.
  std::string converter_errors;
};

// Runs `wast2json <wast_path> -o <out_dir>/<stem>.json` and reads the
// result. Errors: kIo when wast2json cannot run or fails, kInvalidArgument
// for JSON it should not have written.
Result<Script> ConvertScript(const std::string& wast_path,
                             const std::string& out_dir);

}  // namespace tessera::spec

#endif  // TESSERA_TESTS_SPEC_WAST_SCRIPT_H_
