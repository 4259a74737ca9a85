//! The exports register_module! generates, called natively as the host
//! would, against the fake host (tessera_compute_sdk::testing).

use std::sync::atomic::{AtomicU64, Ordering};

use tessera_compute_sdk::{abi, testing};

static TICKS: AtomicU64 = AtomicU64::new(0);

fn on_init() -> Result<(), String> {
    tessera_compute_sdk::log(abi::LOG_INFO, "module init");
    if let Some(blob) = tessera_compute_sdk::state_get() {
        if blob == b"refuse" {
            return Err("the state says no".to_string());
        }
        let mut n = [0u8; 8];
        n.copy_from_slice(&blob[..8]);
        TICKS.store(u64::from_le_bytes(n), Ordering::Relaxed);
    }
    Ok(())
}

fn on_tick(dt_ms: u32) {
    if dt_ms == 666 {
        panic!("bad tick {}", dt_ms);
    }
    let n = TICKS.fetch_add(1, Ordering::Relaxed) + 1;
    if let Err(e) = tessera_compute_sdk::state_set(&n.to_le_bytes()) {
        tessera_compute_sdk::log(abi::LOG_WARN, &format!("state_set: {}", e));
    }
}

fn on_invoke(input: &[u8]) -> Result<Vec<u8>, String> {
    if input == b"fail" {
        return Err("asked to fail".to_string());
    }
    let mut out = input.to_vec();
    out.extend_from_slice(b"!");
    Ok(out)
}

fn on_event(input: &[u8]) {
    let _ = tessera_compute_sdk::emit_channel("all", input);
}

tessera_compute_sdk::register_module!(init: on_init, tick: on_tick, invoke: on_invoke, event: on_event);

// The tests share the TICKS static, so they run as one test.
#[test]
fn exports_follow_the_abi() {
    testing::reset();
    tessera_compute_abi_v1();

    // init reads the blob; ticks count into it.
    testing::with_host(|h| h.state = Some(41u64.to_le_bytes().to_vec()));
    assert_eq!(tessera_compute_init(), abi::OK);
    assert_eq!(tessera_compute_tick(500), abi::OK);
    assert_eq!(tessera_compute_tick(500), abi::OK);
    testing::with_host(|h| {
        assert_eq!(h.state, Some(43u64.to_le_bytes().to_vec()));
        assert_eq!(h.lines_at(abi::LOG_INFO), vec!["module init".to_string()]);
    });

    // A refused state_set is the host's error, logged by the module.
    testing::with_host(|h| h.fail_next("state_set", abi::ERR_STALE, "revision 9 is newer"));
    assert_eq!(tessera_compute_tick(500), abi::OK);
    testing::with_host(|h| {
        assert_eq!(h.lines_at(abi::LOG_WARN), vec!["state_set: stale_state: revision 9 is newer".to_string()]);
    });

    // init's Err fails the run with its text in the output buffer.
    testing::with_host(|h| h.state = Some(b"refuse".to_vec()));
    assert_eq!(tessera_compute_init(), abi::FAILED);
    assert_eq!(testing::output(), b"the state says no".to_vec());

    // invoke: input from tessera_alloc, result in the output buffer.
    let (ptr, len) = testing::input(b"{\"export\":\"echo\"}");
    assert_eq!(unsafe { tessera_compute_invoke(ptr, len) }, abi::OK);
    let out_ptr = tessera_output_ptr();
    let out_len = tessera_output_len() as usize;
    let out = unsafe { std::slice::from_raw_parts(out_ptr as *const u8, out_len) };
    assert_eq!(out, b"{\"export\":\"echo\"}!");
    let (ptr, len) = testing::input(b"fail");
    assert_eq!(unsafe { tessera_compute_invoke(ptr, len) }, abi::FAILED);
    assert_eq!(testing::output(), b"asked to fail".to_vec());
    // An empty input is fine.
    let (ptr, len) = testing::input(b"");
    assert_eq!(unsafe { tessera_compute_invoke(ptr, len) }, abi::OK);
    assert_eq!(testing::output(), b"!".to_vec());

    // event: the 4-entry form exports it.
    let (ptr, len) = testing::input(b"{\"name\":\"x\"}");
    assert_eq!(unsafe { tessera_compute_event(ptr, len) }, abi::OK);
    testing::with_host(|h| {
        assert_eq!(h.emitted.len(), 1);
        assert_eq!(h.emitted[0].kind, "channel");
        assert_eq!(h.emitted[0].target, "all");
        assert_eq!(h.emitted[0].payload, b"{\"name\":\"x\"}".to_vec());
    });

    // A panic logs its text at level 4 (the hook the exports install).
    let r = std::panic::catch_unwind(|| tessera_compute_tick(666));
    assert!(r.is_err());
    let panics = testing::with_host(|h| h.lines_at(abi::LOG_PANIC));
    assert_eq!(panics.len(), 1, "{:?}", panics);
    assert!(panics[0].starts_with("bad tick 666 (at tests/exports.rs:"), "{}", panics[0]);
}
