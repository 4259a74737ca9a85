//! The runtime benchmark's workloads (bench/guest/workloads.h) written in
//! Rust: the same algorithms, operations in the same order, so each returns
//! the C++ version's checksum bit for bit. Static arrays and no
//! allocation, like the C++ build. Built twice: to wasm32, where
//! the exports are `sim`, `astar`, `nbody` and `nop`, and natively, where
//! they are `tessera_rust_bench_*`.
//!
//! Single-threaded: the state is in `static mut` arrays, as the C++ guest
//! keeps it in its linear memory. Natively, call from one thread at a time.
#![allow(clippy::missing_safety_doc)]

// f64::sqrt is llvm.sqrt: f64.sqrt in wasm, sqrtsd natively, as the C++
// build's __builtin_sqrt.
fn sqrt(x: f64) -> f64 {
    x.sqrt()
}

/// Numerical Recipes LCG.
struct Rng(u32);
impl Rng {
    fn next(&mut self) -> u32 {
        self.0 = self.0.wrapping_mul(1664525).wrapping_add(1013904223);
        self.0
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 8) as f64 * (1.0 / 16777216.0)
    }
}

/// FNV-1a over 64-bit words.
struct Checksum(u64);
impl Checksum {
    fn new() -> Self {
        Checksum(14695981039346656037)
    }
    fn add(&mut self, v: u64) {
        for i in 0..8 {
            self.0 ^= (v >> (8 * i)) & 0xff;
            self.0 = self.0.wrapping_mul(1099511628211);
        }
    }
    fn add_f64(&mut self, d: f64) {
        self.add(d.to_bits());
    }
}

// --- sim -------------------------------------------------------------------

const ENTITIES: usize = 1000;
const WORLD: f64 = 500.0;
const RADIUS: f64 = 25.0;
const RADIUS2: f64 = RADIUS * RADIUS;
const GRID_DIM: i32 = 20;
const CELLS: usize = (GRID_DIM * GRID_DIM) as usize;
const MAX_SPEED: f64 = 2.0;
const MIN_SPEED: f64 = 0.5;

#[derive(Clone, Copy)]
struct Entity {
    x: f64,
    y: f64,
    vx: f64,
    vy: f64,
}

struct Sim {
    entities: [Entity; ENTITIES],
    new_vx: [f64; ENTITIES],
    new_vy: [f64; ENTITIES],
    cell_start: [i32; CELLS + 1],
    cell_count: [i32; CELLS],
    cell_items: [i32; ENTITIES],
    cell_of: [i32; ENTITIES],
}

static mut SIM: Sim = Sim {
    entities: [Entity { x: 0.0, y: 0.0, vx: 0.0, vy: 0.0 }; ENTITIES],
    new_vx: [0.0; ENTITIES],
    new_vy: [0.0; ENTITIES],
    cell_start: [0; CELLS + 1],
    cell_count: [0; CELLS],
    cell_items: [0; ENTITIES],
    cell_of: [0; ENTITIES],
};

fn cell_coord(v: f64) -> i32 {
    let c = (v * (1.0 / RADIUS)) as i32;
    if c < GRID_DIM {
        c
    } else {
        GRID_DIM - 1
    }
}

fn wrap_delta(d: f64) -> f64 {
    if d > WORLD * 0.5 {
        return d - WORLD;
    }
    if d < -WORLD * 0.5 {
        return d + WORLD;
    }
    d
}

impl Sim {
    fn init(&mut self) {
        let mut rng = Rng(12345);
        for e in self.entities.iter_mut() {
            e.x = rng.unit() * WORLD;
            e.y = rng.unit() * WORLD;
            e.vx = (rng.unit() - 0.5) * 2.0 * MAX_SPEED;
            e.vy = (rng.unit() - 0.5) * 2.0 * MAX_SPEED;
        }
    }
    fn moves(&mut self) {
        for e in self.entities.iter_mut() {
            e.x += e.vx;
            e.y += e.vy;
            if e.x < 0.0 {
                e.x += WORLD;
            }
            if e.x >= WORLD {
                e.x -= WORLD;
            }
            if e.y < 0.0 {
                e.y += WORLD;
            }
            if e.y >= WORLD {
                e.y -= WORLD;
            }
        }
    }
    fn rebuild_grid(&mut self) {
        self.cell_count = [0; CELLS];
        for i in 0..ENTITIES {
            let c = cell_coord(self.entities[i].y) * GRID_DIM + cell_coord(self.entities[i].x);
            self.cell_of[i] = c;
            self.cell_count[c as usize] += 1;
        }
        let mut begin = 0;
        for c in 0..CELLS {
            self.cell_start[c] = begin;
            begin += self.cell_count[c];
            self.cell_count[c] = self.cell_start[c];
        }
        self.cell_start[CELLS] = begin;
        for i in 0..ENTITIES {
            let c = self.cell_of[i] as usize;
            self.cell_items[self.cell_count[c] as usize] = i as i32;
            self.cell_count[c] += 1;
        }
    }
    fn steer(&mut self) -> u32 {
        let mut pairs = 0u32;
        for i in 0..ENTITIES {
            let me = self.entities[i];
            let (cx, cy) = (self.cell_of[i] % GRID_DIM, self.cell_of[i] / GRID_DIM);
            let (mut sep_x, mut sep_y, mut ali_x, mut ali_y, mut coh_x, mut coh_y) = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
            let mut count = 0i32;
            for oy in -1..=1 {
                let mut ny = cy + oy;
                ny = if ny < 0 {
                    ny + GRID_DIM
                } else if ny >= GRID_DIM {
                    ny - GRID_DIM
                } else {
                    ny
                };
                for ox in -1..=1 {
                    let mut nx = cx + ox;
                    nx = if nx < 0 {
                        nx + GRID_DIM
                    } else if nx >= GRID_DIM {
                        nx - GRID_DIM
                    } else {
                        nx
                    };
                    let c = (ny * GRID_DIM + nx) as usize;
                    for k in self.cell_start[c]..self.cell_start[c + 1] {
                        let j = self.cell_items[k as usize] as usize;
                        if j == i {
                            continue;
                        }
                        let other = self.entities[j];
                        let dx = wrap_delta(other.x - me.x);
                        let dy = wrap_delta(other.y - me.y);
                        let d2 = dx * dx + dy * dy;
                        if d2 >= RADIUS2 || d2 == 0.0 {
                            continue;
                        }
                        count += 1;
                        sep_x -= dx / d2;
                        sep_y -= dy / d2;
                        ali_x += other.vx;
                        ali_y += other.vy;
                        coh_x += dx;
                        coh_y += dy;
                    }
                }
            }
            let (mut vx, mut vy) = (me.vx, me.vy);
            if count > 0 {
                let inv = 1.0 / count as f64;
                vx += sep_x * 1.5 + (ali_x * inv - vx) * 0.05 + coh_x * inv * 0.01;
                vy += sep_y * 1.5 + (ali_y * inv - vy) * 0.05 + coh_y * inv * 0.01;
            }
            let speed = sqrt(vx * vx + vy * vy);
            if speed > MAX_SPEED {
                vx *= MAX_SPEED / speed;
                vy *= MAX_SPEED / speed;
            } else if speed < MIN_SPEED && speed > 0.0 {
                vx *= MIN_SPEED / speed;
                vy *= MIN_SPEED / speed;
            }
            self.new_vx[i] = vx;
            self.new_vy[i] = vy;
            pairs = pairs.wrapping_add(count as u32);
        }
        for i in 0..ENTITIES {
            self.entities[i].vx = self.new_vx[i];
            self.entities[i].vy = self.new_vy[i];
        }
        pairs
    }
}

// --- astar -----------------------------------------------------------------

const DIM: i32 = 256;
const GRID: usize = (DIM * DIM) as usize;
const HEAP_CAPACITY: usize = 8 * GRID;

#[derive(Clone, Copy)]
struct HeapItem {
    f: i32,
    cost: i32,
    node: i32,
}

struct AStar {
    wall: [u8; GRID],
    cost: [i32; GRID],
    seen: [u32; GRID],
    closed: [u32; GRID],
    parent: [i32; GRID],
    search: u32,
    heap: [HeapItem; HEAP_CAPACITY],
    heap_size: usize,
}

static mut ASTAR: AStar = AStar {
    wall: [0; GRID],
    cost: [0; GRID],
    seen: [0; GRID],
    closed: [0; GRID],
    parent: [0; GRID],
    search: 0,
    heap: [HeapItem { f: 0, cost: 0, node: 0 }; HEAP_CAPACITY],
    heap_size: 0,
};

fn before(a: &HeapItem, b: &HeapItem) -> bool {
    if a.f != b.f {
        return a.f < b.f;
    }
    if a.cost != b.cost {
        return a.cost > b.cost;
    }
    a.node < b.node
}

fn octile(a: i32, b: i32) -> i32 {
    let dx = ((a & (DIM - 1)) - (b & (DIM - 1))).abs();
    let dy = ((a >> 8) - (b >> 8)).abs();
    if dx > dy {
        10 * dx + 4 * dy
    } else {
        10 * dy + 4 * dx
    }
}

const DX: [i32; 8] = [1, -1, 0, 0, 1, 1, -1, -1];
const DY: [i32; 8] = [0, 0, 1, -1, 1, -1, 1, -1];

impl AStar {
    fn push(&mut self, item: HeapItem) {
        let mut i = self.heap_size;
        self.heap_size += 1;
        while i > 0 {
            let parent = (i - 1) >> 1;
            if !before(&item, &self.heap[parent]) {
                break;
            }
            self.heap[i] = self.heap[parent];
            i = parent;
        }
        self.heap[i] = item;
    }
    fn pop(&mut self) -> HeapItem {
        let top = self.heap[0];
        self.heap_size -= 1;
        let last = self.heap[self.heap_size];
        let mut i = 0;
        loop {
            let mut child = 2 * i + 1;
            if child >= self.heap_size {
                break;
            }
            if child + 1 < self.heap_size && before(&self.heap[child + 1], &self.heap[child]) {
                child += 1;
            }
            if !before(&self.heap[child], &last) {
                break;
            }
            self.heap[i] = self.heap[child];
            i = child;
        }
        if self.heap_size > 0 {
            self.heap[i] = last;
        }
        top
    }
    fn init(&mut self) {
        let mut rng = Rng(777);
        for i in 0..GRID {
            self.wall[i] = if (rng.next() >> 8) % 100 < 30 { 1 } else { 0 };
            self.seen[i] = 0;
            self.closed[i] = 0;
        }
        self.search = 0;
    }
    fn open(&self, x: i32, y: i32) -> bool {
        x >= 0 && x < DIM && y >= 0 && y < DIM && self.wall[(y * DIM + x) as usize] == 0
    }
    fn run(&mut self, start: i32, goal: i32, sum: &mut Checksum) {
        self.search += 1;
        let search = self.search;
        self.heap_size = 0;
        self.cost[start as usize] = 0;
        self.parent[start as usize] = -1;
        self.seen[start as usize] = search;
        self.push(HeapItem { f: octile(start, goal), cost: 0, node: start });
        let mut expanded = 0u32;
        let mut found = -1i32;
        while self.heap_size > 0 {
            let top = self.pop();
            let node = top.node;
            if self.closed[node as usize] == search {
                continue;
            }
            self.closed[node as usize] = search;
            expanded += 1;
            if node == goal {
                found = top.cost;
                break;
            }
            let (x, y) = (node & (DIM - 1), node >> 8);
            for d in 0..8 {
                let (nx, ny) = (x + DX[d], y + DY[d]);
                if !self.open(nx, ny) {
                    continue;
                }
                if d >= 4 && (!self.open(nx, y) || !self.open(x, ny)) {
                    continue;
                }
                let next = (ny * DIM + nx) as usize;
                if self.closed[next] == search {
                    continue;
                }
                let cost = top.cost + if d < 4 { 10 } else { 14 };
                if self.seen[next] == search && self.cost[next] <= cost {
                    continue;
                }
                self.seen[next] = search;
                self.cost[next] = cost;
                self.parent[next] = node;
                self.push(HeapItem { f: cost + octile(next as i32, goal), cost, node: next as i32 });
            }
        }
        let mut length = 0u32;
        if found >= 0 {
            let mut n = goal;
            while n != -1 {
                length += 1;
                n = self.parent[n as usize];
            }
        }
        sum.add(found as u32 as u64);
        sum.add(length as u64);
        sum.add(expanded as u64);
    }
    fn random_open_cell(&self, rng: &mut Rng) -> i32 {
        loop {
            let cell = (rng.next() >> 16) as usize;
            if self.wall[cell] == 0 {
                return cell as i32;
            }
        }
    }
}

// --- nbody -----------------------------------------------------------------

const PI: f64 = 3.141592653589793;
const SOLAR_MASS: f64 = 4.0 * PI * PI;
const DAYS_PER_YEAR: f64 = 365.24;
const BODIES: usize = 5;

#[derive(Clone, Copy)]
struct Body {
    x: f64,
    y: f64,
    z: f64,
    vx: f64,
    vy: f64,
    vz: f64,
    mass: f64,
}

static mut NBODY: [Body; BODIES] = [Body { x: 0.0, y: 0.0, z: 0.0, vx: 0.0, vy: 0.0, vz: 0.0, mass: 0.0 }; BODIES];

#[allow(clippy::excessive_precision)]
fn nbody_init(bodies: &mut [Body; BODIES]) {
    let b = |x, y, z, vx: f64, vy: f64, vz: f64, m: f64| Body {
        x,
        y,
        z,
        vx: vx * DAYS_PER_YEAR,
        vy: vy * DAYS_PER_YEAR,
        vz: vz * DAYS_PER_YEAR,
        mass: m * SOLAR_MASS,
    };
    let initial = [
        Body { x: 0.0, y: 0.0, z: 0.0, vx: 0.0, vy: 0.0, vz: 0.0, mass: SOLAR_MASS },
        b(
            4.84143144246472090e+00,
            -1.16032004402742839e+00,
            -1.03622044471123109e-01,
            1.66007664274403694e-03,
            7.69901118419740425e-03,
            -6.90460016972063023e-05,
            9.54791938424326609e-04,
        ),
        b(
            8.34336671824457987e+00,
            4.12479856412430479e+00,
            -4.03523417114321381e-01,
            -2.76742510726862411e-03,
            4.99852801234917238e-03,
            2.30417297573763929e-05,
            2.85885980666130812e-04,
        ),
        b(
            1.28943695621391310e+01,
            -1.51111514016986312e+01,
            -2.23307578892655734e-01,
            2.96460137564761618e-03,
            2.37847173959480950e-03,
            -2.96589568540237556e-05,
            4.36624404335156298e-05,
        ),
        b(
            1.53796971148509165e+01,
            -2.59193146099879641e+01,
            1.79258772950371181e-01,
            2.68067772490389322e-03,
            1.62824170038242295e-03,
            -9.51592254519715870e-05,
            5.15138902046611451e-05,
        ),
    ];
    let (mut px, mut py, mut pz) = (0.0, 0.0, 0.0);
    for i in 0..BODIES {
        bodies[i] = initial[i];
        px += initial[i].vx * initial[i].mass;
        py += initial[i].vy * initial[i].mass;
        pz += initial[i].vz * initial[i].mass;
    }
    bodies[0].vx = -px / SOLAR_MASS;
    bodies[0].vy = -py / SOLAR_MASS;
    bodies[0].vz = -pz / SOLAR_MASS;
}

fn nbody_advance(bodies: &mut [Body; BODIES], dt: f64) {
    for i in 0..BODIES {
        for j in i + 1..BODIES {
            let (a, b) = (bodies[i], bodies[j]);
            let (dx, dy, dz) = (a.x - b.x, a.y - b.y, a.z - b.z);
            let d2 = dx * dx + dy * dy + dz * dz;
            let mag = dt / (d2 * sqrt(d2));
            bodies[i].vx -= dx * b.mass * mag;
            bodies[i].vy -= dy * b.mass * mag;
            bodies[i].vz -= dz * b.mass * mag;
            bodies[j].vx += dx * a.mass * mag;
            bodies[j].vy += dy * a.mass * mag;
            bodies[j].vz += dz * a.mass * mag;
        }
    }
    for b in bodies.iter_mut() {
        b.x += dt * b.vx;
        b.y += dt * b.vy;
        b.z += dt * b.vz;
    }
}

fn nbody_energy(bodies: &[Body; BODIES]) -> f64 {
    let mut e = 0.0;
    for i in 0..BODIES {
        let a = bodies[i];
        e += 0.5 * a.mass * (a.vx * a.vx + a.vy * a.vy + a.vz * a.vz);
        for b in &bodies[i + 1..] {
            let (dx, dy, dz) = (a.x - b.x, a.y - b.y, a.z - b.z);
            e -= a.mass * b.mass / sqrt(dx * dx + dy * dy + dz * dz);
        }
    }
    e
}

// --- exports ---------------------------------------------------------------

/// 1,000 entities, uniform grid, steering; `ticks` ticks.
#[cfg_attr(target_arch = "wasm32", export_name = "sim")]
#[cfg_attr(not(target_arch = "wasm32"), export_name = "tessera_rust_bench_sim")]
pub unsafe extern "C" fn bench_sim(ticks: u32) -> u64 {
    let sim = &mut *core::ptr::addr_of_mut!(SIM);
    sim.init();
    let mut sum = Checksum::new();
    for _ in 0..ticks {
        sim.moves();
        sim.rebuild_grid();
        let pairs = sim.steer();
        sum.add(pairs as u64);
    }
    for e in sim.entities.iter() {
        sum.add_f64(e.x);
        sum.add_f64(e.y);
        sum.add_f64(e.vx);
        sum.add_f64(e.vy);
    }
    sum.0
}

/// `searches` A* searches on a 256x256 grid.
#[cfg_attr(target_arch = "wasm32", export_name = "astar")]
#[cfg_attr(not(target_arch = "wasm32"), export_name = "tessera_rust_bench_astar")]
pub unsafe extern "C" fn bench_astar(searches: u32) -> u64 {
    let a = &mut *core::ptr::addr_of_mut!(ASTAR);
    a.init();
    let mut rng = Rng(4242);
    let mut sum = Checksum::new();
    for _ in 0..searches {
        let start = a.random_open_cell(&mut rng);
        let goal = a.random_open_cell(&mut rng);
        a.run(start, goal, &mut sum);
    }
    sum.0
}

/// The 5-body simulation, `steps` steps of 0.01; the final energy's bits.
#[cfg_attr(target_arch = "wasm32", export_name = "nbody")]
#[cfg_attr(not(target_arch = "wasm32"), export_name = "tessera_rust_bench_nbody")]
pub unsafe extern "C" fn bench_nbody(steps: u32) -> u64 {
    let bodies = &mut *core::ptr::addr_of_mut!(NBODY);
    nbody_init(bodies);
    for _ in 0..steps {
        nbody_advance(bodies, 0.01);
    }
    nbody_energy(bodies).to_bits()
}

/// An empty export (the per-call overhead).
#[cfg_attr(target_arch = "wasm32", export_name = "nop")]
#[cfg_attr(not(target_arch = "wasm32"), export_name = "tessera_rust_bench_nop")]
pub extern "C" fn bench_nop() {}
