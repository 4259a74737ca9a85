#include "net/router.h"

namespace tessera::net {
namespace {

// Whether `path` is `prefix` or below it, by whole segments.
bool Under(std::string_view path, std::string_view prefix) {
  if (!path.starts_with(prefix)) return false;
  return prefix.ends_with('/') || path.size() == prefix.size() ||
         path[prefix.size()] == '/';
}

template <typename T>
T* Longest(const std::vector<std::pair<std::string, T*>>& routes,
           std::string_view path, size_t* prefix_size) {
  T* best = nullptr;
  size_t best_size = 0;
  for (const auto& [prefix, target] : routes) {
    if (Under(path, prefix) && (best == nullptr || prefix.size() > best_size)) {
      best = target;
      best_size = prefix.size();
    }
  }
  if (prefix_size != nullptr) *prefix_size = best_size;
  return best;
}

}  // namespace

void Router::AddSession(std::string prefix, const SessionFactory& factory) {
  sessions_.emplace_back(std::move(prefix), &factory);
}

void Router::AddHttp(std::string prefix, HttpHandler& handler) {
  http_.emplace_back(std::move(prefix), &handler);
}

const SessionFactory* Router::FindSession(std::string_view path,
                                          std::string_view* rest) const {
  size_t size = 0;
  const SessionFactory* factory = Longest(sessions_, path, &size);
  if (factory != nullptr && rest != nullptr) *rest = path.substr(size);
  return factory;
}

HttpHandler* Router::FindHttp(std::string_view path) const {
  return Longest(http_, path, nullptr);
}

}  // namespace tessera::net
