// Field values, ids, rows' API shape and the data error codes (schema.h).
#include <openssl/evp.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <random>

#include "data/schema.h"
#include "data/values_internal.h"

namespace tessera::data {

using nlohmann::json;

namespace {

constexpr int64_t kMaxSafeInt = int64_t{1} << 53;
constexpr size_t kQuoteBytes = 64;

bool IdChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9') || c == '_' || c == '.' || c == ':' || c == '-';
}

const char* JsonKind(const json& v) {
  switch (v.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::boolean:
      return "bool";
    case json::value_t::string:
      return "string";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
      return "int";
    case json::value_t::number_float:
      return "float";
    case json::value_t::array:
      return "array";
    default:
      return "object";
  }
}

}  // namespace

namespace internal {

std::string Quote(const json& value) {
  std::string text = value.dump(-1, ' ', false, json::error_handler_t::replace);
  if (text.size() > kQuoteBytes) {
    text.resize(kQuoteBytes);
    // Do not leave half a UTF-8 sequence behind.
    while (!text.empty() &&
           (static_cast<unsigned char>(text.back()) & 0xC0) == 0x80)
      text.pop_back();
    if (!text.empty() && (static_cast<unsigned char>(text.back()) & 0x80))
      text.pop_back();
    text += "...";
  }
  return text;
}

Result<json> CheckValue(FieldType type, const json& value) {
  auto wrong = [&](const char* expected) {
    return InvalidArgument(std::string("expected ") + expected + ", got " +
                           JsonKind(value) + " " + Quote(value));
  };
  switch (type) {
    case FieldType::kString:
      if (!value.is_string()) return wrong("string");
      if (value.get_ref<const std::string&>().size() > kMaxStringBytes) {
        return InvalidArgument("a string is at most " +
                               std::to_string(kMaxStringBytes) + " bytes");
      }
      return value;
    case FieldType::kInt: {
      if (value.is_number_unsigned()) {
        if (value.get<uint64_t>() > static_cast<uint64_t>(kMaxSafeInt)) {
          return InvalidArgument("int out of range (|v| <= 2^53), got " +
                                 Quote(value));
        }
        return json(static_cast<int64_t>(value.get<uint64_t>()));
      }
      if (!value.is_number_integer()) return wrong("int");
      int64_t v = value.get<int64_t>();
      if (v > kMaxSafeInt || v < -kMaxSafeInt) {
        return InvalidArgument("int out of range (|v| <= 2^53), got " +
                               Quote(value));
      }
      return json(v);
    }
    case FieldType::kFloat: {
      if (!value.is_number()) return wrong("float");
      double d = value.get<double>();
      if (!std::isfinite(d)) return wrong("a finite float");
      return json(d);
    }
    case FieldType::kBool:
      if (!value.is_boolean()) return wrong("bool");
      return value;
    case FieldType::kJson: {
      std::string text = value.dump();
      if (text.size() > kMaxJsonFieldBytes) {
        return InvalidArgument("a json value is at most " +
                               std::to_string(kMaxJsonFieldBytes) + " bytes");
      }
      // As stored: numbers out of range (written as null) read back so.
      return json::parse(text);
    }
  }
  return wrong("a value");
}

bool ValidName(std::string_view name, bool upper) {
  if (name.empty() || name.size() > 64) return false;
  char first = name[0];
  if (upper ? !(first >= 'A' && first <= 'Z') : !(first >= 'a' && first <= 'z'))
    return false;
  for (char c : name.substr(1)) {
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
          (c >= '0' && c <= '9') || c == '_'))
      return false;
  }
  return true;
}

bool IsReserved(std::string_view name) {
  for (const char* r : kReservedFields) {
    if (name == r) return true;
  }
  return false;
}

}  // namespace internal

Status DataError(std::string_view code, std::string_view text) {
  StatusCode status = StatusCode::kInvalidArgument;
  if (code == codes::kRowNotFound || code == codes::kUnknownType) {
    status = StatusCode::kNotFound;
  } else if (code == codes::kRowExists || code == codes::kUniqueViolation) {
    status = StatusCode::kAlreadyExists;
  }
  std::string message(code);
  message += ": ";
  message += text;
  return Status(status, std::move(message));
}

std::string_view ErrorCodeOf(std::string_view message) {
  size_t i = 0;
  while (i < message.size() &&
         ((message[i] >= 'A' && message[i] <= 'Z') ||
          (i > 0 &&
           ((message[i] >= '0' && message[i] <= '9') || message[i] == '_')))) {
    ++i;
  }
  if (i == 0 || i >= message.size() || message[i] != ':') return {};
  return message.substr(0, i);
}

Result<std::string> CheckFields(const EntityType& type,
                                std::string_view fields_json, bool insert) {
  json in = json::parse(fields_json, nullptr, false);
  if (in.is_discarded() || !in.is_object()) {
    return DataError(codes::kBadValue,
                     type.name + ": the fields must be a JSON object");
  }
  json out = json::object();
  for (auto& [key, value] : in.items()) {
    if (internal::IsReserved(key)) {
      return DataError(codes::kBadValue, type.name + "." + key + ": \"" + key +
                                             "\" is set by the store");
    }
    const FieldSpec* field = type.FindField(key);
    if (field == nullptr) {
      return DataError(codes::kUnknownField,
                       type.name + " has no field " + internal::Quote(key));
    }
    if (value.is_null()) {
      if (field->required) {
        return DataError(codes::kBadValue,
                         type.name + "." + key + ": required, cannot be null");
      }
      if (!insert) out[key] = nullptr;  // clears the field
      continue;
    }
    Result<json> checked = internal::CheckValue(field->type, value);
    if (checked.ok() && checked->is_null()) {
      if (!insert) out[key] = nullptr;
      continue;
    }
    if (!checked.ok()) {
      return DataError(codes::kBadValue, type.name + "." + key + ": " +
                                             checked.status().message());
    }
    out[key] = std::move(checked.value());
  }
  if (insert) {
    for (const FieldSpec& field : type.fields) {
      if (out.contains(field.name)) continue;
      if (!field.default_json.empty()) {
        out[field.name] = json::parse(field.default_json);
      } else if (field.required) {
        return DataError(codes::kBadValue,
                         type.name + "." + field.name + ": required");
      }
    }
  }
  std::string text = out.dump();
  if (text.size() > kMaxRowBytes) {
    return DataError(codes::kBadValue,
                     type.name + ": a row's fields are at most " +
                         std::to_string(kMaxRowBytes) + " bytes");
  }
  return text;
}

Status CheckId(std::string_view id) {
  if (id.empty()) return DataError(codes::kBadValue, "id: empty");
  if (id.size() > kMaxIdBytes) {
    return DataError(
        codes::kBadValue,
        "id: longer than " + std::to_string(kMaxIdBytes) + " bytes");
  }
  for (char c : id) {
    if (!IdChar(c)) {
      return DataError(codes::kBadValue,
                       "id " + internal::Quote(json(std::string(id))) +
                           ": only letters, digits and _ . : - are allowed");
    }
  }
  return Status::Ok();
}

std::string RowJson(const EntityType& type, const Row& row) {
  nlohmann::ordered_json out;
  out["id"] = row.id;
  out["createdAt"] = row.created_ms;
  out["updatedAt"] = row.updated_ms;
  out["version"] = row.version;
  json fields = json::parse(row.fields_json, nullptr, false);
  if (!fields.is_object()) fields = json::object();
  for (const FieldSpec& field : type.fields) {
    auto it = fields.find(field.name);
    if (it == fields.end()) {
      out[field.name] = nullptr;
    } else {
      out[field.name] = nlohmann::ordered_json::parse(it->dump());
    }
  }
  return out.dump(-1, ' ', false, json::error_handler_t::replace);
}

Result<std::string> CanonicalJsonHash(std::string_view json_text) {
  json value = json::parse(json_text, nullptr, false);
  if (value.is_discarded()) {
    return InvalidArgument("not JSON: " +
                           std::string(json_text.substr(0, kQuoteBytes)));
  }
  // nlohmann::json keeps object keys sorted, so dump() is canonical.
  std::string canonical = value.dump();
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(canonical.data(), canonical.size(), md, &len, EVP_sha256(),
             nullptr);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(len * 2);
  for (unsigned int i = 0; i < len; ++i) {
    hex.push_back(kHex[md[i] >> 4]);
    hex.push_back(kHex[md[i] & 0xF]);
  }
  return hex;
}

std::string NewRowId(int64_t now_ms) {
  static constexpr char kDigits[] = "0123456789abcdefghijklmnopqrstuvwxyz";
  std::string id(20, '0');
  uint64_t ms = now_ms < 0 ? 0 : static_cast<uint64_t>(now_ms);
  for (int i = 8; i >= 0; --i) {
    id[i] = kDigits[ms % 36];
    ms /= 36;
  }
  thread_local std::mt19937_64 rng{std::random_device{}()};
  std::uniform_int_distribution<int> digit(0, 35);
  for (int i = 9; i < 20; ++i) id[i] = kDigits[digit(rng)];
  return id;
}

}  // namespace tessera::data
