// replication_bench: bytes per client and position error of the `entities`
// payloads in the anchor's scenario (anchor_scenario.h), next to the
// anchor's figures and our targets.
//
// 300 players in a 60 x 60 area for 400 ticks at 20 Hz; ticks 21-400
// (19 s) are counted. Every subscriber sees all players (no interest
// filter); subscriber i is centred on player i with radius 60, which only
// ranks updates under the byte budget. Bytes per tick and client: the
// payload inside its FRAME message, [19, tick, last_seq, nil, bin] in
// MessagePack (last_seq = tick: one input acknowledged per tick), and the
// server-to-client WebSocket header around it. KB = 1,000 bytes.
//
// Position error: the 2D distance between a client's decoded position and
// the true one at the same tick, every entity, every tick after 20. Also
// as a client rendering 100 ms (2 ticks) behind sees it: at render times
// T + f ticks (f = 0, 1/4, 1/2, 3/4) the client interpolates between its
// states after frames T-2 and T-1, compared with the true positions
// interpolated the same way.
//
// --quick: 10 subscribers and 60 ticks; the exit status reports only
// consistency (every decoder reconstructs the exact quantised state when
// there is no budget, and what its stream believes it holds otherwise),
// never timings or bytes.
#include <time.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "anchor_scenario.h"
#include "error_histogram.h"
#include "net/msgpack.h"
#include "replication/decoder.h"
#include "replication/mirror.h"
#include "replication/subscriber_stream.h"
#include "sparse_encode.h"

namespace tessera::bench {
namespace {

using replication::Config;
using replication::Decoder;
using replication::Focus;
using replication::Mirror;
using replication::SubscriberStream;

constexpr int kWarmupTicks = 20;
constexpr int kInterpolationTicks = 2;  // 100 ms at 20 Hz

struct Row {
  double precision;
  uint32_t budget;
  const char* note;
};

struct RowResult {
  double payload_bytes_per_tick = 0;
  double kbps_frame = 0;  // payload + FRAME header
  double kbps_ws = 0;     // + WebSocket header
  double p99 = 0;
  double max = 0;
  double p99_interp = 0;
  double deferred_per_tick = 0;
  double encode_us = 0;  // CPU per subscriber-tick
  double decode_us = 0;
  double mirror_us = 0;  // per tick
  bool consistent = true;
  std::string problem;
};

double CpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + ts.tv_nsec * 1e-9;
}

size_t FrameHeaderSize(uint64_t tick, uint64_t last_seq, size_t payload) {
  std::string h;
  net::msgpack::Writer w(&h);
  w.ArrayHeader(5);
  w.Uint(19);
  w.Uint(tick);
  w.Uint(last_seq);
  w.Nil();
  w.BinHeader(payload);
  return h.size();
}

double Distance(double dx, double dy) { return std::sqrt(dx * dx + dy * dy); }

size_t WebSocketHeaderSize(size_t message) {
  return message <= 125 ? 2 : message <= 65535 ? 4 : 10;
}

RowResult RunRow(const Row& row, int subscribers, int ticks) {
  RowResult r;
  AnchorParams params;
  AnchorScenario sim(params);
  const int players = sim.players();
  Config config;
  config.precision = row.precision;
  config.max_bytes_per_tick = row.budget;
  Mirror mirror(config);
  std::vector<SubscriberStream> streams(subscribers);
  std::vector<Decoder> decoders(subscribers);
  std::vector<std::string> payloads(subscribers);
  ErrorHistogram now;
  ErrorHistogram interp;
  // Decoded and true positions of the last ticks: [tick % 3][sub][player].
  const size_t per_tick = static_cast<size_t>(subscribers) * players;
  std::vector<double> dx(3 * per_tick), dy(3 * per_tick);
  std::vector<double> tx(3 * players), ty(3 * players);
  uint64_t bytes_payload = 0;
  uint64_t bytes_frame = 0;
  uint64_t bytes_ws = 0;
  uint64_t deferred = 0;
  double encode_s = 0;
  double decode_s = 0;
  double mirror_s = 0;
  const int counted_ticks = ticks - kWarmupTicks;

  for (int tick = 1; tick <= ticks; ++tick) {
    sim.Step();
    const std::string changes = sim.Changes();
    double t0 = CpuSeconds();
    tessera::Status st = mirror.Apply(changes, tick);
    mirror_s += CpuSeconds() - t0;
    if (!st.ok()) {
      r.consistent = false;
      r.problem = "mirror: " + st.message();
      return r;
    }
    const int slot = tick % 3;
    for (int p = 0; p < players; ++p) {
      tx[slot * players + p] = sim.x(p);
      ty[slot * players + p] = sim.y(p);
    }
    const bool counted = tick > kWarmupTicks;
    // Encode for everyone, then decode for everyone (timed apart).
    t0 = CpuSeconds();
    for (int s = 0; s < subscribers; ++s) {
      const Focus focus{sim.x(s), sim.y(s), 60};
      streams[s].Encode(mirror, mirror.ids(), focus, tick, payloads[s]);
    }
    const double t1 = CpuSeconds();
    encode_s += t1 - t0;
    for (int s = 0; s < subscribers && st.ok(); ++s) {
      st = decoders[s].Apply(payloads[s]);
    }
    decode_s += CpuSeconds() - t1;
    if (!st.ok()) {
      r.consistent = false;
      r.problem = "decoder: " + st.message();
      return r;
    }
    for (int s = 0; s < subscribers; ++s) {
      const std::string& payload = payloads[s];
      std::span<const replication::DecodedEntity> got = decoders[s].entities();
      std::span<const replication::HeldEntity> held = streams[s].held();
      if (got.size() != static_cast<size_t>(players)) {
        r.consistent = false;
        r.problem = "decoder holds " + std::to_string(got.size()) + " entities";
        return r;
      }
      for (int p = 0; p < players; ++p) {
        const replication::DecodedEntity& e = got[p];
        const replication::MirrorEntity& m = mirror.entity_at(p);
        const int64_t* want = row.budget == 0 ? m.q : held[p].q;
        if (e.id != AnchorScenario::Id(p) ||
            std::memcmp(e.q, want, sizeof(e.q)) != 0) {
          r.consistent = false;
          r.problem = "tick " + std::to_string(tick) + " subscriber " +
                      std::to_string(s) + ": entity " + std::to_string(e.id) +
                      " differs from the " +
                      (row.budget == 0 ? "mirror" : "stream's held state");
          return r;
        }
        const double x = decoders[s].Coordinate(e, 0);
        const double y = decoders[s].Coordinate(e, 1);
        const size_t at =
            slot * per_tick + static_cast<size_t>(s) * players + p;
        dx[at] = x;
        dy[at] = y;
        if (counted) now.Add(Distance(x - sim.x(p), y - sim.y(p)));
      }
      if (counted) {
        const uint64_t tick_u = static_cast<uint64_t>(tick);
        const size_t frame =
            FrameHeaderSize(tick_u, tick_u, payload.size()) + payload.size();
        bytes_payload += payload.size();
        bytes_frame += frame;
        bytes_ws += frame + WebSocketHeaderSize(frame);
        deferred += streams[s].last().deferred;
      }
    }
    // Rendering 100 ms behind: between the states after T-2 and T-1.
    if (tick > kWarmupTicks + kInterpolationTicks) {
      const int a = (tick - kInterpolationTicks) % 3;
      const int b = (tick - kInterpolationTicks + 1) % 3;
      for (int s = 0; s < subscribers; ++s) {
        for (int p = 0; p < players; ++p) {
          const size_t ia = a * per_tick + static_cast<size_t>(s) * players + p;
          const size_t ib = b * per_tick + static_cast<size_t>(s) * players + p;
          for (double f : {0.0, 0.25, 0.5, 0.75}) {
            const double cx = dx[ia] + (dx[ib] - dx[ia]) * f;
            const double cy = dy[ia] + (dy[ib] - dy[ia]) * f;
            const double wx = tx[a * players + p] +
                              (tx[b * players + p] - tx[a * players + p]) * f;
            const double wy = ty[a * players + p] +
                              (ty[b * players + p] - ty[a * players + p]) * f;
            interp.Add(Distance(cx - wx, cy - wy));
          }
        }
      }
    }
  }
  const double seconds = static_cast<double>(counted_ticks) / params.tick_rate;
  const double per_client = static_cast<double>(subscribers) * seconds * 1000;
  r.payload_bytes_per_tick = static_cast<double>(bytes_payload) /
                             (static_cast<double>(subscribers) * counted_ticks);
  r.kbps_frame = static_cast<double>(bytes_frame) / per_client;
  r.kbps_ws = static_cast<double>(bytes_ws) / per_client;
  r.p99 = now.Percentile(0.99);
  r.max = now.max();
  r.p99_interp = interp.Percentile(0.99);
  r.deferred_per_tick = static_cast<double>(deferred) /
                        (static_cast<double>(subscribers) * counted_ticks);
  const double sub_ticks = static_cast<double>(subscribers) * ticks;
  r.encode_us = encode_s / sub_ticks * 1e6;
  r.decode_us = decode_s / sub_ticks * 1e6;
  r.mirror_us = mirror_s / ticks * 1e6;
  return r;
}

std::string Verdict(const Row& row, bool met, const char* target) {
  char line[160];
  std::snprintf(line, sizeof(line), "target %-38s precision %.2f: %s", target,
                row.precision, met ? "met" : "NOT met");
  return line;
}

}  // namespace
}  // namespace tessera::bench

int main(int argc, char** argv) {
  using namespace tessera::bench;
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) {
      quick = true;
    } else {
      std::fprintf(stderr, "usage: replication_bench [--quick]\n");
      return 2;
    }
  }
  const int subscribers = quick ? 10 : 300;
  const int ticks = quick ? 60 : 400;
  const Row rows[] = {
      {0.01, 0, ""},
      {0.01, 900, ""},
      {0.05, 0, ""},
      {0.05, 900, ""},
      {0.01, 250, "(extra: a budget that binds)"},
  };
  std::printf(
      "replication_bench%s: 300 players in 60 x 60, 20 Hz, %d ticks "
      "(ticks %d-%d counted, %.0f s), %d subscribers each seeing all "
      "players\n",
      quick ? " --quick" : "", ticks, kWarmupTicks + 1, ticks,
      (ticks - kWarmupTicks) / 20.0, subscribers);
  std::printf(
      "anchor (competitor): no budget ~23 KB/s per client; 900 B/tick budget "
      "~15 KB/s at p99 error 0.08\n"
      "targets:             no budget <= 12 KB/s; 900 B/tick budget <= 15 "
      "KB/s at p99 error <= 0.05\n\n");
  std::printf("%-9s %-7s %9s %11s %9s %9s %9s %11s %9s %9s %9s\n", "precision",
              "budget", "payload", "KB/s", "KB/s", "p99 err", "max err",
              "p99 err", "deferred", "encode", "decode");
  std::printf("%-9s %-7s %9s %11s %9s %9s %9s %11s %9s %9s %9s\n", "", "B/tick",
              "B/tick", "+FRAME hdr", "+WS hdr", "", "", "100ms interp",
              "/tick", "us/sub-t", "us/sub-t");
  bool ok = true;
  std::vector<std::string> verdicts;
  for (const Row& row : rows) {
    const RowResult r = RunRow(row, subscribers, ticks);
    if (!r.consistent) {
      std::printf("precision %.2f budget %u: INCONSISTENT: %s\n", row.precision,
                  row.budget, r.problem.c_str());
      ok = false;
      continue;
    }
    std::printf(
        "%-9.2f %-7u %9.1f %11.2f %9.2f %9.4f %9.4f %11.4f %9.1f %9.2f "
        "%9.2f %s\n",
        row.precision, row.budget, r.payload_bytes_per_tick, r.kbps_frame,
        r.kbps_ws, r.p99, r.max, r.p99_interp, r.deferred_per_tick, r.encode_us,
        r.decode_us, row.note);
    if (row.budget == 0 && row.precision == 0.01) {
      std::printf("  mirror apply: %.1f us per tick\n", r.mirror_us);
    }
    // Against the targets (bytes as the anchor counts them: payload plus
    // the frame header).
    if (row.budget == 0) {
      verdicts.push_back(
          Verdict(row, r.kbps_frame <= 12, "no budget: <= 12 KB/s"));
    } else if (row.budget == 900) {
      verdicts.push_back(Verdict(row, r.kbps_frame <= 15 && r.p99 <= 0.05,
                                 "900 B/tick: <= 15 KB/s at p99 <= 0.05"));
    }
  }
  std::printf("\n");
  for (const std::string& v : verdicts) std::printf("%s\n", v.c_str());
  std::printf("%s\n", ok ? "consistency: every decoder matched"
                         : "consistency: FAILED");
  PrintSparseEncode(quick);
  return ok ? 0 : 1;
}
