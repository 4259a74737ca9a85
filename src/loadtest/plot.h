// `tessera bench plot`: a report's time series as an SVG chart, with the
// input round trip (p50, p99) above and the inputs per second (acked, sent)
// below, over the seconds of the run.
#ifndef TESSERA_LOADTEST_PLOT_H_
#define TESSERA_LOADTEST_PLOT_H_

#include <string>

#include "loadtest/report.h"

namespace tessera::loadtest {

struct PlotOptions {
  std::string title;  // empty: made from the report's settings
  double width = 960;
  double height = 640;
};

// The SVG document.
std::string PlotReport(const Report& report, const PlotOptions& options);

// A round axis step for a range of `span` split in about `ticks` steps:
// 1, 2 or 5 times a power of ten.
double NiceStep(double span, int ticks);

}  // namespace tessera::loadtest

#endif  // TESSERA_LOADTEST_PLOT_H_
