// The dashboard at /_dashboard: one static HTML page (its CSS inline) and
// its script, served by ApiHandler without a token. The page holds no
// secret: it asks for the admin token (or takes it once from the URL
// fragment, #token=..., which browsers never send), keeps it in the tab's
// sessionStorage and polls the admin API with it (docs/admin-api.md
// "Dashboard").
#ifndef TESSERA_SERVER_DASHBOARD_PAGE_H_
#define TESSERA_SERVER_DASHBOARD_PAGE_H_

#include <string_view>

namespace tessera::server {

// GET /_dashboard: text/html.
std::string_view DashboardPage();

// GET /_dashboard/app.js (dashboard_script.cc): text/javascript.
std::string_view DashboardScript();

}  // namespace tessera::server

#endif  // TESSERA_SERVER_DASHBOARD_PAGE_H_
