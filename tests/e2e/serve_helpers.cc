#include "tests/e2e/serve_helpers.h"

namespace tessera::e2e {

SpawnOptions ServeOptions(const std::string& bin,
                          const std::filesystem::path& app,
                          std::vector<std::pair<std::string, std::string>> env,
                          const std::string& fault_point,
                          std::filesystem::path log_path) {
  SpawnOptions options;
  options.argv = {bin,         "serve",  app.string(), "--host",
                  "127.0.0.1", "--port", "0"};
  options.env = std::move(env);
  if (!fault_point.empty()) {
    options.env.emplace_back("TESSERA_FAULT_POINT", fault_point);
  }
  options.log_path = std::move(log_path);
  return options;
}

Result<net::testing::HttpResult> HttpJson(uint16_t port,
                                          const std::string& method,
                                          const std::string& target,
                                          const nlohmann::json& body,
                                          const std::string& token) {
  std::vector<std::pair<std::string, std::string>> headers;
  if (!token.empty()) headers.emplace_back("Authorization", "Bearer " + token);
  if (!body.is_null()) headers.emplace_back("Content-Type", "application/json");
  return net::testing::HttpCall("127.0.0.1", port, method, target,
                                body.is_null() ? "" : body.dump(), headers);
}

}  // namespace tessera::e2e
