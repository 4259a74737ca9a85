// Filters over rows: parsing (ParseFilter) and the reference semantics
// (Matches) the stores implement in SQL (schema.h). A condition on a field
// without a value (null) is false for every op but the null test, as in
// SQL (so {"ne": 3} does not match rows where the field is null).
#include <nlohmann/json.hpp>

#include "data/schema.h"
#include "data/values_internal.h"

namespace tessera::data {

using nlohmann::json;

namespace {

constexpr size_t kMaxInValues = 100;

struct OpName {
  const char* name;
  FilterOp op;
};
constexpr OpName kOps[] = {{"eq", FilterOp::kEq}, {"ne", FilterOp::kNe},
                           {"lt", FilterOp::kLt}, {"le", FilterOp::kLe},
                           {"gt", FilterOp::kGt}, {"ge", FilterOp::kGe},
                           {"in", FilterOp::kIn}};

Status BadFilter(const std::string& text) {
  return DataError(codes::kBadFilter, text);
}

// A filter value of the field's type in its stored form.
Result<std::string> CheckFilterValue(const std::string& path, FieldType type,
                                     const json& value) {
  if (value.is_null()) {
    return BadFilter(path + ": null only as {\"" +
                     path.substr(path.find('.') + 1) + "\": null}");
  }
  Result<json> checked = internal::CheckValue(type, value);
  if (!checked.ok()) return BadFilter(path + ": " + checked.status().message());
  return checked->dump();
}

// -1, 0, 1 comparing two non-null stored values of `type`.
int Compare(FieldType type, const json& a, const json& b) {
  switch (type) {
    case FieldType::kInt: {
      if (!a.is_number() || !b.is_number()) break;
      int64_t x = a.get<int64_t>(), y = b.get<int64_t>();
      return x < y ? -1 : (x > y ? 1 : 0);
    }
    case FieldType::kFloat: {
      if (!a.is_number() || !b.is_number()) break;
      double x = a.get<double>(), y = b.get<double>();
      return x < y ? -1 : (x > y ? 1 : 0);
    }
    case FieldType::kString: {
      if (!a.is_string() || !b.is_string()) break;
      int c = a.get_ref<const std::string&>().compare(
          b.get_ref<const std::string&>());
      return c < 0 ? -1 : (c > 0 ? 1 : 0);
    }
    default:
      break;
  }
  std::string x = a.dump(), y = b.dump();
  int c = x.compare(y);
  return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

}  // namespace

Result<Filter> ParseFilter(const EntityType& type, std::string_view json_text) {
  Filter filter;
  if (json_text.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    return filter;
  }
  json root = json::parse(json_text, nullptr, false);
  if (root.is_discarded())
    return BadFilter(type.name + ": the filter is not JSON");
  if (!root.is_object()) {
    return BadFilter(type.name +
                     ": the filter must be a JSON object "
                     "{\"field\": value or {\"op\": value}}");
  }
  for (auto& [key, value] : root.items()) {
    std::string path = type.name + "." + key;
    FieldType ftype = FieldType::kString;
    if (key != "id") {
      const FieldSpec* field = type.FindField(key);
      if (field == nullptr) {
        return DataError(codes::kUnknownField,
                         type.name + " has no field " + internal::Quote(key));
      }
      ftype = field->type;
    }
    if (value.is_null()) {
      filter.conditions.push_back({key, FilterOp::kIsNull, {}});
      continue;
    }
    if (!value.is_object()) {
      Result<std::string> v = CheckFilterValue(path, ftype, value);
      if (!v.ok()) return v.status();
      filter.conditions.push_back({key, FilterOp::kEq, {*v}});
      continue;
    }
    if (value.empty()) {
      return BadFilter(path +
                       ": an empty condition (ops: eq ne lt le gt ge in)");
    }
    for (auto& [op_name, operand] : value.items()) {
      const OpName* op = nullptr;
      for (const OpName& o : kOps) {
        if (op_name == o.name) op = &o;
      }
      if (op == nullptr) {
        return BadFilter(path + ": unknown op " + internal::Quote(op_name) +
                         " (ops: eq ne lt le gt ge in)");
      }
      bool ordered = op->op == FilterOp::kLt || op->op == FilterOp::kLe ||
                     op->op == FilterOp::kGt || op->op == FilterOp::kGe;
      if (ordered && (ftype == FieldType::kBool || ftype == FieldType::kJson)) {
        return BadFilter(path + ": " + op_name + " does not apply to a " +
                         FieldTypeName(ftype) + " field (eq ne in)");
      }
      Condition condition{key, op->op, {}};
      if (op->op == FilterOp::kIn) {
        if (!operand.is_array() || operand.empty() ||
            operand.size() > kMaxInValues) {
          return BadFilter(path + ": in takes an array of 1.." +
                           std::to_string(kMaxInValues) + " values");
        }
        for (const json& v : operand) {
          Result<std::string> checked = CheckFilterValue(path, ftype, v);
          if (!checked.ok()) return checked.status();
          condition.values_json.push_back(*checked);
        }
      } else {
        Result<std::string> checked = CheckFilterValue(path, ftype, operand);
        if (!checked.ok()) return checked.status();
        condition.values_json.push_back(*checked);
      }
      filter.conditions.push_back(std::move(condition));
    }
  }
  return filter;
}

bool Matches(const EntityType& type, const Row& row, const Filter& filter) {
  json fields = json::parse(row.fields_json, nullptr, false);
  if (!fields.is_object()) return false;
  for (const Condition& c : filter.conditions) {
    json value;
    FieldType ftype = FieldType::kString;
    if (c.field == "id") {
      value = row.id;
    } else {
      const FieldSpec* field = type.FindField(c.field);
      if (field == nullptr) return false;
      ftype = field->type;
      auto it = fields.find(c.field);
      if (it != fields.end()) value = *it;
    }
    if (c.op == FilterOp::kIsNull) {
      if (!value.is_null()) return false;
      continue;
    }
    if (value.is_null()) return false;
    bool ok = false;
    if (c.op == FilterOp::kIn) {
      for (const std::string& v : c.values_json) {
        ok = ok || Compare(ftype, value, json::parse(v, nullptr, false)) == 0;
      }
    } else {
      if (c.values_json.empty()) return false;
      int cmp =
          Compare(ftype, value, json::parse(c.values_json[0], nullptr, false));
      switch (c.op) {
        case FilterOp::kEq:
          ok = cmp == 0;
          break;
        case FilterOp::kNe:
          ok = cmp != 0;
          break;
        case FilterOp::kLt:
          ok = cmp < 0;
          break;
        case FilterOp::kLe:
          ok = cmp <= 0;
          break;
        case FilterOp::kGt:
          ok = cmp > 0;
          break;
        case FilterOp::kGe:
          ok = cmp >= 0;
          break;
        default:
          ok = false;
      }
    }
    if (!ok) return false;
  }
  return true;
}

}  // namespace tessera::data
