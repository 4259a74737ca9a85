// Parsing of a kind's "rules" (rules.h): patterns and modes, each refusal
// naming the rule and field.
#include <string>
#include <vector>

#include "realm/config_fields.h"
#include "realm/rules.h"

namespace tessera::realm {
namespace {

using Kind = PatternSegment::Kind;

bool HasAvatar(const std::vector<PatternSegment>& pattern) {
  for (const PatternSegment& s : pattern) {
    if (s.kind == Kind::kAvatar) return true;
  }
  return false;
}

Result<Rule> ParseRule(const Json& obj, const std::string& where) {
  using internal::FieldError;
  if (!obj.is_object()) {
    return FieldError(where, "",
                      "expected an object, got " + internal::Describe(obj));
  }
  TESSERA_RETURN_IF_ERROR(
      internal::CheckKnownFields(obj, where, {"path", "write", "read"}));
  Rule rule;
  auto path = obj.find("path");
  if (path == obj.end()) return FieldError(where, "", "missing \"path\"");
  if (!path->is_string()) {
    return FieldError(where, "path",
                      "expected a string, got " + internal::Describe(*path));
  }
  rule.text = path->get<std::string>();
  Result<std::vector<PatternSegment>> pattern = ParsePattern(rule.text);
  if (!pattern.ok())
    return FieldError(where, "path", pattern.status().message());
  rule.pattern = std::move(pattern.value());

  if (auto w = obj.find("write"); w != obj.end()) {
    const std::string v = w->is_string() ? w->get<std::string>() : "";
    if (v == "server") {
      rule.write = WriteMode::kServer;
    } else if (v == "everyone") {
      rule.write = WriteMode::kEveryone;
    } else if (v == "owner") {
      rule.write = WriteMode::kOwner;
    } else if (v == "append") {
      rule.write = WriteMode::kAppend;
    } else {
      return FieldError(where, "write",
                        "expected \"server\", \"everyone\", \"owner\" or "
                        "\"append\", got " +
                            w->dump());
    }
  }
  if (auto r = obj.find("read"); r != obj.end()) {
    const std::string v = r->is_string() ? r->get<std::string>() : "";
    if (v == "everyone") {
      rule.read = ReadMode::kEveryone;
    } else if (v == "owner") {
      rule.read = ReadMode::kOwner;
    } else if (v == "server") {
      rule.read = ReadMode::kServer;
    } else {
      return FieldError(
          where, "read",
          "expected \"everyone\", \"owner\" or \"server\", got " + r->dump());
    }
  }
  if (!rule.write && !rule.read) {
    return FieldError(where, "", "needs \"write\" or \"read\" (or both)");
  }
  const bool owner =
      rule.write == WriteMode::kOwner || rule.read == ReadMode::kOwner;
  if (owner && !HasAvatar(rule.pattern)) {
    return FieldError(where, "path",
                      "an owner rule needs an {avatar} segment naming the "
                      "owner, e.g. \"players/{avatar}/**\"; got \"" +
                          rule.text + "\"");
  }
  if (rule.write == WriteMode::kAppend &&
      rule.pattern.back().kind == Kind::kRest) {
    return FieldError(where, "path",
                      "an append rule names one list path; drop the "
                      "trailing \"**\" from \"" +
                          rule.text + "\"");
  }
  return rule;
}

}  // namespace

Result<std::vector<PatternSegment>> ParsePattern(std::string_view text) {
  const std::string quoted = "\"" + std::string(text) + "\"";
  if (text.empty()) {
    return InvalidArgument("empty pattern; \"**\" is the whole document");
  }
  std::vector<PatternSegment> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t slash = text.find('/', start);
    if (slash == std::string_view::npos) slash = text.size();
    std::string_view seg = text.substr(start, slash - start);
    start = slash + 1;
    if (seg.empty()) return InvalidArgument("empty segment in " + quoted);
    if (!out.empty() && out.back().kind == Kind::kRest) {
      return InvalidArgument("\"**\" must be the last segment in " + quoted);
    }
    if (out.size() == kMaxPatternSegments) {
      return InvalidArgument("more than " +
                             std::to_string(kMaxPatternSegments) +
                             " segments in " + quoted);
    }
    PatternSegment p;
    if (seg == "**") {
      p.kind = Kind::kRest;
    } else if (seg == "*") {
      p.kind = Kind::kStar;
    } else if (seg == "{avatar}") {
      if (HasAvatar(out)) {
        return InvalidArgument("more than one {avatar} in " + quoted);
      }
      p.kind = Kind::kAvatar;
    } else if (seg.front() == '{' && seg.back() == '}') {
      return InvalidArgument("unknown placeholder " + std::string(seg) +
                             " in " + quoted + "; the only one is {avatar}");
    } else if (seg.find_first_of("*{}") != std::string_view::npos) {
      return InvalidArgument("\"" + std::string(seg) + "\" in " + quoted +
                             ": *, ** and {avatar} must be whole segments");
    } else {
      p.text = std::string(seg);
    }
    out.push_back(std::move(p));
  }
  return out;
}

Result<Rules> ParseRules(const Json& rules, std::string_view where) {
  if (!rules.is_array()) {
    return internal::FieldError(
        where, "",
        "expected an array of rules, got " + internal::Describe(rules));
  }
  if (rules.size() > kMaxRules) {
    return internal::FieldError(where, "",
                                "more than " + std::to_string(kMaxRules) +
                                    " rules; use * and ** to merge some");
  }
  Rules out;
  for (size_t i = 0; i < rules.size(); ++i) {
    Result<Rule> rule =
        ParseRule(rules[i], std::string(where) + "[" + std::to_string(i) + "]");
    if (!rule.ok()) return rule.status();
    out.rules.push_back(std::move(rule.value()));
  }
  return out;
}

}  // namespace tessera::realm
