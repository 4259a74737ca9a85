// The metrics as a page a person reads: what a browser gets at /metrics
// (it asks for text/html; Prometheus and curl do not, and keep getting the
// exposition text). One table per metric family with its help text and
// type, a row per series; a histogram shows its count, sum and mean rather
// than its buckets. Pure functions.
#ifndef TESSERA_SERVER_METRICS_PAGE_H_
#define TESSERA_SERVER_METRICS_PAGE_H_

#include <string>
#include <string_view>

namespace tessera::server {

// Whether an Accept header value asks for HTML.
bool AcceptsHtml(std::string_view accept);

// The HTML page of `exposition` (Prometheus text format 0.0.4, as
// Metrics::Render writes it); it reloads itself every `refresh_secs`.
std::string MetricsPage(std::string_view exposition, int refresh_secs = 2);

}  // namespace tessera::server

#endif  // TESSERA_SERVER_METRICS_PAGE_H_
