//! Test guest "hostile_rust": a Rust shard that misbehaves on purpose, for
//! the host's limits (tests/rust/rust_guest_test.cc).
//!
//!   params {"mode": str, "at": int}
//!     "loop"     every tick loops forever (fuel stops it)
//!     "membomb"  every tick allocates and touches 1 MiB, keeping it, until
//!                memory.grow fails (memoryMb) and the allocation aborts
//!     "recurse"  tick recurses without end, 1 KiB of stack per call
//!     "panic"    tick number `at` (default 1) panics "boom at tick N"
//!     anything else: ticks normally
//!   inputs {"panic": {}} panics "boom in apply_input"; {"noop": {}}
//!   snapshot {"ticks": int, "mib": int}

use std::time::Duration;

use serde::{Deserialize, Serialize};
use tessera_shard_guest::{export_shard, Shard};

#[derive(Deserialize)]
struct Params {
    #[serde(default)]
    mode: String,
    #[serde(default = "one")]
    at: u64,
}
fn one() -> u64 {
    1
}

#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum Input {
    Noop {},
    Panic {},
}

#[derive(Serialize)]
struct Snapshot {
    ticks: u64,
    mib: u64,
}

struct Hostile {
    mode: String,
    at: u64,
    ticks: u64,
    kept: Vec<Vec<u8>>,
}

// Recurses forever (on purpose); the volatile buffer keeps each frame on the shadow
// stack and stops the compiler from turning the recursion into a loop.
#[allow(unconditional_recursion)]
fn recurse(depth: u64) -> u64 {
    let mut buf = [0u8; 1024];
    // SAFETY: a local buffer.
    unsafe { std::ptr::write_volatile(&mut buf[(depth % 1024) as usize], depth as u8) };
    let below = recurse(depth + 1);
    // SAFETY: as above.
    below + unsafe { std::ptr::read_volatile(&buf[(depth % 1024) as usize]) } as u64
}

impl Shard for Hostile {
    type Params = Params;
    type Input = Input;
    type Snapshot = Snapshot;

    fn init(_shard_id: &str, p: Params) -> Result<Self, String> {
        Ok(Hostile { mode: p.mode, at: p.at, ticks: 0, kept: Vec::new() })
    }

    fn apply_input(&mut self, _sid: &str, input: Input) -> Result<(), String> {
        match input {
            Input::Noop {} => Ok(()),
            Input::Panic {} => panic!("boom in apply_input"),
        }
    }

    fn tick(&mut self, _dt: Duration) {
        self.ticks += 1;
        match self.mode.as_str() {
            "loop" => {
                let mut n = 0u64;
                loop {
                    // SAFETY: a local.
                    unsafe { std::ptr::write_volatile(&mut n, n.wrapping_add(1)) };
                }
            }
            "membomb" => self.kept.push(vec![1u8; 1 << 20]),
            "recurse" => {
                let _ = recurse(0);
            }
            "panic" if self.ticks == self.at => panic!("boom at tick {}", self.ticks),
            _ => {}
        }
    }

    fn snapshot(&self) -> Snapshot {
        Snapshot { ticks: self.ticks, mib: self.kept.len() as u64 }
    }
}

export_shard!(Hostile);
