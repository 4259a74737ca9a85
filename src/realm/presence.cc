#include "realm/presence.h"

#include <algorithm>

#include "realm/config_fields.h"

namespace tessera::realm {
namespace {

using internal::Describe;
using internal::FieldError;

Result<PresenceConfig::Pattern> ParsePresencePattern(const Json& text,
                                                     std::string_view where,
                                                     const std::string& field) {
  if (!text.is_string()) {
    return FieldError(where, field, "expected a string, got " + Describe(text));
  }
  PresenceConfig::Pattern p;
  p.text = text.get<std::string>();
  int avatars = 0;
  size_t start = 0;
  for (;;) {
    const size_t slash = p.text.find('/', start);
    std::string segment = p.text.substr(start, slash - start);
    if (segment.empty()) {
      return FieldError(where, field,
                        "\"" + p.text + "\" has an empty segment");
    }
    if (segment == "{avatar}") {
      ++avatars;
      p.avatar_index = p.keys.size();
      segment.clear();
    } else if (segment.find('*') != std::string::npos ||
               segment.find('{') != std::string::npos) {
      return FieldError(where, field,
                        "\"" + p.text +
                            "\": presence paths are literal keys and one "
                            "{avatar}; no wildcards");
    }
    p.keys.push_back(std::move(segment));
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  if (avatars != 1) {
    return FieldError(where, field,
                      "\"" + p.text + "\" must hold {avatar} exactly once");
  }
  return p;
}

// The value at `path` in `doc`, or null when a step is missing.
const Json* Find(const Json& doc, const Path& path) {
  const Json* at = &doc;
  for (const PathSegment& segment : path) {
    const std::string& key = std::get<std::string>(segment);
    if (!at->is_object()) return nullptr;
    auto it = at->find(key);
    if (it == at->end()) return nullptr;
    at = &*it;
  }
  return at;
}

}  // namespace

Path PresenceConfig::Pattern::For(std::string_view avatar) const {
  Path out;
  for (size_t i = 0; i < keys.size(); ++i) {
    out.emplace_back(i == avatar_index ? std::string(avatar) : keys[i]);
  }
  return out;
}

Result<PresenceConfig> ParsePresence(const Json& presence,
                                     std::string_view where) {
  if (!presence.is_object()) {
    return FieldError(where, "", "expected an object, got " +
                                     Describe(presence));
  }
  TESSERA_RETURN_IF_ERROR(internal::CheckKnownFields(
      presence, where, {"path", "value", "prune"}));
  auto path = presence.find("path");
  if (path == presence.end()) {
    return FieldError(where, "", "missing required field \"path\"");
  }
  PresenceConfig c;
  Result<PresenceConfig::Pattern> parsed =
      ParsePresencePattern(*path, where, "path");
  if (!parsed.ok()) return parsed.status();
  c.path = std::move(parsed).value();
  if (auto it = presence.find("value"); it != presence.end()) c.value = *it;
  if (auto it = presence.find("prune"); it != presence.end()) {
    if (!it->is_array()) {
      return FieldError(where, "prune",
                        "expected an array, got " + Describe(*it));
    }
    for (size_t i = 0; i < it->size(); ++i) {
      Result<PresenceConfig::Pattern> p = ParsePresencePattern(
          (*it)[i], where, "prune[" + std::to_string(i) + "]");
      if (!p.ok()) return p.status();
      c.prune.push_back(std::move(p).value());
    }
  }
  return c;
}

Patch PresenceAttach(const PresenceConfig& presence, std::string_view avatar,
                     const Json& state) {
  const Path path = presence.path.For(avatar);
  Patch patch;
  // Missing parents become objects, from the top down.
  Path prefix;
  const Json* at = &state;
  for (size_t i = 0; i + 1 < path.size(); ++i) {
    prefix.push_back(path[i]);
    const std::string& key = std::get<std::string>(path[i]);
    if (at != nullptr && at->is_object() && at->contains(key)) {
      at = &(*at)[key];
      continue;
    }
    if (at != nullptr && !at->is_object()) return {};  // not ours to replace
    patch.push_back({OpKind::kSet, prefix, Json::object()});
    at = nullptr;
  }
  const Json* current = Find(state, path);
  if (current != nullptr && *current == presence.value) return patch;
  patch.push_back({OpKind::kSet, path, presence.value});
  return patch;
}

Patch PresenceDetach(const PresenceConfig& presence, std::string_view avatar,
                     const Json& state) {
  Patch patch;
  auto drop = [&](const PresenceConfig::Pattern& pattern) {
    Path path = pattern.For(avatar);
    if (Find(state, path) == nullptr) return;
    for (const Op& op : patch) {
      // Already gone with a path at or above it.
      if (op.path.size() <= path.size() &&
          std::equal(op.path.begin(), op.path.end(), path.begin())) {
        return;
      }
    }
    patch.push_back({OpKind::kDelete, std::move(path), nullptr});
  };
  drop(presence.path);
  for (const PresenceConfig::Pattern& pattern : presence.prune) drop(pattern);
  return patch;
}

}  // namespace tessera::realm
