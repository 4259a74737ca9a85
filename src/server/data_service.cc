// The admin data API and the data store's life on an app server
// (data_service.h; the table in docs/data.md "Admin API"): routing, the
// scope check, strict bodies and queries, then one store transaction each.
#include "server/data_service.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>
#include <utility>

#include "data/schema.h"
#include "server/http_json.h"
#include "server/request_target.h"

namespace tessera::server {

using json = nlohmann::json;
using net::HttpRequest;
using net::HttpResponse;

namespace {

constexpr char kOrigin[] = "admin";
constexpr auto kPruneEvery = std::chrono::hours(1);
constexpr int64_t kMaxChangesLimit = 1000;

using Query = std::map<std::string, std::string>;

HttpResponse BadRequest(const std::string& message) {
  return ErrorResponse(400, "invalid_argument", message);
}

// A store error as {"code", "message"}: the data code when the message has
// one (400 / 404 / 409 / 503 by code), else the status code's.
HttpResponse StoreError(const Status& status) {
  std::string_view code = data::ErrorCodeOf(status.message());
  namespace c = data::codes;
  int http = 0;
  if (code == c::kBadValue || code == c::kUnknownField ||
      code == c::kBadFilter || code == c::kNoIndex || code == c::kDataOps) {
    http = 400;
  } else if (code == c::kUnknownType || code == c::kRowNotFound) {
    http = 404;
  } else if (code == c::kRowExists || code == c::kUniqueViolation) {
    http = 409;
  } else if (code == c::kUnavailable) {
    http = 503;
  }
  if (http == 0) return ErrorFromStatus(status);
  return ErrorResponse(http, code, status.message());
}

HttpResponse Unauthorized(const std::string& message) {
  HttpResponse r = ErrorResponse(401, "unauthorized", message);
  r.headers.emplace_back("WWW-Authenticate", "Bearer");
  return r;
}

std::optional<HttpResponse> CheckQuery(
    const Query& query, std::initializer_list<std::string_view> known) {
  for (const auto& [name, value] : query) {
    bool ok = false;
    for (std::string_view k : known) ok = ok || name == k;
    if (ok) continue;
    std::string list;
    for (std::string_view k : known) {
      if (!list.empty()) list += ", ";
      list += k;
    }
    return BadRequest("unknown query parameter \"" + name + "\"" +
                      (list.empty() ? " (this route takes none)"
                                    : " (parameters: " + list + ")"));
  }
  return std::nullopt;
}

std::optional<int64_t> IntParam(const Query& query, const char* name,
                                int64_t fallback, int64_t min, int64_t max,
                                HttpResponse* error) {
  auto it = query.find(name);
  if (it == query.end() || it->second.empty()) return fallback;
  int64_t value = 0;
  const std::string& text = it->second;
  auto [end, ec] =
      std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < min ||
      value > max) {
    *error =
        BadRequest(std::string("\"") + name + "\" must be an integer from " +
                   std::to_string(min) + " to " + std::to_string(max));
    return std::nullopt;
  }
  return value;
}

Status CheckBodyKeys(const json& body,
                     std::initializer_list<std::string_view> known) {
  for (const auto& [key, value] : body.items()) {
    bool ok = false;
    for (std::string_view k : known) ok = ok || key == k;
    if (!ok) {
      std::string list;
      for (std::string_view k : known) {
        if (!list.empty()) list += ", ";
        list += "\"" + std::string(k) + "\"";
      }
      return InvalidArgument("unknown field \"" + key + "\" in the body (" +
                             list + ")");
    }
  }
  return Status::Ok();
}

json ParseOrNull(const std::string& text) {
  json v = json::parse(text, nullptr, false);
  return v.is_discarded() ? json(nullptr) : v;
}

json ChangeJson(const data::ChangeEvent& e) {
  json out{{"seq", e.seq},   {"ts", e.ts_ms}, {"op", data::ChangeOpName(e.op)},
           {"type", e.type}, {"id", e.id},    {"origin", e.origin}};
  if (e.op == data::ChangeOp::kUpdated) {
    json fields = json::array();
    for (const data::FieldChange& f : e.fields) {
      fields.push_back(json{{"field", f.field},
                            {"oldValue", ParseOrNull(f.old_json)},
                            {"newValue", ParseOrNull(f.new_json)}});
    }
    out["fields"] = std::move(fields);
  } else {
    out["row"] = ParseOrNull(e.row_json);
  }
  return out;
}

enum class Need { kView, kManage };

}  // namespace

struct DataService::Impl {
  DataServiceOptions options;
  RealWallClock real_clock;
  const WallClock* clock = nullptr;

  std::mutex mu;
  std::function<void(const std::vector<data::ChangeEvent>&)> on_changes;
  std::shared_ptr<const data::DataSchema> schema =
      std::make_shared<data::DataSchema>();

  std::mutex prune_mu;
  std::condition_variable prune_cv;
  bool stopping = false;
  std::thread pruner;

  std::shared_ptr<const data::DataSchema> Schema() {
    std::lock_guard<std::mutex> lock(mu);
    return schema;
  }

  void Changed(const std::vector<data::ChangeEvent>& events) {
    if (events.empty()) return;
    std::function<void(const std::vector<data::ChangeEvent>&)> f;
    {
      std::lock_guard<std::mutex> lock(mu);
      f = on_changes;
    }
    if (f) f(events);
  }
};

DataService::DataService(std::unique_ptr<data::DataStore> store,
                         DataServiceOptions options)
    : store_(std::move(store)), impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
  impl_->clock = impl_->options.wall_clock != nullptr
                     ? impl_->options.wall_clock
                     : &impl_->real_clock;
  impl_->on_changes = impl_->options.on_changes;
}

DataService::~DataService() { Shutdown(); }

void DataService::RegisterRoutes(net::Router& router) {
  router.AddHttp("/api/data", *this);
}

Status DataService::Start() {
  Status applied = store_->ApplySchema(impl_->options.schema);
  if (!applied.ok()) return applied;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->schema = std::make_shared<data::DataSchema>(store_->schema());
  }
  if (!impl_->pruner.joinable()) {
    impl_->pruner = std::thread([this] {
      std::unique_lock<std::mutex> lock(impl_->prune_mu);
      while (!impl_->stopping) {
        lock.unlock();
        // A failed prune is retried at the next hour; nothing depends on it.
        (void)store_->Prune(impl_->clock->UnixNowMs());
        lock.lock();
        impl_->prune_cv.wait_for(lock, kPruneEvery,
                                 [this] { return impl_->stopping; });
      }
    });
  }
  return Status::Ok();
}

void DataService::Shutdown() {
  {
    std::lock_guard<std::mutex> lock(impl_->prune_mu);
    impl_->stopping = true;
  }
  impl_->prune_cv.notify_all();
  if (impl_->pruner.joinable()) impl_->pruner.join();
}

void DataService::set_on_changes(
    std::function<void(const std::vector<data::ChangeEvent>&)> f) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->on_changes = std::move(f);
}

namespace {

// One request as the handlers see it.
struct Call {
  data::DataStore& store;
  const data::DataSchema& schema;
  const data::EntityType* type = nullptr;  // routes under /<Type>
  std::string id;                          // routes under /<Type>/<id>
  Query query;
  json body;  // an object (POST/PATCH), else null
};

HttpResponse GetSchema(Call& c) {
  if (auto e = CheckQuery(c.query, {})) return *e;
  return JsonResponse(200, json::parse(data::DataSchemaJson(c.schema)));
}

HttpResponse ListChanges(Call& c) {
  if (auto e = CheckQuery(c.query, {"after", "limit"})) return *e;
  HttpResponse error;
  std::optional<int64_t> after =
      IntParam(c.query, "after", 0, 0, INT64_MAX, &error);
  if (!after) return error;
  std::optional<int64_t> limit =
      IntParam(c.query, "limit", 100, 1, kMaxChangesLimit, &error);
  if (!limit) return error;
  Result<std::vector<data::ChangeEvent>> changes =
      c.store.Changes(*after, *limit);
  if (!changes.ok()) return StoreError(changes.status());
  json out = json::array();
  int64_t last = *after;
  for (const data::ChangeEvent& e : *changes) {
    out.push_back(ChangeJson(e));
    last = std::max(last, e.seq);
  }
  return JsonResponse(200, json{{"changes", out}, {"lastSeq", last}});
}

json RowValue(const data::EntityType& type, const data::Row& row) {
  return json::parse(data::RowJson(type, row));
}

HttpResponse ListRows(Call& c) {
  if (auto e = CheckQuery(c.query, {"where", "owner", "cursor", "limit"})) {
    return *e;
  }
  HttpResponse error;
  std::optional<int64_t> limit =
      IntParam(c.query, "limit", data::kDefaultPageLimit, 1,
               data::kMaxPageLimit, &error);
  if (!limit) return error;
  std::string where;
  if (auto w = c.query.find("where"); w != c.query.end()) where = w->second;
  Result<data::Filter> filter = data::ParseFilter(*c.type, where);
  if (!filter.ok()) return StoreError(filter.status());
  if (auto o = c.query.find("owner"); o != c.query.end()) {
    if (c.type->owner.empty()) {
      return StoreError(data::DataError(
          data::codes::kBadFilter,
          c.type->name + " has no owner field (\"owner\" in its declaration)"));
    }
    filter->conditions.push_back(
        {c.type->owner, data::FilterOp::kEq, {json(o->second).dump()}});
  }
  std::string cursor;
  if (auto cur = c.query.find("cursor"); cur != c.query.end()) {
    cursor = cur->second;
  }
  Result<std::unique_ptr<data::DataTxn>> txn =
      c.store.Begin(data::TxnMode::kRead);
  if (!txn.ok()) return StoreError(txn.status());
  Result<data::Page> page = (*txn)->List(c.type->name, *filter, cursor, *limit);
  if (!page.ok()) return StoreError(page.status());
  json rows = json::array();
  for (const data::Row& row : page->rows)
    rows.push_back(RowValue(*c.type, row));
  return JsonResponse(200,
                      json{{"rows", rows}, {"nextCursor", page->next_cursor}});
}

HttpResponse GetRow(Call& c) {
  if (auto e = CheckQuery(c.query, {})) return *e;
  Result<std::unique_ptr<data::DataTxn>> txn =
      c.store.Begin(data::TxnMode::kRead);
  if (!txn.ok()) return StoreError(txn.status());
  Result<std::optional<data::Row>> row = (*txn)->Get(c.type->name, c.id);
  if (!row.ok()) return StoreError(row.status());
  if (!row->has_value()) {
    return StoreError(
        data::DataError(data::codes::kRowNotFound, c.type->name + " " + c.id));
  }
  return JsonResponse(200, json{{"row", RowValue(*c.type, **row)}});
}

}  // namespace

// Writes run in one write transaction each and pass what they committed to
// on_changes (a member so it reaches Impl).
HttpResponse DataService::Handle(const HttpRequest& request) {
  std::optional<RequestTarget> target = ParseTarget(request.target);
  if (!target) {
    return ErrorResponse(400, "bad_target",
                         "the request target is not a valid path");
  }
  const std::vector<std::string>& s = target->segments;
  if (s.size() < 2 || s[0] != "api" || s[1] != "data" || s.size() > 4) {
    return ErrorResponse(404, "not_found", "no route " + target->path);
  }
  const std::vector<std::string> rest(s.begin() + 2, s.end());
  const std::string method = request.method == "HEAD" ? "GET" : request.method;
  // The routes of this path: the method is checked before the token.
  const char* allowed = nullptr;
  if (rest.empty()) {
    allowed = "GET";
  } else if (rest.size() == 1 && rest[0] == "_changes") {
    allowed = "GET";
  } else if (rest.size() == 1) {
    allowed = "GET, POST";
  } else {
    allowed = "GET, PATCH, DELETE";
  }
  std::string_view allowed_view(allowed);
  bool method_ok = false;
  for (std::string_view m : {"GET", "POST", "PATCH", "DELETE"}) {
    if (method == m && allowed_view.find(m) != std::string_view::npos) {
      method_ok = true;
    }
  }
  if (!method_ok) {
    HttpResponse r = ErrorResponse(
        405, "method_not_allowed",
        request.method + " is not allowed here (allowed: " + allowed + ")");
    r.headers.emplace_back("Allow", allowed);
    return r;
  }
  const Need need = method == "GET" ? Need::kView : Need::kManage;
  const Scope scope =
      need == Need::kView ? Scope::kViewData : Scope::kManageData;
  const Scopes scopes = impl_->options.tokens.ScopesOf(request);
  if (scopes.empty()) {
    return Unauthorized(std::string("this route needs a token with the ") +
                        ScopeName(scope) +
                        " scope: Authorization: Bearer <token>");
  }
  if (!scopes.Has(scope)) {
    return ErrorResponse(
        403, "forbidden",
        std::string("this token lacks the ") + ScopeName(scope) + " scope");
  }

  std::optional<Query> query = ParseQuery(request.target);
  if (!query) {
    return BadRequest(
        "the query string has a bad escape or a parameter given twice");
  }
  std::shared_ptr<const data::DataSchema> schema = impl_->Schema();
  Call call{*store_, *schema, nullptr, "", std::move(*query), nullptr};
  if (rest.empty()) return GetSchema(call);
  if (rest.size() == 1 && rest[0] == "_changes") return ListChanges(call);

  call.type = schema->Find(rest[0]);
  if (call.type == nullptr) {
    std::string names;
    for (const data::EntityType& t : schema->types) {
      names += (names.empty() ? "" : ", ") + t.name;
    }
    return StoreError(data::DataError(
        data::codes::kUnknownType,
        "no data type \"" + rest[0] +
            "\" (types: " + (names.empty() ? "none declared" : names) + ")"));
  }
  if (rest.size() == 2) {
    call.id = rest[1];
    Status id = data::CheckId(call.id);
    if (!id.ok()) return StoreError(id);
  }
  if (method == "POST" || method == "PATCH") {
    if (request.body.find_first_not_of(" \t\r\n") == std::string::npos) {
      call.body = json::object();
    } else {
      call.body = json::parse(request.body, nullptr, false);
      if (call.body.is_discarded()) {
        return ErrorResponse(400, "bad_json", "the body is not valid JSON");
      }
      if (!call.body.is_object()) {
        return ErrorResponse(400, "bad_json", "the body must be a JSON object");
      }
    }
  }
  if (method == "GET") return rest.size() == 1 ? ListRows(call) : GetRow(call);
  if (auto e = CheckQuery(call.query, {})) return *e;

  // --- writes
  const data::EntityType& type = *call.type;
  std::string fields = "{}";
  std::string id;
  if (method == "POST") {
    Status keys = CheckBodyKeys(call.body, {"id", "fields"});
    if (!keys.ok()) return BadRequest(keys.message());
    if (auto i = call.body.find("id"); i != call.body.end()) {
      if (!i->is_string()) return BadRequest("\"id\" must be a string");
      id = i->get<std::string>();
      Status checked = data::CheckId(id);
      if (!checked.ok()) return StoreError(checked);
    }
    if (auto f = call.body.find("fields"); f != call.body.end()) {
      if (!f->is_object()) return BadRequest("\"fields\" must be an object");
      fields = f->dump();
    }
  } else if (method == "PATCH") {
    Status keys = CheckBodyKeys(call.body, {"set"});
    if (!keys.ok()) return BadRequest(keys.message());
    auto f = call.body.find("set");
    if (f == call.body.end() || !f->is_object()) {
      return BadRequest("the body needs \"set\": an object of field values");
    }
    fields = f->dump();
  }
  Result<std::unique_ptr<data::DataTxn>> txn =
      store_->Begin(data::TxnMode::kWrite);
  if (!txn.ok()) return StoreError(txn.status());
  data::DataTxn& t = **txn;
  int status = 200;
  json out;
  if (method == "POST") {
    Result<data::Row> row = t.Insert(type.name, id, fields, kOrigin);
    if (!row.ok()) return StoreError(row.status());
    out = json{{"row", RowValue(type, *row)}};
    status = 201;
  } else if (method == "PATCH") {
    Result<data::Row> row = t.Update(type.name, call.id, fields, kOrigin);
    if (!row.ok()) return StoreError(row.status());
    out = json{{"row", RowValue(type, *row)}};
  } else {
    Result<bool> deleted = t.Delete(type.name, call.id, kOrigin);
    if (!deleted.ok()) return StoreError(deleted.status());
    if (!*deleted) {
      return StoreError(data::DataError(data::codes::kRowNotFound,
                                        type.name + " " + call.id));
    }
    out = json{{"deleted", true}};
  }
  Result<std::vector<data::ChangeEvent>> committed = t.Commit();
  if (!committed.ok()) return StoreError(committed.status());
  impl_->Changed(*committed);
  return JsonResponse(status, out);
}

}  // namespace tessera::server
