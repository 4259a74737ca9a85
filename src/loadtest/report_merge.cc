// Adding counts and merging reports of several machines.
#include <algorithm>

#include "loadtest/report.h"

namespace tessera::loadtest {
namespace {

void AddCounts(CountMap& into, const CountMap& from) {
  for (const auto& [key, n] : from) into[key] += n;
}

}  // namespace

void AimCounts::Add(const AimCounts& o) {
  sent += o.sent;
  acked += o.acked;
  refused += o.refused;
  AddCounts(refusals, o.refusals);
  not_drawn += o.not_drawn;
}

void TransferCounts::Add(const TransferCounts& o) {
  followed += o.followed;
  failed += o.failed;
  AddCounts(failures, o.failures);
  time_us.Merge(o.time_us);
  notice_us.Merge(o.notice_us);
  reconnect_us.Merge(o.reconnect_us);
}

void Counts::Add(const Counts& o) {
  aimed.Add(o.aimed);
  transfers.Add(o.transfers);
  first_frame_us.Merge(o.first_frame_us);
  bots_connected += o.bots_connected;
  connect_failures += o.connect_failures;
  AddCounts(connect_failure_reasons, o.connect_failure_reasons);
  AddCounts(disconnects, o.disconnects);
  inputs_sent += o.inputs_sent;
  inputs_acked += o.inputs_acked;
  inputs_refused += o.inputs_refused;
  AddCounts(refusals, o.refusals);
  in_flight_at_end += o.in_flight_at_end;
  inputs_lost += o.inputs_lost;
  rtt_us.Merge(o.rtt_us);
  frames += o.frames;
  bytes += o.bytes;
  bot_seconds += o.bot_seconds;
  errors += o.errors;
}

void SeriesPoint::Add(const SeriesPoint& o) {
  connected += o.connected;
  sent += o.sent;
  acked += o.acked;
  refused += o.refused;
  frames += o.frames;
  bytes += o.bytes;
  errors += o.errors;
  rtt_us.Merge(o.rtt_us);
}

Result<Report> MergeReports(const std::vector<Report>& reports) {
  if (reports.empty()) return InvalidArgument("no report to merge");
  Report merged = reports.front();
  for (size_t i = 1; i < reports.size(); ++i) {
    const Report& r = reports[i];
    RunSettings& s = merged.settings;
    s.bots += r.settings.bots;
    s.bot_offset = std::min(s.bot_offset, r.settings.bot_offset);
    s.duration_secs = std::max(s.duration_secs, r.settings.duration_secs);
    s.ramp_secs = std::max(s.ramp_secs, r.settings.ramp_secs);
    s.threads += r.settings.threads;
    merged.machines += r.machines;
    merged.elapsed_secs = std::max(merged.elapsed_secs, r.elapsed_secs);
    merged.counts.Add(r.counts);
    merged.client_cpu_seconds += r.client_cpu_seconds;
    if (r.server) {
      if (!merged.server) {
        merged.server = r.server;
      } else {
        merged.server->cpu_seconds =
            std::max(merged.server->cpu_seconds, r.server->cpu_seconds);
        merged.server->peak_rss_kib =
            std::max(merged.server->peak_rss_kib, r.server->peak_rss_kib);
      }
    }
    for (const SeriesPoint& p : r.series) {
      auto it = std::find_if(merged.series.begin(), merged.series.end(),
                             [&](const SeriesPoint& q) { return q.t == p.t; });
      if (it == merged.series.end()) {
        merged.series.push_back(p);
      } else {
        it->Add(p);
      }
    }
  }
  std::sort(
      merged.series.begin(), merged.series.end(),
      [](const SeriesPoint& a, const SeriesPoint& b) { return a.t < b.t; });
  return merged;
}

}  // namespace tessera::loadtest
