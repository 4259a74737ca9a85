// The benchmark workloads (see workloads.h). Freestanding C++: fixed-size
// static arrays, no library calls; sqrt is __builtin_sqrt (f64.sqrt in wasm,
// sqrtsd natively). Float-to-int conversions only ever see in-range values.
#include "guest/workloads.h"

namespace {

using u32 = unsigned;
using u64 = unsigned long long;

// Deterministic pseudo-random numbers (Numerical Recipes LCG).
struct Rng {
  u32 state;
  u32 Next() {
    state = state * 1664525u + 1013904223u;
    return state;
  }
  // Uniform in [0, 1), 24 random bits.
  double Unit() {
    return static_cast<double>(Next() >> 8) * (1.0 / 16777216.0);
  }
};

// FNV-1a over 64-bit words.
struct Checksum {
  u64 h = 14695981039346656037ull;
  void Add(u64 v) {
    for (int i = 0; i < 8; ++i) {
      h ^= (v >> (8 * i)) & 0xff;
      h *= 1099511628211ull;
    }
  }
  void AddDouble(double d) { Add(__builtin_bit_cast(u64, d)); }
};

// ---------------------------------------------------------------------------
// sim: 1,000 entities, uniform-grid neighbour search, steering.

constexpr int kEntities = 1000;
constexpr double kWorld = 500.0;  // the world wraps around (a torus)
constexpr double kRadius = 25.0;  // neighbour radius == grid cell size
constexpr double kRadius2 = kRadius * kRadius;
constexpr int kGridDim = 20;  // kWorld / kRadius
constexpr int kCells = kGridDim * kGridDim;
constexpr double kMaxSpeed = 2.0;  // world units per tick
constexpr double kMinSpeed = 0.5;

struct Entity {
  double x, y, vx, vy;
};

Entity g_entities[kEntities];
double g_new_vx[kEntities], g_new_vy[kEntities];
int g_cell_start[kCells + 1];  // entities of cell c: [start[c], start[c+1])
int g_cell_count[kCells];
int g_cell_items[kEntities];
int g_cell_of[kEntities];

int CellCoord(double v) {
  int c = static_cast<int>(v * (1.0 / kRadius));  // v in [0, kWorld)
  return c < kGridDim ? c : kGridDim - 1;
}

double WrapDelta(double d) {
  if (d > kWorld * 0.5) return d - kWorld;
  if (d < -kWorld * 0.5) return d + kWorld;
  return d;
}

void SimInit() {
  Rng rng{12345};
  for (Entity& e : g_entities) {
    e.x = rng.Unit() * kWorld;
    e.y = rng.Unit() * kWorld;
    e.vx = (rng.Unit() - 0.5) * 2 * kMaxSpeed;
    e.vy = (rng.Unit() - 0.5) * 2 * kMaxSpeed;
  }
}

void SimMove() {
  for (Entity& e : g_entities) {
    e.x += e.vx;
    e.y += e.vy;
    if (e.x < 0) e.x += kWorld;
    if (e.x >= kWorld) e.x -= kWorld;
    if (e.y < 0) e.y += kWorld;
    if (e.y >= kWorld) e.y -= kWorld;
  }
}

// Counting sort of entities by cell; each cell lists its entities in
// index order.
void SimRebuildGrid() {
  for (int c = 0; c < kCells; ++c) g_cell_count[c] = 0;
  for (int i = 0; i < kEntities; ++i) {
    int c = CellCoord(g_entities[i].y) * kGridDim + CellCoord(g_entities[i].x);
    g_cell_of[i] = c;
    ++g_cell_count[c];
  }
  int begin = 0;
  for (int c = 0; c < kCells; ++c) {
    g_cell_start[c] = begin;
    begin += g_cell_count[c];
    g_cell_count[c] = g_cell_start[c];  // reused as the fill cursor
  }
  g_cell_start[kCells] = begin;
  for (int i = 0; i < kEntities; ++i) {
    g_cell_items[g_cell_count[g_cell_of[i]]++] = i;
  }
}

// Boids-style steering: separation, alignment, cohesion from the neighbours
// within kRadius. Returns how many neighbour pairs were seen.
u32 SimSteer() {
  u32 pairs = 0;
  for (int i = 0; i < kEntities; ++i) {
    const Entity& self = g_entities[i];
    int cx = g_cell_of[i] % kGridDim, cy = g_cell_of[i] / kGridDim;
    double sep_x = 0, sep_y = 0, ali_x = 0, ali_y = 0, coh_x = 0, coh_y = 0;
    int count = 0;
    for (int oy = -1; oy <= 1; ++oy) {
      int ny = cy + oy;
      ny = ny < 0 ? ny + kGridDim : (ny >= kGridDim ? ny - kGridDim : ny);
      for (int ox = -1; ox <= 1; ++ox) {
        int nx = cx + ox;
        nx = nx < 0 ? nx + kGridDim : (nx >= kGridDim ? nx - kGridDim : nx);
        int c = ny * kGridDim + nx;
        for (int k = g_cell_start[c]; k < g_cell_start[c + 1]; ++k) {
          int j = g_cell_items[k];
          if (j == i) continue;
          const Entity& other = g_entities[j];
          double dx = WrapDelta(other.x - self.x);
          double dy = WrapDelta(other.y - self.y);
          double d2 = dx * dx + dy * dy;
          if (d2 >= kRadius2 || d2 == 0) continue;
          ++count;
          sep_x -= dx / d2;
          sep_y -= dy / d2;
          ali_x += other.vx;
          ali_y += other.vy;
          coh_x += dx;
          coh_y += dy;
        }
      }
    }
    double vx = self.vx, vy = self.vy;
    if (count > 0) {
      double inv = 1.0 / count;
      vx += sep_x * 1.5 + (ali_x * inv - vx) * 0.05 + coh_x * inv * 0.01;
      vy += sep_y * 1.5 + (ali_y * inv - vy) * 0.05 + coh_y * inv * 0.01;
    }
    double speed = __builtin_sqrt(vx * vx + vy * vy);
    if (speed > kMaxSpeed) {
      vx *= kMaxSpeed / speed;
      vy *= kMaxSpeed / speed;
    } else if (speed < kMinSpeed && speed > 0) {
      vx *= kMinSpeed / speed;
      vy *= kMinSpeed / speed;
    }
    g_new_vx[i] = vx;
    g_new_vy[i] = vy;
    pairs += static_cast<u32>(count);
  }
  for (int i = 0; i < kEntities; ++i) {
    g_entities[i].vx = g_new_vx[i];
    g_entities[i].vy = g_new_vy[i];
  }
  return pairs;
}

// ---------------------------------------------------------------------------
// astar: 256x256 grid, 8-connected (10 straight, 14 diagonal, no corner
// cutting), octile heuristic, binary min-heap with lazy deletion.

constexpr int kDim = 256;
constexpr int kGrid = kDim * kDim;
constexpr int kHeapCapacity = 8 * kGrid;  // every relaxation may push once

unsigned char g_wall[kGrid];
int g_cost[kGrid];    // best known cost from the start (valid if seen)
u32 g_seen[kGrid];    // == g_search: g_cost/g_parent are for this search
u32 g_closed[kGrid];  // == g_search: expanded in this search
int g_parent[kGrid];
u32 g_search = 0;

struct HeapItem {
  int f;     // cost + heuristic
  int cost;  // tie-break: prefer the deeper node
  int node;
};
HeapItem g_heap[kHeapCapacity];
int g_heap_size = 0;

bool Before(const HeapItem& a, const HeapItem& b) {
  if (a.f != b.f) return a.f < b.f;
  if (a.cost != b.cost) return a.cost > b.cost;
  return a.node < b.node;
}

void HeapPush(HeapItem item) {
  int i = g_heap_size++;
  while (i > 0) {
    int parent = (i - 1) >> 1;
    if (!Before(item, g_heap[parent])) break;
    g_heap[i] = g_heap[parent];
    i = parent;
  }
  g_heap[i] = item;
}

HeapItem HeapPop() {
  HeapItem top = g_heap[0];
  HeapItem last = g_heap[--g_heap_size];
  int i = 0;
  for (;;) {
    int child = 2 * i + 1;
    if (child >= g_heap_size) break;
    if (child + 1 < g_heap_size && Before(g_heap[child + 1], g_heap[child])) {
      ++child;
    }
    if (!Before(g_heap[child], last)) break;
    g_heap[i] = g_heap[child];
    i = child;
  }
  if (g_heap_size > 0) g_heap[i] = last;
  return top;
}

int Octile(int a, int b) {
  int dx = (a & (kDim - 1)) - (b & (kDim - 1));
  int dy = (a >> 8) - (b >> 8);
  dx = dx < 0 ? -dx : dx;
  dy = dy < 0 ? -dy : dy;
  return dx > dy ? 10 * dx + 4 * dy : 10 * dy + 4 * dx;
}

void AStarInit() {
  Rng rng{777};
  for (int i = 0; i < kGrid; ++i) {
    g_wall[i] = (rng.Next() >> 8) % 100 < 30 ? 1 : 0;
    g_seen[i] = 0;
    g_closed[i] = 0;
  }
  g_search = 0;
}

bool Open(int x, int y) {
  return x >= 0 && x < kDim && y >= 0 && y < kDim && !g_wall[y * kDim + x];
}

// One search; adds its path cost, path length and expansion count to `sum`.
void AStarSearch(int start, int goal, Checksum* sum) {
  ++g_search;
  g_heap_size = 0;
  g_cost[start] = 0;
  g_parent[start] = -1;
  g_seen[start] = g_search;
  HeapPush({Octile(start, goal), 0, start});
  static const int kDx[8] = {1, -1, 0, 0, 1, 1, -1, -1};
  static const int kDy[8] = {0, 0, 1, -1, 1, -1, 1, -1};
  u32 expanded = 0;
  int found = -1;
  while (g_heap_size > 0) {
    HeapItem top = HeapPop();
    int node = top.node;
    if (g_closed[node] == g_search) continue;  // stale entry
    g_closed[node] = g_search;
    ++expanded;
    if (node == goal) {
      found = top.cost;
      break;
    }
    int x = node & (kDim - 1), y = node >> 8;
    for (int d = 0; d < 8; ++d) {
      int nx = x + kDx[d], ny = y + kDy[d];
      if (!Open(nx, ny)) continue;
      if (d >= 4 && (!Open(nx, y) || !Open(x, ny))) continue;  // corner
      int next = ny * kDim + nx;
      if (g_closed[next] == g_search) continue;
      int cost = top.cost + (d < 4 ? 10 : 14);
      if (g_seen[next] == g_search && g_cost[next] <= cost) continue;
      g_seen[next] = g_search;
      g_cost[next] = cost;
      g_parent[next] = node;
      HeapPush({cost + Octile(next, goal), cost, next});
    }
  }
  u32 length = 0;
  if (found >= 0) {
    for (int n = goal; n != -1; n = g_parent[n]) ++length;
  }
  sum->Add(static_cast<u64>(static_cast<unsigned>(found)));
  sum->Add(length);
  sum->Add(expanded);
}

int RandomOpenCell(Rng* rng) {
  for (;;) {
    int cell = static_cast<int>(rng->Next() >> 16);  // 16 bits: 0..65535
    if (!g_wall[cell]) return cell;
  }
}

// ---------------------------------------------------------------------------
// nbody: the Benchmarks Game's 5 bodies.

constexpr double kPi = 3.141592653589793;
constexpr double kSolarMass = 4 * kPi * kPi;
constexpr double kDaysPerYear = 365.24;
constexpr int kBodies = 5;

struct Body {
  double x, y, z, vx, vy, vz, mass;
};

Body g_bodies[kBodies];

void NBodyInit() {
  const Body initial[kBodies] = {
      // Sun
      {0, 0, 0, 0, 0, 0, kSolarMass},
      // Jupiter
      {4.84143144246472090e+00, -1.16032004402742839e+00,
       -1.03622044471123109e-01, 1.66007664274403694e-03 * kDaysPerYear,
       7.69901118419740425e-03 * kDaysPerYear,
       -6.90460016972063023e-05 * kDaysPerYear,
       9.54791938424326609e-04 * kSolarMass},
      // Saturn
      {8.34336671824457987e+00, 4.12479856412430479e+00,
       -4.03523417114321381e-01, -2.76742510726862411e-03 * kDaysPerYear,
       4.99852801234917238e-03 * kDaysPerYear,
       2.30417297573763929e-05 * kDaysPerYear,
       2.85885980666130812e-04 * kSolarMass},
      // Uranus
      {1.28943695621391310e+01, -1.51111514016986312e+01,
       -2.23307578892655734e-01, 2.96460137564761618e-03 * kDaysPerYear,
       2.37847173959480950e-03 * kDaysPerYear,
       -2.96589568540237556e-05 * kDaysPerYear,
       4.36624404335156298e-05 * kSolarMass},
      // Neptune
      {1.53796971148509165e+01, -2.59193146099879641e+01,
       1.79258772950371181e-01, 2.68067772490389322e-03 * kDaysPerYear,
       1.62824170038242295e-03 * kDaysPerYear,
       -9.51592254519715870e-05 * kDaysPerYear,
       5.15138902046611451e-05 * kSolarMass},
  };
  double px = 0, py = 0, pz = 0;
  for (int i = 0; i < kBodies; ++i) {
    g_bodies[i] = initial[i];
    px += initial[i].vx * initial[i].mass;
    py += initial[i].vy * initial[i].mass;
    pz += initial[i].vz * initial[i].mass;
  }
  g_bodies[0].vx = -px / kSolarMass;
  g_bodies[0].vy = -py / kSolarMass;
  g_bodies[0].vz = -pz / kSolarMass;
}

void NBodyAdvance(double dt) {
  for (int i = 0; i < kBodies; ++i) {
    Body& a = g_bodies[i];
    for (int j = i + 1; j < kBodies; ++j) {
      Body& b = g_bodies[j];
      double dx = a.x - b.x, dy = a.y - b.y, dz = a.z - b.z;
      double d2 = dx * dx + dy * dy + dz * dz;
      double mag = dt / (d2 * __builtin_sqrt(d2));
      a.vx -= dx * b.mass * mag;
      a.vy -= dy * b.mass * mag;
      a.vz -= dz * b.mass * mag;
      b.vx += dx * a.mass * mag;
      b.vy += dy * a.mass * mag;
      b.vz += dz * a.mass * mag;
    }
  }
  for (Body& b : g_bodies) {
    b.x += dt * b.vx;
    b.y += dt * b.vy;
    b.z += dt * b.vz;
  }
}

double NBodyEnergy() {
  double e = 0;
  for (int i = 0; i < kBodies; ++i) {
    const Body& a = g_bodies[i];
    e += 0.5 * a.mass * (a.vx * a.vx + a.vy * a.vy + a.vz * a.vz);
    for (int j = i + 1; j < kBodies; ++j) {
      const Body& b = g_bodies[j];
      double dx = a.x - b.x, dy = a.y - b.y, dz = a.z - b.z;
      e -= a.mass * b.mass / __builtin_sqrt(dx * dx + dy * dy + dz * dz);
    }
  }
  return e;
}

}  // namespace

extern "C" {

unsigned long long tessera_bench_sim(unsigned ticks) {
  SimInit();
  Checksum sum;
  for (u32 t = 0; t < ticks; ++t) {
    SimMove();
    SimRebuildGrid();
    sum.Add(SimSteer());
  }
  for (const Entity& e : g_entities) {
    sum.AddDouble(e.x);
    sum.AddDouble(e.y);
    sum.AddDouble(e.vx);
    sum.AddDouble(e.vy);
  }
  return sum.h;
}

unsigned long long tessera_bench_astar(unsigned searches) {
  AStarInit();
  Rng rng{4242};
  Checksum sum;
  for (u32 s = 0; s < searches; ++s) {
    int start = RandomOpenCell(&rng);
    int goal = RandomOpenCell(&rng);
    AStarSearch(start, goal, &sum);
  }
  return sum.h;
}

unsigned long long tessera_bench_nbody(unsigned steps) {
  NBodyInit();
  for (u32 s = 0; s < steps; ++s) NBodyAdvance(0.01);
  return __builtin_bit_cast(u64, NBodyEnergy());
}

}  // extern "C"
