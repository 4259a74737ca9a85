// The report's JSON form. Derived figures (percentiles, rates) are written
// for readers and recomputed from the raw ones on reading.
#include <cmath>
#include <type_traits>

#include "loadtest/report.h"

namespace tessera::loadtest {
namespace {

using json = nlohmann::json;

constexpr char kFormat[] = "tessera-bench-report";
constexpr int kVersion = 1;

double Ms(uint64_t us) { return static_cast<double>(us) / 1000.0; }

// Rounds to 3 decimals (microseconds for milliseconds), for readability.
double Round3(double v) { return std::round(v * 1000.0) / 1000.0; }

json RttSummary(const Histogram& h) {
  return {{"count", h.count()},
          {"p50", Ms(h.Percentile(50))},
          {"p90", Ms(h.Percentile(90))},
          {"p99", Ms(h.Percentile(99))},
          {"max", Ms(h.max())},
          {"min", Ms(h.min())},
          {"mean", Round3(h.mean() / 1000.0)}};
}

json CountsObject(const CountMap& map) {
  json out = json::object();
  for (const auto& [key, n] : map) out[key] = n;
  return out;
}

// Reads fields of one object, remembering the first problem.
class Reader {
 public:
  Reader(const json& object, std::string where, Status* status)
      : object_(object), where_(std::move(where)), status_(status) {
    if (!object_.is_object()) Fail("", "an object");
  }
  template <typename T>
  void Number(const char* name, T* out) {
    const json* v = Find(name);
    if (v == nullptr) return;
    if (!v->is_number()) return Fail(name, "a number");
    if constexpr (std::is_unsigned_v<T>) {
      if (v->get<double>() < 0) return Fail(name, "a number >= 0");
    }
    *out = v->get<T>();
  }
  void String(const char* name, std::string* out) {
    const json* v = Find(name);
    if (v == nullptr) return;
    if (!v->is_string()) return Fail(name, "a string");
    *out = v->get<std::string>();
  }
  void Counts(const char* name, CountMap* out) {
    const json* v = Find(name);
    if (v == nullptr) return;
    if (!v->is_object()) return Fail(name, "an object of counts");
    for (auto it = v->begin(); it != v->end(); ++it) {
      if (!it->is_number_unsigned()) return Fail(name, "an object of counts");
      (*out)[it.key()] = it->get<uint64_t>();
    }
  }
  void Hist(const char* name, Histogram* out) {
    const json* v = Find(name);
    if (v == nullptr) return;
    Result<Histogram> h = Histogram::FromJson(*v);
    if (!h.ok())
      return Fail(name, "a histogram (" + h.status().message() + ")");
    *out = std::move(h.value());
  }
  // The sub-object `name` (null json if missing, after recording it).
  const json& Object(const char* name) {
    static const json kNull;
    const json* v = Find(name);
    return v == nullptr ? kNull : *v;
  }
  const json* Optional(const char* name) const {
    if (!object_.is_object()) return nullptr;
    auto it = object_.find(name);
    return it == object_.end() || it->is_null() ? nullptr : &*it;
  }

 private:
  const json* Find(const char* name) {
    if (!status_->ok() || !object_.is_object()) return nullptr;
    auto it = object_.find(name);
    if (it == object_.end()) {
      Fail(name, "present");
      return nullptr;
    }
    return &*it;
  }
  void Fail(const std::string& name, const std::string& expected) {
    if (!status_->ok()) return;
    std::string path = where_;
    if (!name.empty()) path += (path.empty() ? "" : ".") + name;
    *status_ =
        InvalidArgument("report field \"" + path + "\" must be " + expected);
  }

  const json& object_;
  std::string where_;
  Status* status_;
};

}  // namespace

json ReportToJson(const Report& r) {
  const Counts& c = r.counts;
  const RunSettings& s = r.settings;
  json series = json::array();
  for (const SeriesPoint& p : r.series) {
    series.push_back({{"t", p.t},
                      {"connected", p.connected},
                      {"sent", p.sent},
                      {"acked", p.acked},
                      {"refused", p.refused},
                      {"frames", p.frames},
                      {"bytes", p.bytes},
                      {"errors", p.errors},
                      {"rtt_p50_ms", Ms(p.rtt_us.Percentile(50))},
                      {"rtt_p99_ms", Ms(p.rtt_us.Percentile(99))},
                      {"rtt_histogram_us", p.rtt_us.ToJson()}});
  }
  const double per_bot_sec = c.bot_seconds > 0 ? 1.0 / c.bot_seconds : 0.0;
  json server = nullptr;
  if (r.server) {
    server = {{"pid", r.server->pid},
              {"cpu_seconds", Round3(r.server->cpu_seconds)},
              {"cpu_percent",
               r.elapsed_secs > 0
                   ? Round3(100.0 * r.server->cpu_seconds / r.elapsed_secs)
                   : 0.0},
              {"peak_rss_kib", r.server->peak_rss_kib}};
  }
  return {
      {"format", kFormat},
      {"version", kVersion},
      {"settings",
       {{"url", s.url},
        {"join", s.join},
        {"shard", s.shard},
        {"bots", s.bots},
        {"bot_offset", s.bot_offset},
        {"rate", s.rate},
        {"duration_secs", s.duration_secs},
        {"ramp_secs", s.ramp_secs},
        {"threads", s.threads},
        {"net_delay_ms", s.net_delay_ms},
        {"net_jitter_ms", s.net_jitter_ms},
        {"inputs", s.inputs},
        {"aim", s.aim.empty() ? json(nullptr) : json(s.aim)},
        {"interp_delay_ms", s.interp_delay_ms},
        {"tick_rate", s.tick_rate}}},
      {"machines", r.machines},
      {"elapsed_secs", Round3(r.elapsed_secs)},
      {"bots",
       {{"requested", s.bots},
        {"connected", c.bots_connected},
        {"connect_failures", c.connect_failures},
        {"connect_failure_reasons", CountsObject(c.connect_failure_reasons)},
        {"disconnects", CountsObject(c.disconnects)}}},
      {"inputs",
       {{"sent", c.inputs_sent},
        {"acked", c.inputs_acked},
        {"refused", c.inputs_refused},
        {"in_flight_at_end", c.in_flight_at_end},
        {"lost", c.inputs_lost},
        {"refusals", CountsObject(c.refusals)}}},
      {"aimed",
       {{"sent", c.aimed.sent},
        {"acked", c.aimed.acked},
        {"refused", c.aimed.refused},
        {"not_drawn", c.aimed.not_drawn},
        {"refusals", CountsObject(c.aimed.refusals)}}},
      {"transfers",
       {{"followed", c.transfers.followed},
        {"failed", c.transfers.failed},
        {"failures", CountsObject(c.transfers.failures)},
        {"time_ms", RttSummary(c.transfers.time_us)},
        {"time_histogram_us", c.transfers.time_us.ToJson()},
        {"notice_ms", RttSummary(c.transfers.notice_us)},
        {"notice_histogram_us", c.transfers.notice_us.ToJson()},
        {"reconnect_ms", RttSummary(c.transfers.reconnect_us)},
        {"reconnect_histogram_us", c.transfers.reconnect_us.ToJson()}}},
      {"first_frame_ms", RttSummary(c.first_frame_us)},
      {"first_frame_histogram_us", c.first_frame_us.ToJson()},
      {"rtt_ms", RttSummary(c.rtt_us)},
      {"rtt_histogram_us", c.rtt_us.ToJson()},
      {"received",
       {{"frames", c.frames},
        {"bytes", c.bytes},
        {"bot_seconds", Round3(c.bot_seconds)},
        {"frames_per_bot_per_sec",
         Round3(static_cast<double>(c.frames) * per_bot_sec)},
        {"bytes_per_bot_per_sec",
         Round3(static_cast<double>(c.bytes) * per_bot_sec)}}},
      {"errors", c.errors},
      {"server", server},
      {"client", {{"cpu_seconds", Round3(r.client_cpu_seconds)}}},
      {"series", std::move(series)},
  };
}

Result<Report> ReportFromJson(const json& value) {
  if (!value.is_object() || value.value("format", "") != kFormat) {
    return InvalidArgument("not a tessera bench report (no \"format\": \"" +
                           std::string(kFormat) + "\")");
  }
  if (value.value("version", 0) != kVersion) {
    return InvalidArgument("unsupported report version (this tessera reads " +
                           std::to_string(kVersion) + ")");
  }
  Status status;
  Report r;
  Reader top(value, "", &status);
  top.Number("machines", &r.machines);
  top.Number("elapsed_secs", &r.elapsed_secs);

  RunSettings& s = r.settings;
  Reader settings(top.Object("settings"), "settings", &status);
  settings.String("url", &s.url);
  settings.String("join", &s.join);
  settings.String("shard", &s.shard);
  settings.Number("bots", &s.bots);
  settings.Number("bot_offset", &s.bot_offset);
  settings.Number("rate", &s.rate);
  settings.Number("duration_secs", &s.duration_secs);
  settings.Number("ramp_secs", &s.ramp_secs);
  settings.Number("threads", &s.threads);
  settings.Number("net_delay_ms", &s.net_delay_ms);
  settings.Number("net_jitter_ms", &s.net_jitter_ms);
  if (const json* aim = settings.Optional("aim")) {
    if (aim->is_string()) s.aim = aim->get<std::string>();
  }
  if (settings.Optional("interp_delay_ms") != nullptr) {
    settings.Number("interp_delay_ms", &s.interp_delay_ms);
    settings.Number("tick_rate", &s.tick_rate);
  }
  if (const json* inputs = settings.Optional("inputs")) {
    for (const json& input : *inputs) {
      if (input.is_string()) s.inputs.push_back(input.get<std::string>());
    }
  }

  Counts& c = r.counts;
  Reader bots(top.Object("bots"), "bots", &status);
  bots.Number("connected", &c.bots_connected);
  bots.Number("connect_failures", &c.connect_failures);
  bots.Counts("connect_failure_reasons", &c.connect_failure_reasons);
  bots.Counts("disconnects", &c.disconnects);
  Reader inputs(top.Object("inputs"), "inputs", &status);
  inputs.Number("sent", &c.inputs_sent);
  inputs.Number("acked", &c.inputs_acked);
  inputs.Number("refused", &c.inputs_refused);
  inputs.Number("in_flight_at_end", &c.in_flight_at_end);
  inputs.Number("lost", &c.inputs_lost);
  inputs.Counts("refusals", &c.refusals);
  if (const json* aimed = top.Optional("aimed")) {  // newer reports
    Reader aim(*aimed, "aimed", &status);
    aim.Number("sent", &c.aimed.sent);
    aim.Number("acked", &c.aimed.acked);
    aim.Number("refused", &c.aimed.refused);
    aim.Number("not_drawn", &c.aimed.not_drawn);
    aim.Counts("refusals", &c.aimed.refusals);
  }
  if (const json* transfers = top.Optional("transfers")) {  // newer reports
    Reader moves(*transfers, "transfers", &status);
    moves.Number("followed", &c.transfers.followed);
    moves.Number("failed", &c.transfers.failed);
    moves.Counts("failures", &c.transfers.failures);
    moves.Hist("time_histogram_us", &c.transfers.time_us);
    moves.Hist("notice_histogram_us", &c.transfers.notice_us);
    moves.Hist("reconnect_histogram_us", &c.transfers.reconnect_us);
  }
  if (top.Optional("first_frame_histogram_us") != nullptr) {
    top.Hist("first_frame_histogram_us", &c.first_frame_us);
  }
  top.Hist("rtt_histogram_us", &c.rtt_us);
  Reader received(top.Object("received"), "received", &status);
  received.Number("frames", &c.frames);
  received.Number("bytes", &c.bytes);
  received.Number("bot_seconds", &c.bot_seconds);
  top.Number("errors", &c.errors);

  if (const json* server = top.Optional("server")) {
    ServerUsage usage;
    Reader reader(*server, "server", &status);
    reader.Number("pid", &usage.pid);
    reader.Number("cpu_seconds", &usage.cpu_seconds);
    reader.Number("peak_rss_kib", &usage.peak_rss_kib);
    r.server = usage;
  }
  Reader client(top.Object("client"), "client", &status);
  client.Number("cpu_seconds", &r.client_cpu_seconds);

  const json& series = top.Object("series");
  if (status.ok() && !series.is_array()) {
    status = InvalidArgument("report field \"series\" must be an array");
  }
  for (size_t i = 0; status.ok() && i < series.size(); ++i) {
    SeriesPoint p;
    Reader point(series[i], "series[" + std::to_string(i) + "]", &status);
    point.Number("t", &p.t);
    point.Number("connected", &p.connected);
    point.Number("sent", &p.sent);
    point.Number("acked", &p.acked);
    point.Number("refused", &p.refused);
    point.Number("frames", &p.frames);
    point.Number("bytes", &p.bytes);
    point.Number("errors", &p.errors);
    point.Hist("rtt_histogram_us", &p.rtt_us);
    r.series.push_back(std::move(p));
  }
  if (!status.ok()) return status;
  return r;
}

}  // namespace tessera::loadtest
