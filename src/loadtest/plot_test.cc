#include "loadtest/plot.h"

#include <gtest/gtest.h>

#include <regex>
#include <vector>

#include "loadtest/svg.h"

namespace tessera::loadtest {
namespace {

// A small well-formedness check: one root element, every tag closed in
// order, attribute values quoted, no raw '<' or '&' in text.
bool WellFormed(const std::string& xml, std::string* error) {
  std::vector<std::string> open;
  size_t i = 0;
  int roots = 0;
  while (i < xml.size()) {
    if (xml[i] == '&') {
      const size_t semi = xml.find(';', i);
      const std::string entity = xml.substr(i, semi - i + 1);
      if (entity != "&amp;" && entity != "&lt;" && entity != "&gt;" &&
          entity != "&quot;" && entity != "&apos;") {
        *error = "bad entity at " + std::to_string(i);
        return false;
      }
      i = semi + 1;
      continue;
    }
    if (xml[i] != '<') {
      ++i;
      continue;
    }
    const size_t end = xml.find('>', i);
    if (end == std::string::npos) {
      *error = "unclosed tag";
      return false;
    }
    std::string tag = xml.substr(i + 1, end - i - 1);
    i = end + 1;
    if (tag.front() == '?') continue;  // the XML declaration
    if (tag.front() == '/') {
      if (open.empty() || open.back() != tag.substr(1)) {
        *error = "mismatched </" + tag.substr(1) + ">";
        return false;
      }
      open.pop_back();
      continue;
    }
    if (tag.find('<') != std::string::npos) {
      *error = "'<' inside a tag";
      return false;
    }
    // Attributes: name="value" pairs.
    static const std::regex kTag(
        R"(^[a-z]+(\s+[a-zA-Z][a-zA-Z0-9-]*="[^"<]*")*\s*/?$)");
    if (!std::regex_match(tag, kTag)) {
      *error = "bad tag <" + tag + ">";
      return false;
    }
    const bool self_closing = tag.back() == '/';
    if (open.empty()) ++roots;
    if (!self_closing) open.push_back(tag.substr(0, tag.find_first_of(" /")));
  }
  if (!open.empty()) {
    *error = "<" + open.back() + "> not closed";
    return false;
  }
  if (roots != 1) {
    *error = std::to_string(roots) + " root elements";
    return false;
  }
  return true;
}

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos;
       at = text.find(what, at + 1)) {
    ++n;
  }
  return n;
}

TEST(PlotTest, ChartIsWellFormedWithSeriesAxesAndLegend) {
  Report r;
  r.settings.bots = 50;
  r.settings.rate = 10;
  r.settings.duration_secs = 20;
  for (int64_t t = 0; t < 20; ++t) {
    SeriesPoint p;
    p.t = t;
    p.sent = 500;
    p.acked = 490 + static_cast<uint64_t>(t % 3);
    if (t != 7) {  // a second without answers: a gap in the latency lines
      for (uint64_t v = 1; v <= 100; ++v) p.rtt_us.Record(v * 1000 + t * 100);
    }
    r.series.push_back(p);
  }
  const std::string svg = PlotReport(r, PlotOptions{.title = "a <b> & c"});
  std::string error;
  EXPECT_TRUE(WellFormed(svg, &error)) << error << "\n" << svg;
  EXPECT_EQ(svg.rfind("<?xml", 0), 0u);
  EXPECT_NE(svg.find("<svg xmlns=\"http://www.w3.org/2000/svg\""),
            std::string::npos);
  EXPECT_NE(svg.find("a &lt;b&gt; &amp; c"), std::string::npos);
  for (const char* label :
       {">p50<", ">p99<", ">acked/s<", ">sent/s<", ">Input round trip<",
        ">Inputs per second<", ">milliseconds<", ">seconds since the start<"}) {
    EXPECT_NE(svg.find(label), std::string::npos) << label;
  }
  // p50 and p99 are broken at the gap (2 lines each), acked and sent whole.
  EXPECT_EQ(Count(svg, "<polyline"), 6u);
  EXPECT_EQ(Count(svg, "stroke=\"#1f77b4\" stroke-width=\"2.0\"/>"), 3u)
      << "p50: two pieces and the legend";
}

TEST(PlotTest, EmptyReportStillPlots) {
  std::string error;
  EXPECT_TRUE(WellFormed(PlotReport(Report(), PlotOptions()), &error)) << error;
}

TEST(PlotTest, NiceSteps) {
  EXPECT_DOUBLE_EQ(NiceStep(100, 5), 20);
  EXPECT_DOUBLE_EQ(NiceStep(7, 5), 2);
  EXPECT_DOUBLE_EQ(NiceStep(0.9, 5), 0.2);
  EXPECT_DOUBLE_EQ(NiceStep(43, 10), 5);
  EXPECT_DOUBLE_EQ(NiceStep(0, 5), 1);
}

TEST(SvgTest, EscapesText) {
  EXPECT_EQ(XmlEscape("<a href=\"x\">&'"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&apos;");
}

}  // namespace
}  // namespace tessera::loadtest
