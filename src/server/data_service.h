// DataService: the app's data on an app server (docs/data.md). Owns the
// DataStore (store::OpenDataStore: the app's SQLite file, a connection of
// its own), applies the manifests' merged data schema at Start (additive
// changes only: anything else refuses to boot, naming the change), prunes
// stored calls and change events hourly, and serves the admin data API:
//
//   GET    /api/data                        {"types": [...]} (the schema)
//   GET    /api/data/<Type>?where=<json>&owner=<userId>&cursor=&limit=
//                                           {"rows": [...], "nextCursor"}
//   POST   /api/data/<Type>  {"id"?, "fields": {...}}   201 {"row"}
//   GET    /api/data/<Type>/<id>            {"row"} or 404 ROW_NOT_FOUND
//   PATCH  /api/data/<Type>/<id> {"set": {...}}         {"row"}
//   DELETE /api/data/<Type>/<id>            {"deleted": true} or 404
//   GET    /api/data/_changes?after=<seq>&limit=       {"changes": [...],
//                                           "lastSeq"}
//
// Reads need view_data, writes manage_data (api_tokens.h; the admin token
// has both). Errors are {"code", "message"} with the data codes of
// data/schema.h (400 BAD_VALUE / UNKNOWN_FIELD / BAD_FILTER, 404
// UNKNOWN_TYPE / ROW_NOT_FOUND, 409 ROW_EXISTS / UNIQUE_VIOLATION, 503
// UNAVAILABLE). Every committed admin write is passed to `on_changes` (the
// compute engine's OnDataChanges) with origin "admin".
//
// Threading: construction, RegisterRoutes, Start and Shutdown from the
// controlling thread; Handle from any thread.
#ifndef TESSERA_SERVER_DATA_SERVICE_H_
#define TESSERA_SERVER_DATA_SERVICE_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "data/data_store.h"
#include "data/data_types.h"
#include "net/http_types.h"
#include "server/api_tokens.h"
#include "server/service.h"

namespace tessera::server {

struct DataServiceOptions {
  ApiTokens tokens;
  data::DataSchema schema;                // the apps' merged "data" sections
  const WallClock* wall_clock = nullptr;  // null: RealWallClock; not owned
  // Committed admin writes (may be empty; any thread).
  std::function<void(const std::vector<data::ChangeEvent>&)> on_changes;
};

class DataService final : public Service, public net::HttpHandler {
 public:
  DataService(std::unique_ptr<data::DataStore> store,
              DataServiceOptions options);
  ~DataService() override;

  void RegisterRoutes(net::Router& router) override;
  // Applies the schema (see the file comment). Errors: ApplySchema's.
  Status Start();
  void Shutdown();

  data::DataStore& store() { return *store_; }
  // Set after construction when the engine is built later.
  void set_on_changes(
      std::function<void(const std::vector<data::ChangeEvent>&)> f);

  net::HttpResponse Handle(const net::HttpRequest& request) override;

 private:
  struct Impl;
  std::unique_ptr<data::DataStore> store_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessera::server

#endif  // TESSERA_SERVER_DATA_SERVICE_H_
