#include "server/dashboard_page.h"

namespace tessera::server {

namespace {

// The page and its stylesheet; the script is dashboard_script.cc.
constexpr std::string_view kPage = R"html(
<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>tessera dashboard</title>
<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 0; color: #222;
  background: #f6f6f4; }
header { display: flex; gap: 1em; align-items: center; padding: .6em 1em;
  background: #263238; color: #eceff1; }
header h1 { font-size: 1.1em; margin: 0; font-weight: 600; }
header .grow { flex: 1; }
header button { background: none; color: inherit; border: 1px solid #78909c; }
main { padding: 0 1em 2em; }
section { margin-top: 1.2em; }
h2 { font-size: 1em; margin: 0 0 .4em; }
table { border-collapse: collapse; background: #fff; width: 100%; }
th, td { border-bottom: 1px solid #e0e0e0; padding: .3em .5em;
  text-align: left; vertical-align: top; }
th { background: #eceff1; font-weight: 600; white-space: nowrap; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
tr.shard { cursor: pointer; }
tr.shard:hover { background: #f1f8e9; }
tr.selected { background: #e3f2fd; }
tr.gone { color: #9e9e9e; }
.status-running { color: #2e7d32; }
.status-stopped, .status-failed { color: #c62828; }
.status-starting { color: #ef6c00; }
.muted { color: #757575; }
.error { color: #c62828; }
button { font: inherit; padding: .1em .6em; cursor: pointer; }
#login { max-width: 28em; margin: 3em auto; background: #fff;
  padding: 1.2em; border: 1px solid #ddd; }
#login input { width: 100%; box-sizing: border-box; font: inherit;
  padding: .3em; margin: .4em 0; }
#detail { background: #fff; border: 1px solid #ddd; padding: .8em; }
#detail .charts { display: grid;
  grid-template-columns: repeat(auto-fill, minmax(320px, 1fr)); gap: .8em; }
#detail figure { margin: 0; }
#detail figcaption { font-size: .9em; color: #555; }
#detail canvas { width: 100%; height: 120px; background: #fafafa;
  border: 1px solid #eee; }
#log { max-height: 20em; overflow: auto; background: #1e1e1e; color: #ddd;
  font: 12px/1.35 ui-monospace, monospace; padding: .5em; margin: 0;
  white-space: pre-wrap; }
#log .l0 { color: #9e9e9e; } #log .l2 { color: #ffca28; }
#log .l3, #log .l4 { color: #ef5350; }
code { font: 12px ui-monospace, monospace; }
</style>
</head>
<body>
<header>
  <h1>tessera dashboard</h1>
  <span id="updated" class="muted"></span>
  <span class="grow"></span>
  <button id="forget" hidden>Forget token</button>
</header>
<main>
  <form id="login" hidden>
    <h2>Admin token</h2>
    <p class="muted">The server's admin token (<code>TESSERA_ADMIN_TOKEN</code>;
      <code>tessera dev</code> prints a link with it). It is kept in this
      tab only.</p>
    <input id="token" type="password" autocomplete="off"
      placeholder="admin token" aria-label="admin token">
    <button type="submit">Open</button>
    <p id="login-error" class="error"></p>
  </form>
  <div id="app" hidden>
    <p id="error" class="error"></p>
    <section>
      <h2>Shards</h2>
      <table id="shards">
        <thead><tr><th>id</th><th>kind</th><th>status</th>
          <th>subscribers</th><th>tick</th><th>ticks/s</th>
          <th>fuel/tick</th><th>overruns</th><th>queued inputs</th>
          <th>module</th><th>stop</th><th></th></tr></thead>
        <tbody></tbody>
      </table>
      <p id="no-shards" class="muted" hidden>No shards.</p>
    </section>
    <section id="detail" hidden>
      <h2>Shard <span id="detail-id"></span>
        <button id="detail-close" title="close">&times;</button></h2>
      <div class="charts">
        <figure><figcaption>ticks/s</figcaption>
          <canvas data-chart="rate"></canvas></figure>
        <figure><figcaption>fuel per tick</figcaption>
          <canvas data-chart="fuel"></canvas></figure>
        <figure><figcaption>subscribers</figcaption>
          <canvas data-chart="subscribers"></canvas></figure>
        <figure><figcaption>queued inputs</figcaption>
          <canvas data-chart="queued"></canvas></figure>
      </div>
      <h2 style="margin-top:.8em">Recent guest log</h2>
      <pre id="log"></pre>
    </section>
    <section>
      <h2>Kinds</h2>
      <table id="kinds">
        <thead><tr><th>kind</th><th>version</th><th>latest reload</th>
          <th>shards</th><th></th></tr></thead>
        <tbody></tbody>
      </table>
    </section>
    <section id="realms-section" hidden>
      <h2>Realms</h2>
      <p id="realms-summary"></p>
      <table id="realms">
        <thead><tr><th>kind</th><th>persistence</th><th>security</th></tr>
        </thead>
        <tbody></tbody>
      </table>
    </section>
    <section id="compute-section" hidden>
      <h2>Compute modules</h2>
      <table id="compute">
        <thead><tr><th>module</th><th>enabled</th><th>active version</th>
          <th>loaded</th><th>circuit</th><th>triggers</th><th>last error</th>
        </tr></thead>
        <tbody></tbody>
      </table>
    </section>
  </div>
</main>
<script src="/_dashboard/app.js"></script>
</body>
</html>
)html";

}  // namespace

std::string_view DashboardPage() { return kPage; }

}  // namespace tessera::server
