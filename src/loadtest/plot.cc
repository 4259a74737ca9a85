#include "loadtest/plot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <utility>
#include <vector>

#include "loadtest/svg.h"

namespace tessera::loadtest {
namespace {

using Points = std::vector<std::pair<double, double>>;

struct Series {
  std::string label;
  SvgDocument::Stroke stroke;
  // One value per second; nullopt where there is none (no answer).
  std::vector<std::pair<double, std::optional<double>>> values;
};

std::string Label(double v) {
  char buffer[32];
  if (std::fabs(v) >= 1e6) {
    std::snprintf(buffer, sizeof buffer, "%gM", v / 1e6);
  } else if (std::fabs(v) >= 1e3) {
    std::snprintf(buffer, sizeof buffer, "%gk", v / 1e3);
  } else {
    std::snprintf(buffer, sizeof buffer, "%g", v);
  }
  return buffer;
}

// One chart area with axes, grid, series and legend.
void Panel(SvgDocument& svg, double left, double top, double width,
           double height, double t_max, const std::string& title,
           const std::string& y_label, const std::vector<Series>& series) {
  double y_max = 0;
  for (const Series& s : series) {
    for (const auto& [t, v] : s.values) {
      if (v) y_max = std::max(y_max, *v);
    }
  }
  if (y_max <= 0) y_max = 1;
  y_max *= 1.15;  // headroom for the legend
  const double y_step = NiceStep(y_max, 5);
  y_max = std::ceil(y_max / y_step) * y_step;
  const double x_step = NiceStep(t_max, 10);
  auto x_of = [&](double t) { return left + width * t / t_max; };
  auto y_of = [&](double v) { return top + height * (1 - v / y_max); };

  svg.Text(left, top - 10, title, {.size = 14, .bold = true});
  svg.Rect(left, top, width, height, "#fbfbfb");
  const SvgDocument::Stroke grid{"#ddd", 1, ""};
  const SvgDocument::Stroke axis{"#444", 1, ""};
  for (double v = 0; v <= y_max + y_step / 2; v += y_step) {
    svg.Line(left, y_of(v), left + width, y_of(v), grid);
    svg.Line(left - 4, y_of(v), left, y_of(v), axis);
    svg.Text(left - 7, y_of(v) + 4, Label(v),
             {.size = 11, .anchor = SvgDocument::Anchor::kEnd});
  }
  for (double t = 0; t <= t_max + x_step / 2; t += x_step) {
    svg.Line(x_of(t), top + height, x_of(t), top + height + 4, axis);
    svg.Text(x_of(t), top + height + 17, Label(t),
             {.size = 11, .anchor = SvgDocument::Anchor::kMiddle});
  }
  svg.Line(left, top, left, top + height, axis);
  svg.Line(left, top + height, left + width, top + height, axis);
  svg.Text(left - 48, top + height / 2, y_label,
           {.size = 12, .anchor = SvgDocument::Anchor::kMiddle, .rotate = -90});
  svg.Text(left + width / 2, top + height + 34, "seconds since the start",
           {.size = 12, .anchor = SvgDocument::Anchor::kMiddle});

  // Polylines broken where a value is missing.
  for (const Series& s : series) {
    Points run;
    for (const auto& [t, v] : s.values) {
      if (v) {
        run.emplace_back(x_of(t), y_of(*v));
        continue;
      }
      if (run.size() > 1) svg.Polyline(run, s.stroke);
      run.clear();
    }
    if (run.size() > 1) svg.Polyline(run, s.stroke);
    if (run.size() == 1) {
      svg.Line(run[0].first - 2, run[0].second, run[0].first + 2, run[0].second,
               s.stroke);
    }
  }
  // The legend, top right: a sample of each line, then its label.
  double legend_width = 8;
  for (const Series& s : series) {
    legend_width += 30 + 7.0 * static_cast<double>(s.label.size()) + 14;
  }
  const SvgDocument::Stroke frame{"#ccc", 1, ""};
  double legend_x = left + width - 10 - legend_width;
  svg.Rect(legend_x, top + 6, legend_width, 22, "#fff", &frame);
  legend_x += 8;
  for (const Series& s : series) {
    svg.Line(legend_x, top + 17, legend_x + 24, top + 17, s.stroke);
    legend_x += 30;
    svg.Text(legend_x, top + 21, s.label, {.size = 12});
    legend_x += 7.0 * static_cast<double>(s.label.size()) + 14;
  }
}

std::string DefaultTitle(const Report& r) {
  char buffer[256];
  std::snprintf(
      buffer, sizeof buffer, "tessera bench: %lld bots x %g inputs/s, %g s%s",
      static_cast<long long>(r.settings.bots), r.settings.rate,
      r.settings.duration_secs,
      r.machines > 1 ? (", " + std::to_string(r.machines) + " machines").c_str()
                     : "");
  return buffer;
}

}  // namespace

double NiceStep(double span, int ticks) {
  if (span <= 0 || ticks <= 0) return 1;
  const double raw = span / ticks;
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (raw <= m * power) return m * power;
  }
  return 10 * power;
}

std::string PlotReport(const Report& report, const PlotOptions& options) {
  SvgDocument svg(options.width, options.height);
  svg.Rect(0, 0, options.width, options.height, "#fff");
  svg.Text(options.width / 2, 26,
           options.title.empty() ? DefaultTitle(report) : options.title,
           {.size = 16, .anchor = SvgDocument::Anchor::kMiddle, .bold = true});

  const Counts& c = report.counts;
  char subtitle[256];
  std::snprintf(subtitle, sizeof subtitle,
                "%llu of %lld bots connected; %llu inputs acked, %llu "
                "refused; round trip p50 %.1f ms, p99 %.1f ms",
                static_cast<unsigned long long>(c.bots_connected),
                static_cast<long long>(report.settings.bots),
                static_cast<unsigned long long>(c.inputs_acked),
                static_cast<unsigned long long>(c.inputs_refused),
                c.rtt_us.Percentile(50) / 1000.0,
                c.rtt_us.Percentile(99) / 1000.0);
  svg.Text(
      options.width / 2, 46, subtitle,
      {.size = 12, .anchor = SvgDocument::Anchor::kMiddle, .color = "#555"});

  double t_max = 1;
  for (const SeriesPoint& p : report.series) {
    t_max = std::max(t_max, static_cast<double>(p.t + 1));
  }
  Series p50{"p50", {"#1f77b4", 2, ""}, {}};
  Series p99{"p99", {"#d62728", 2, ""}, {}};
  Series acked{"acked/s", {"#2ca02c", 2, ""}, {}};
  Series sent{"sent/s", {"#7f7f7f", 1.5, "5 4"}, {}};
  for (const SeriesPoint& p : report.series) {
    // Each second's figures are drawn at its end.
    const double t = static_cast<double>(p.t + 1);
    std::optional<double> none;
    const bool answered = p.rtt_us.count() > 0;
    p50.values.emplace_back(
        t, answered ? std::optional<double>(p.rtt_us.Percentile(50) / 1000.0)
                    : none);
    p99.values.emplace_back(
        t, answered ? std::optional<double>(p.rtt_us.Percentile(99) / 1000.0)
                    : none);
    acked.values.emplace_back(t, static_cast<double>(p.acked));
    sent.values.emplace_back(t, static_cast<double>(p.sent));
  }
  const double left = 80, right = 30, top = 90, gap = 80, bottom = 60;
  const double width = options.width - left - right;
  const double height = (options.height - top - gap - bottom) / 2;
  Panel(svg, left, top, width, height, t_max, "Input round trip",
        "milliseconds", {p50, p99});
  Panel(svg, left, top + height + gap, width, height, t_max,
        "Inputs per second", "inputs / s", {acked, sent});
  return svg.Finish();
}

}  // namespace tessera::loadtest
