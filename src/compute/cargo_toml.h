// A strict reader of the TOML subset a compute module's Cargo.toml may use
// (source_rules.cc checks the result): `[table]` and `[[array]]` headers
// with bare or quoted dotted keys, and `key = value` where value is a
// basic or literal string, a decimal integer, a boolean, an array (may span
// lines) or an inline table; `#` comments. Anything else (multi-line
// strings, floats, dates, dotted keys in assignments, duplicate keys or
// tables) is refused with the line number, so what the rules see is what
// cargo would read.
#ifndef TESSERA_COMPUTE_CARGO_TOML_H_
#define TESSERA_COMPUTE_CARGO_TOML_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace tessera::compute {

struct TomlEntry;

struct TomlValue {
  enum class Kind { kString, kInt, kBool, kArray, kTable };
  Kind kind = Kind::kString;
  std::string str;
  int64_t integer = 0;
  bool boolean = false;
  std::vector<TomlValue> array;
  std::vector<TomlEntry> table;  // in file order
  int line = 0;                  // 1-based line where the value starts
};

// `first = second` (named like a map's pairs).
struct TomlEntry {
  std::string first;
  TomlValue second;
};

struct TomlTable {
  std::vector<std::string> path;   // empty: the keys before any header
  bool array = false;              // [[path]]
  int line = 0;                    // the header's line (0 for the root)
  std::vector<TomlEntry> entries;  // in file order
};

// The root table first (possibly empty), then each header in file order.
// Errors: kInvalidArgument "<label>:<line>: ..." for anything outside the
// subset.
Result<std::vector<TomlTable>> ParseCargoToml(std::string_view text,
                                              std::string_view label);

}  // namespace tessera::compute

#endif  // TESSERA_COMPUTE_CARGO_TOML_H_
