// The human summary of a report.
#include <cinttypes>
#include <cstdarg>
#include <cstdio>

#include "loadtest/report.h"

namespace tessera::loadtest {
namespace {

std::string Format(const char* format, ...) {
  char buffer[512];
  va_list args;
  va_start(args, format);
  std::vsnprintf(buffer, sizeof buffer, format, args);
  va_end(args);
  return buffer;
}

double Ms(uint64_t us) { return static_cast<double>(us) / 1000.0; }

std::string Bytes(double n) {
  if (n >= 1024.0 * 1024.0) return Format("%.1f MiB", n / (1024.0 * 1024.0));
  if (n >= 1024.0) return Format("%.1f KiB", n / 1024.0);
  return Format("%.0f B", n);
}

void AddCountLines(std::string& out, const char* title, const CountMap& map,
                   bool close_codes) {
  if (map.empty()) return;
  out += Format("  %s:\n", title);
  for (const auto& [key, n] : map) {
    const std::string name = close_codes ? CloseCodeName(key) : key;
    out += Format("    %8" PRIu64 "  %s\n", n, name.c_str());
  }
}

}  // namespace

std::string CloseCodeName(const std::string& code) {
  static const std::pair<const char*, const char*> kNames[] = {
      {"1000", "normal"},
      {"1001", "going_away"},
      {"1006", "no close frame"},
      {"1008", "too_slow"},
      {"1009", "message_too_big"},
      {"4000", "bad_frame"},
      {"4001", "ticket_invalid"},
      {"4002", "ticket_expired"},
      {"4003", "ticket_wrong_shard"},
      {"4004", "shard_not_found"},
      {"4005", "kicked"},
      {"4006", "shard_stopped"},
      {"4007", "rate_limited"},
      {"4008", "hello_timeout"},
      {"4009", "unsupported_version"},
      {"4010", "hello_expected"},
      {"4011", "transferred"},
  };
  for (const auto& [key, name] : kNames) {
    if (code == key) return code + " " + name;
  }
  return code;
}

std::string FormatSummary(const Report& r) {
  const Counts& c = r.counts;
  const RunSettings& s = r.settings;
  std::string out;
  out += Format("tessera bench shard: %" PRId64 " bots", s.bots);
  if (r.machines > 1) out += Format(" on %" PRId64 " machines", r.machines);
  out += Format(", %.3g inputs/s each, %.3g s (ramp %.3g s)", s.rate,
                s.duration_secs, s.ramp_secs);
  if (s.net_delay_ms > 0 || s.net_jitter_ms > 0) {
    out += Format(", network delay %.3g +- %.3g ms each way", s.net_delay_ms,
                  s.net_jitter_ms);
  }
  out += Format("\n  target:     %s%s%s\n", s.url.c_str(),
                s.join.empty() ? "" : ", joined through ", s.join.c_str());
  out += Format("  bots:       %" PRIu64 " connected, %" PRIu64
                " failed to connect\n",
                c.bots_connected, c.connect_failures);
  const double secs = r.elapsed_secs > 0 ? r.elapsed_secs : 1;
  out += Format(
      "  inputs:     %" PRIu64 " sent (%.1f/s), %" PRIu64 " acked, %" PRIu64
      " refused, %" PRIu64 " in flight at the end, %" PRIu64 " lost\n",
      c.inputs_sent, static_cast<double>(c.inputs_sent) / secs, c.inputs_acked,
      c.inputs_refused, c.in_flight_at_end, c.inputs_lost);
  if (!s.aim.empty() || c.aimed.sent > 0) {
    const AimCounts& a = c.aimed;
    const uint64_t answered = a.acked + a.refused;
    out +=
        Format("  aimed:      %" PRIu64 " shots at entity %s sent, %" PRIu64
               " acked, %" PRIu64 " refused (%.1f%% of the %" PRIu64
               " answered acked), %" PRIu64 " times not drawn\n",
               a.sent, s.aim.empty() ? "?" : s.aim.c_str(), a.acked, a.refused,
               answered > 0 ? 100.0 * static_cast<double>(a.acked) /
                                  static_cast<double>(answered)
                            : 0.0,
               answered, a.not_drawn);
  }
  const Histogram& h = c.rtt_us;
  if (h.count() > 0) {
    out += Format(
        "  round trip: p50 %.1f ms, p90 %.1f ms, p99 %.1f ms, max "
        "%.1f ms (input to ACK/REJECT, %" PRIu64 " answers)\n",
        Ms(h.Percentile(50)), Ms(h.Percentile(90)), Ms(h.Percentile(99)),
        Ms(h.max()), h.count());
  } else {
    out += "  round trip: no answer received\n";
  }
  const Histogram& f = c.first_frame_us;
  if (f.count() > 0) {
    out += Format(
        "  first FRAME: p50 %.1f ms, p99 %.1f ms, max %.1f ms (connect + "
        "HELLO to the first FRAME, %" PRIu64 " bots)\n",
        Ms(f.Percentile(50)), Ms(f.Percentile(99)), Ms(f.max()), f.count());
  }
  const TransferCounts& t = c.transfers;
  if (t.followed + t.failed > 0) {
    out += Format("  transfers:  %" PRIu64 " followed, %" PRIu64 " failed",
                  t.followed, t.failed);
    if (t.time_us.count() > 0) {
      out += Format(
          "; p50 %.1f ms, p99 %.1f ms, max %.1f ms (the moving input's "
          "answer to the target's first FRAME)\n              of which "
          "to the TRANSFER p50 %.1f ms, p99 %.1f ms; the reconnect p50 %.1f "
          "ms, p99 %.1f ms",
          Ms(t.time_us.Percentile(50)), Ms(t.time_us.Percentile(99)),
          Ms(t.time_us.max()), Ms(t.notice_us.Percentile(50)),
          Ms(t.notice_us.Percentile(99)), Ms(t.reconnect_us.Percentile(50)),
          Ms(t.reconnect_us.Percentile(99)));
    }
    out += "\n";
  }
  if (c.bot_seconds > 0) {
    out += Format(
        "  received:   %.1f frames and %s per bot per second (%s "
        "in all)\n",
        static_cast<double>(c.frames) / c.bot_seconds,
        Bytes(static_cast<double>(c.bytes) / c.bot_seconds).c_str(),
        Bytes(static_cast<double>(c.bytes)).c_str());
  }
  if (r.server) {
    out += Format("  server:     pid %" PRId64
                  ", %.2f CPU seconds (%.0f%% of "
                  "one core over %.1f s), peak RSS %.1f MiB\n",
                  r.server->pid, r.server->cpu_seconds,
                  100.0 * r.server->cpu_seconds / secs, r.elapsed_secs,
                  static_cast<double>(r.server->peak_rss_kib) / 1024.0);
  }
  out += Format("  bench:      %.2f CPU seconds in this process%s\n",
                r.client_cpu_seconds, r.machines > 1 ? "es" : "");
  if (c.errors > 0) {
    out += Format("  errors:     %" PRIu64
                  " (undecodable messages or stray answers)\n",
                  c.errors);
  }
  AddCountLines(out, "connect failures", c.connect_failure_reasons, false);
  AddCountLines(out, "disconnects by close code", c.disconnects, true);
  AddCountLines(out, "refusals", c.refusals, false);
  AddCountLines(out, "aimed shots refused", c.aimed.refusals, false);
  AddCountLines(out, "transfers failed", c.transfers.failures, false);
  return out;
}

}  // namespace tessera::loadtest
