#include "server/metrics_page.h"

#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace tessera::server {
namespace {

std::string Escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

struct Series {
  std::string labels;  // as written, without the braces ("" for none)
  std::string value;
  // Histograms: the _count and _sum of this label set.
  std::string count, sum;
};

struct Family {
  std::string name, help, type;
  std::vector<Series> series;
  std::map<std::string, size_t> by_labels;  // histogram label set -> index
};

// Splits `name{labels} value` (labels optional).
bool SplitSample(std::string_view line, std::string_view* name,
                 std::string_view* labels, std::string_view* value) {
  const size_t brace = line.find('{');
  const size_t space = line.rfind(' ');
  if (space == std::string_view::npos || space == 0) return false;
  *value = line.substr(space + 1);
  if (brace != std::string_view::npos && brace < space) {
    const size_t close = line.rfind('}', space);
    if (close == std::string_view::npos || close < brace) return false;
    *name = line.substr(0, brace);
    *labels = line.substr(brace + 1, close - brace - 1);
  } else {
    *name = line.substr(0, space);
    *labels = {};
  }
  return !name->empty();
}

// `labels` without its le="..." pair.
std::string WithoutLe(std::string_view labels) {
  std::string out;
  size_t start = 0;
  while (start <= labels.size()) {
    size_t end = labels.find("\",", start);
    end = end == std::string_view::npos ? labels.size() : end + 1;
    std::string_view pair = labels.substr(start, end - start);
    if (!pair.starts_with("le=") && !pair.empty()) {
      if (!out.empty()) out += ',';
      out += pair;
    }
    start = end + 1;
  }
  return out;
}

std::string Mean(const Series& s) {
  const double count = std::strtod(s.count.c_str(), nullptr);
  if (count <= 0) return "–";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g",
                std::strtod(s.sum.c_str(), nullptr) / count);
  return buf;
}

std::vector<Family> Parse(std::string_view text) {
  std::vector<Family> families;
  std::map<std::string, size_t, std::less<>> index;
  auto family = [&](std::string_view name) -> Family& {
    auto it = index.find(name);
    if (it == index.end()) {
      it = index.emplace(std::string(name), families.size()).first;
      families.push_back(Family{std::string(name), "", "", {}, {}});
    }
    return families[it->second];
  };
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    if (line.starts_with("# HELP ") || line.starts_with("# TYPE ")) {
      std::string_view rest = line.substr(7);
      const size_t space = rest.find(' ');
      if (space == std::string_view::npos) continue;
      Family& f = family(rest.substr(0, space));
      (line[2] == 'H' ? f.help : f.type) = std::string(rest.substr(space + 1));
      continue;
    }
    if (line.empty() || line[0] == '#') continue;
    std::string_view name, labels, value;
    if (!SplitSample(line, &name, &labels, &value)) continue;
    for (std::string_view suffix : {"_bucket", "_count", "_sum"}) {
      if (!name.ends_with(suffix)) continue;
      auto it = index.find(name.substr(0, name.size() - suffix.size()));
      if (it == index.end() || families[it->second].type != "histogram") {
        continue;
      }
      Family& f = families[it->second];
      const std::string key = WithoutLe(labels);
      auto [slot, added] = f.by_labels.emplace(key, f.series.size());
      if (added) f.series.push_back(Series{key, "", "", ""});
      Series& s = f.series[slot->second];
      if (suffix == "_count") s.count = std::string(value);
      if (suffix == "_sum") s.sum = std::string(value);
      name = {};
      break;
    }
    if (name.empty()) continue;
    family(name).series.push_back(
        Series{std::string(labels), std::string(value), "", ""});
  }
  return families;
}

}  // namespace

bool AcceptsHtml(std::string_view accept) {
  return accept.find("text/html") != std::string_view::npos;
}

std::string MetricsPage(std::string_view exposition, int refresh_secs) {
  std::string html =
      "<!doctype html>\n<html><head><meta charset=\"utf-8\">"
      "<meta http-equiv=\"refresh\" content=\"" +
      std::to_string(refresh_secs) +
      "\"><title>tessera metrics</title><style>"
      "body{font:14px system-ui,sans-serif;margin:1.5em;color:#222}"
      "h2{font-size:15px;margin:1.4em 0 .2em;font-family:monospace}"
      "p{margin:.1em 0 .4em;color:#555}"
      "table{border-collapse:collapse}td,th{padding:2px 10px;"
      "border-bottom:1px solid #eee;text-align:left;font-family:monospace}"
      "td.v{text-align:right}</style></head><body>"
      "<h1>tessera metrics</h1><p>Reloads every " +
      std::to_string(refresh_secs) +
      " s. The same numbers as Prometheus text: "
      "<a href=\"/metrics?format=text\">/metrics?format=text</a> "
      "(what a scraper or curl gets at /metrics).</p>\n";
  for (const Family& f : Parse(exposition)) {
    if (f.series.empty()) continue;
    html += "<h2>" + Escape(f.name) + "</h2><p>" + Escape(f.help) +
            (f.type.empty() ? "" : " (" + Escape(f.type) + ")") + "</p><table>";
    const bool histogram = f.type == "histogram";
    html += histogram ? "<tr><th>labels</th><th>count</th><th>sum</th>"
                        "<th>mean</th></tr>"
                      : "<tr><th>labels</th><th>value</th></tr>";
    for (const Series& s : f.series) {
      html += "<tr><td>" + Escape(s.labels) + "</td>";
      if (histogram) {
        html += "<td class=v>" + Escape(s.count) + "</td><td class=v>" +
                Escape(s.sum) + "</td><td class=v>" + Mean(s) + "</td>";
      } else {
        html += "<td class=v>" + Escape(s.value) + "</td>";
      }
      html += "</tr>";
    }
    html += "</table>\n";
  }
  html += "</body></html>\n";
  return html;
}

}  // namespace tessera::server
