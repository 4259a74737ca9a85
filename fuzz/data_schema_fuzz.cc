// libFuzzer target: the app's data section and the values and filters that
// reach it from untrusted callers (src/data/schema.cc, values.cc,
// filter.cc). The input is split at NUL bytes into a "data" section, a
// fields object and a filter. Checks what must hold whatever the bytes:
// refusals carry a message, an accepted schema round-trips through
// DataSchemaJson and diffs to nothing against itself, accepted fields are
// JSON that checks again to the same text, and rows' API shape is JSON.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "data/schema.h"

namespace {

using namespace tessera::data;

void Check(bool ok) {
  if (!ok) std::abort();
}

std::vector<std::string_view> Split(std::string_view text, size_t parts) {
  std::vector<std::string_view> out;
  while (out.size() + 1 < parts) {
    const size_t nul = text.find('\0');
    if (nul == std::string_view::npos) break;
    out.push_back(text.substr(0, nul));
    text.remove_prefix(nul + 1);
  }
  out.push_back(text);
  while (out.size() < parts) out.emplace_back();
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::vector<std::string_view> parts = Split(input, 3);
  tessera::Result<DataSchema> schema = ParseDataSchema(parts[0], "fuzz: data");
  if (!schema.ok()) {
    Check(!schema.status().message().empty());
    return 0;
  }
  const std::string text = DataSchemaJson(*schema);
  tessera::Result<DataSchema> again = ParseDataSchema(text, "again");
  Check(again.ok());
  Check(DataSchemaJson(*again) == text);
  auto diff = DiffSchemas(*schema, *again);
  Check(diff.ok() && diff->empty());

  for (const EntityType& type : schema->types) {
    for (bool insert : {true, false}) {
      tessera::Result<std::string> fields = CheckFields(type, parts[1], insert);
      if (!fields.ok()) {
        Check(!ErrorCodeOf(fields.status().message()).empty());
        continue;
      }
      Check(nlohmann::json::parse(*fields, nullptr, false).is_object());
      tessera::Result<std::string> twice = CheckFields(type, *fields, insert);
      Check(twice.ok() && *twice == *fields);
      Row row{type.name, "r1", 1, 2, 3, *fields};
      Check(!nlohmann::json::parse(RowJson(type, row), nullptr, false)
                 .is_discarded());
      tessera::Result<Filter> filter = ParseFilter(type, parts[2]);
      if (!filter.ok()) {
        Check(!ErrorCodeOf(filter.status().message()).empty());
        continue;
      }
      (void)Matches(type, row, *filter);
    }
  }
  return 0;
}
