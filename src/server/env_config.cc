#include "server/env_config.h"

#include <charconv>
#include <cstdlib>

namespace tessera::server {
namespace {

std::string Range(int64_t min, int64_t max) {
  return "an integer from " + std::to_string(min) + " to " +
         std::to_string(max);
}

}  // namespace

std::optional<std::string> EnvString(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return std::nullopt;
  return std::string(value);
}

std::string Setting(const std::optional<std::string>& flag, const char* env,
                    const std::string& fallback) {
  if (flag) return *flag;
  return EnvString(env).value_or(fallback);
}

Result<int64_t> IntSetting(const std::optional<int64_t>& flag,
                           const char* flag_name, const char* env,
                           int64_t fallback, int64_t min, int64_t max) {
  if (flag) {
    if (*flag < min || *flag > max) {
      return InvalidArgument(std::string(flag_name) + " must be " +
                             Range(min, max));
    }
    return *flag;
  }
  std::optional<std::string> text = EnvString(env);
  if (!text) return fallback;
  int64_t value = 0;
  auto [end, ec] =
      std::from_chars(text->data(), text->data() + text->size(), value);
  if (ec != std::errc() || end != text->data() + text->size() || value < min ||
      value > max) {
    return InvalidArgument(std::string(env) + "=\"" + *text + "\": must be " +
                           Range(min, max));
  }
  return value;
}

}  // namespace tessera::server
