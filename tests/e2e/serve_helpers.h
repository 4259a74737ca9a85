// What the tests that run `tessera serve` on an app share: the spawn
// options and a JSON call to the admin API with a bearer token.
#ifndef TESSERA_TESTS_E2E_SERVE_HELPERS_H_
#define TESSERA_TESTS_E2E_SERVE_HELPERS_H_

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "tests/e2e/server_process.h"
#include "tests/net/test_client.h"

namespace tessera::e2e {

// `bin serve APP --host 127.0.0.1 --port 0` with `env`, plus
// TESSERA_FAULT_POINT=`fault_point` unless it is empty, logging to
// `log_path`.
SpawnOptions ServeOptions(const std::string& bin,
                          const std::filesystem::path& app,
                          std::vector<std::pair<std::string, std::string>> env,
                          const std::string& fault_point,
                          std::filesystem::path log_path);

// `method target` on 127.0.0.1:`port`, `body` sent as JSON (null: no
// body), `token` as the bearer (empty: none). Errors: as HttpCall.
Result<net::testing::HttpResult> HttpJson(uint16_t port,
                                          const std::string& method,
                                          const std::string& target,
                                          const nlohmann::json& body,
                                          const std::string& token);

}  // namespace tessera::e2e

#endif  // TESSERA_TESTS_E2E_SERVE_HELPERS_H_
