//! The starter module: counts its ticks into the state blob (8 bytes,
//! little-endian), so the count survives reloads, and echoes every invoke.
use std::sync::atomic::{AtomicU64, Ordering};

static TICKS: AtomicU64 = AtomicU64::new(0);

fn on_init() {
    // A fresh instance: continue from the persisted count.
    if let Some(blob) = tessera_compute_sdk::state_get() {
        if blob.len() == 8 {
            let mut n = [0u8; 8];
            n.copy_from_slice(&blob);
            TICKS.store(u64::from_le_bytes(n), Ordering::Relaxed);
        }
    }
    tessera_compute_sdk::log(1, "module init");
}

fn on_tick(_dt_ms: u32) {
    let n = TICKS.fetch_add(1, Ordering::Relaxed) + 1;
    if let Err(e) = tessera_compute_sdk::state_set(&n.to_le_bytes()) {
        tessera_compute_sdk::log(2, &format!("tick {}: state_set failed: {}", n, e));
    }
}

fn on_invoke(input: &[u8]) -> Vec<u8> {
    input.to_vec()
}

tessera_compute_sdk::register_module!(init: on_init, tick: on_tick, invoke: on_invoke);
