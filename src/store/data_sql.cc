#include "store/data_sql.h"

#include <cmath>
#include <cstring>
#include <set>
#include <utility>

#include "data/schema.h"

namespace tessera::store {

using data::EntityType;
using data::FieldSpec;
using data::FieldType;
using nlohmann::json;

namespace {

const char* OpSql(data::FilterOp op) {
  switch (op) {
    case data::FilterOp::kEq:
      return " = ";
    case data::FilterOp::kNe:
      return " <> ";
    case data::FilterOp::kLt:
      return " < ";
    case data::FilterOp::kLe:
      return " <= ";
    case data::FilterOp::kGt:
      return " > ";
    case data::FilterOp::kGe:
      return " >= ";
    default:
      return " = ";
  }
}

std::string Dump(const json& value) {
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace

bool SafeName(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name) {
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
          (c >= '0' && c <= '9') || c == '_')) {
      return false;
    }
  }
  return true;
}

Status BadName(std::string_view what, std::string_view name) {
  return Internal("data store: " + std::string(what) + " name \"" +
                  std::string(name) + "\" cannot be an SQL identifier");
}

std::string SelectList(const SqlDialect& dialect, const EntityType& type) {
  std::string out = "id, created_ms, updated_ms, version";
  for (const FieldSpec& f : type.fields) out += ", " + dialect.column(f.name);
  return out;
}

bool SqlValue::operator==(const SqlValue& o) const {
  if (kind != o.kind) return false;
  switch (kind) {
    case Kind::kNull:
      return true;
    case Kind::kText:
      return text == o.text;
    case Kind::kInt:
      return i == o.i;
    case Kind::kReal:
      return d == o.d;
  }
  return false;
}

Result<SqlValue> ToSql(FieldType type, const json& value) {
  SqlValue out;
  if (value.is_null()) return out;
  auto wrong = [&](const char* expected) {
    return InvalidArgument(std::string("expected ") + expected + ", got " +
                           Dump(value));
  };
  switch (type) {
    case FieldType::kString:
      if (!value.is_string()) return wrong("a string");
      out.kind = SqlValue::Kind::kText;
      out.text = value.get<std::string>();
      if (out.text.find('\0') != std::string::npos) {
        return InvalidArgument("a string cannot hold U+0000");
      }
      return out;
    case FieldType::kInt:
      if (value.is_number_unsigned()) {
        if (value.get<uint64_t>() > uint64_t{INT64_MAX}) return wrong("an int");
      } else if (!value.is_number_integer()) {
        return wrong("an int");
      }
      out.kind = SqlValue::Kind::kInt;
      out.i = value.get<int64_t>();
      return out;
    case FieldType::kFloat:
      if (!value.is_number() || !std::isfinite(value.get<double>())) {
        return wrong("a finite float");
      }
      out.kind = SqlValue::Kind::kReal;
      out.d = value.get<double>();
      return out;
    case FieldType::kBool:
      if (!value.is_boolean()) return wrong("a bool");
      out.kind = SqlValue::Kind::kInt;
      out.i = value.get<bool>() ? 1 : 0;
      return out;
    case FieldType::kJson:
      // Keys sorted (nlohmann's object), as the filters' values are: equal
      // JSON values are equal text.
      out.kind = SqlValue::Kind::kText;
      out.text = Dump(value);
      return out;
  }
  return wrong("a value");
}

json FromSql(FieldType type, const SqlValue& value) {
  if (value.kind == SqlValue::Kind::kNull) return nullptr;
  switch (type) {
    case FieldType::kString:
      return value.text;
    case FieldType::kInt:
      return value.i;
    case FieldType::kFloat:
      return value.d;
    case FieldType::kBool:
      return value.i != 0;
    case FieldType::kJson: {
      json parsed = json::parse(value.text, nullptr, false);
      return parsed.is_discarded() ? json(nullptr) : parsed;
    }
  }
  return nullptr;
}

std::string FieldsJson(const EntityType& type,
                       const std::vector<SqlValue>& values) {
  json out = json::object();
  for (size_t i = 0; i < type.fields.size() && i < values.size(); ++i) {
    if (values[i].kind == SqlValue::Kind::kNull) continue;
    out[type.fields[i].name] = FromSql(type.fields[i].type, values[i]);
  }
  return Dump(out);
}

Result<CompiledFilter> CompileFilter(const SqlDialect& dialect,
                                     const EntityType& type,
                                     const data::Filter& filter,
                                     int first_param) {
  CompiledFilter out;
  int next = first_param;
  for (const data::Condition& c : filter.conditions) {
    FieldType ftype = FieldType::kString;
    if (c.field != "id") {
      const FieldSpec* field = type.FindField(c.field);
      if (field == nullptr) {
        return data::DataError(data::codes::kUnknownField,
                               type.name + " has no field \"" + c.field + "\"");
      }
      ftype = field->type;
    }
    const std::string column = dialect.column(c.field);
    const std::string where = type.name + "." + c.field;
    if (c.op == data::FilterOp::kIsNull) {
      out.sql += " AND " + column + " IS NULL";
      continue;
    }
    const bool ordered =
        c.op == data::FilterOp::kLt || c.op == data::FilterOp::kLe ||
        c.op == data::FilterOp::kGt || c.op == data::FilterOp::kGe;
    if (ordered && (ftype == FieldType::kBool || ftype == FieldType::kJson)) {
      return data::DataError(data::codes::kBadFilter,
                             where +
                                 ": an ordered comparison does not apply "
                                 "to a " +
                                 data::FieldTypeName(ftype) + " field");
    }
    const size_t want = c.values_json.size();
    if (c.op == data::FilterOp::kIn ? (want < 1 || want > 100) : want != 1) {
      return data::DataError(data::codes::kBadFilter,
                             where + ": wrong number of values");
    }
    std::string params;
    for (const std::string& text : c.values_json) {
      json value = json::parse(text, nullptr, false);
      Result<SqlValue> v = value.is_discarded() || value.is_null()
                               ? Result<SqlValue>(InvalidArgument(
                                     "a value that is not null JSON"))
                               : ToSql(ftype, value);
      if (!v.ok()) {
        return data::DataError(data::codes::kBadFilter,
                               where + ": " + v.status().message());
      }
      out.params.push_back(std::move(v).value());
      if (!params.empty()) params += ", ";
      params += dialect.placeholder + std::to_string(next++);
    }
    if (c.op == data::FilterOp::kIn) {
      out.sql += " AND " + column + " IN (" + params + ")";
    } else {
      out.sql += " AND " + column + OpSql(c.op) + params;
    }
  }
  return out;
}

std::string QuotedName(std::string_view s) {
  return Dump(json(std::string(s)));
}

Result<std::optional<SqlValue>> LookupValue(const EntityType& type,
                                            std::string_view field,
                                            std::string_view value_json) {
  const std::string where = type.name + "." + std::string(field);
  FieldType ftype = FieldType::kString;
  if (field != "id") {
    const FieldSpec* spec = type.FindField(field);
    if (spec == nullptr) {
      return data::DataError(data::codes::kUnknownField,
                             type.name + " has no field " + QuotedName(field));
    }
    if (type.FindIndex(field) == nullptr) {
      return data::DataError(data::codes::kNoIndex,
                             where + " has no index (lookups need one)");
    }
    ftype = spec->type;
  }
  json value = json::parse(value_json, nullptr, false);
  if (value.is_discarded()) {
    return data::DataError(data::codes::kBadValue,
                           where + ": the value is not JSON");
  }
  if (value.is_null()) return std::optional<SqlValue>();
  if (field != "id") {
    // The value checked as the field's values are (size, range, kind).
    json probe = json::object();
    probe[std::string(field)] = value;
    Result<std::string> checked =
        data::CheckFields(type, probe.dump(), /*insert=*/false);
    if (!checked.ok()) return checked.status();
    value = json::parse(*checked)[std::string(field)];
  }
  Result<SqlValue> v = ToSql(ftype, value);
  if (!v.ok()) {
    return data::DataError(data::codes::kBadValue,
                           where + ": " + v.status().message());
  }
  return std::optional<SqlValue>(std::move(v).value());
}

std::string ChangedFieldsJson(const std::vector<data::FieldChange>& fields) {
  json out = json::array();
  for (const data::FieldChange& f : fields) {
    out.push_back({{"field", f.field},
                   {"old", json::parse(f.old_json, nullptr, false)},
                   {"new", json::parse(f.new_json, nullptr, false)}});
  }
  return Dump(out);
}

std::vector<data::FieldChange> ParseChangedFields(std::string_view text) {
  std::vector<data::FieldChange> out;
  json fields = json::parse(text, nullptr, false);
  if (!fields.is_array()) return out;
  for (const json& f : fields) {
    if (!f.is_object()) continue;
    data::FieldChange c;
    c.field = f.value("field", "");
    c.old_json = f.contains("old") ? f["old"].dump() : "null";
    c.new_json = f.contains("new") ? f["new"].dump() : "null";
    out.push_back(std::move(c));
  }
  return out;
}

data::ChangeOp ChangeOpFromName(std::string_view name) {
  if (name == "updated") return data::ChangeOp::kUpdated;
  if (name == "deleted") return data::ChangeOp::kDeleted;
  return data::ChangeOp::kCreated;
}

Result<std::vector<SqlValue>> InsertValues(const EntityType& type,
                                           std::string_view fields_json) {
  Result<std::string> checked =
      data::CheckFields(type, fields_json, /*insert=*/true);
  if (!checked.ok()) return checked.status();
  json fields = json::parse(*checked, nullptr, false);
  std::vector<SqlValue> values;
  for (const FieldSpec& f : type.fields) {
    auto it = fields.find(f.name);
    Result<SqlValue> v = ToSql(f.type, it == fields.end() ? json() : *it);
    if (!v.ok()) {
      return data::DataError(
          data::codes::kBadValue,
          type.name + "." + f.name + ": " + v.status().message());
    }
    values.push_back(std::move(v).value());
  }
  return values;
}

Result<UpdatePlan> PlanUpdate(const EntityType& type,
                              const std::vector<SqlValue>& current,
                              std::string_view set_json) {
  Result<std::string> checked =
      data::CheckFields(type, set_json, /*insert=*/false);
  if (!checked.ok()) return checked.status();
  json set = json::parse(*checked, nullptr, false);
  UpdatePlan plan;
  plan.after = current;
  for (size_t i = 0; i < type.fields.size() && i < current.size(); ++i) {
    const FieldSpec& f = type.fields[i];
    auto it = set.find(f.name);
    if (it == set.end()) continue;
    Result<SqlValue> v = ToSql(f.type, *it);
    if (!v.ok()) {
      return data::DataError(
          data::codes::kBadValue,
          type.name + "." + f.name + ": " + v.status().message());
    }
    if (*v == current[i]) continue;
    plan.after[i] = std::move(v).value();
    plan.changed.push_back({f.name, FromSql(f.type, current[i]).dump(),
                            FromSql(f.type, plan.after[i]).dump()});
    plan.fields.push_back(i);
  }
  return plan;
}

data::ChangeEvent CreatedEvent(const EntityType& type, const data::Row& row,
                               std::string_view origin) {
  data::ChangeEvent event;
  event.ts_ms = row.created_ms;
  event.op = data::ChangeOp::kCreated;
  event.type = row.type;
  event.id = row.id;
  event.row_json = data::RowJson(type, row);
  event.origin = std::string(origin);
  return event;
}

data::ChangeEvent UpdatedEvent(const data::Row& row,
                               std::vector<data::FieldChange> changed,
                               std::string_view origin) {
  data::ChangeEvent event;
  event.ts_ms = row.updated_ms;
  event.op = data::ChangeOp::kUpdated;
  event.type = row.type;
  event.id = row.id;
  event.row_json = "";
  event.fields = std::move(changed);
  event.origin = std::string(origin);
  return event;
}

data::ChangeEvent DeletedEvent(const EntityType& type, const data::Row& row,
                               int64_t now_ms, std::string_view origin) {
  data::ChangeEvent event;
  event.ts_ms = now_ms;
  event.op = data::ChangeOp::kDeleted;
  event.type = type.name;
  event.id = row.id;
  event.row_json = data::RowJson(type, row);
  event.origin = std::string(origin);
  return event;
}

std::vector<std::pair<std::string, bool>> TypeIndexes(const EntityType& type) {
  std::vector<std::pair<std::string, bool>> out;
  bool owner_indexed = false;
  for (const data::IndexSpec& index : type.indexes) {
    out.emplace_back(index.field, index.unique);
    owner_indexed = owner_indexed || index.field == type.owner;
  }
  if (!type.owner.empty() && !owner_indexed)
    out.emplace_back(type.owner, false);
  return out;
}

Status ApplySchemaChanges(const data::DataSchema& applied,
                          const data::DataSchema& next,
                          const SchemaSteps& steps) {
  Result<std::vector<data::SchemaChange>> changes =
      data::DiffSchemas(applied, next);
  if (!changes.ok()) return changes.status();
  std::set<std::string> created;
  for (const data::SchemaChange& change : *changes) {
    const EntityType* type = next.Find(change.type);
    if (type == nullptr) {
      return Internal("data schema: a change names no type " + change.type);
    }
    const std::string where = type->name + "." + change.field;
    // A new type's table comes with every column and index it declares.
    if (change.kind != data::SchemaChange::Kind::kAddType &&
        created.count(type->name) > 0) {
      continue;
    }
    switch (change.kind) {
      case data::SchemaChange::Kind::kAddType:
        TESSERA_RETURN_IF_ERROR(steps.create_type(*type));
        created.insert(type->name);
        break;
      case data::SchemaChange::Kind::kAddField: {
        const FieldSpec* field = type->FindField(change.field);
        if (field == nullptr) return Internal("data schema: no field " + where);
        std::optional<SqlValue> fill;
        if (!field->default_json.empty()) {
          // Rows that existed before the field read its default.
          Result<SqlValue> v = ToSql(
              field->type, json::parse(field->default_json, nullptr, false));
          if (!v.ok()) {
            return Internal("data schema: " + where +
                            " default: " + v.status().message());
          }
          fill = std::move(v).value();
        }
        TESSERA_RETURN_IF_ERROR(steps.add_field(*type, *field, fill));
        break;
      }
      case data::SchemaChange::Kind::kAddIndex: {
        const data::IndexSpec* index = nullptr;
        for (const data::IndexSpec& i : type->indexes) {
          if (i.field == change.field) index = &i;
        }
        if (index == nullptr) return Internal("data schema: no index " + where);
        Status st = steps.add_index(*type, index->field, index->unique);
        if (st.code() == StatusCode::kAlreadyExists) {
          return Status(StatusCode::kFailedPrecondition,
                        std::string(data::codes::kUniqueViolation) + ": " +
                            where +
                            ": the new unique index meets rows with equal "
                            "values; make them unique before declaring it");
        }
        TESSERA_RETURN_IF_ERROR(st);
        break;
      }
      case data::SchemaChange::Kind::kSetOwner: {
        bool indexed = false;
        for (const data::IndexSpec& i : type->indexes) {
          indexed = indexed || i.field == type->owner;
        }
        if (!indexed) {
          TESSERA_RETURN_IF_ERROR(steps.add_index(*type, type->owner, false));
        }
        break;
      }
    }
  }
  return Status::Ok();
}

}  // namespace tessera::store
