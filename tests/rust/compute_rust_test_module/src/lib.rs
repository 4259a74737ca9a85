//! Test compute module (src/compute/rust_instance_test.cc): the Rust SDK's
//! host functions, entry results and panic hook against the real instance.
//! Invoke exports, chosen by a substring of the input:
//!   "panic" -> panics ("boom from invoke")
//!   "fail"  -> Err("asked to fail")
//!   "host"  -> JSON of now_ms, random_bytes(3), a die roll from rng() (the
//!              SDK's rand feature), emit_channel, emit_spatial, emit_event
//!              and a state round trip, each a number or "code|message" for
//!              a HostError
//!   other   -> the input, echoed
//! tick(13) returns Err("unlucky tick 13"); tick(666) panics.
use tessera_compute_sdk::rand::Rng;
use tessera_compute_sdk::{
    emit_channel, emit_event, emit_spatial, log, now_ms, random_bytes, state_get, state_set,
    HostError,
};

fn show(r: Result<u32, HostError>) -> String {
    match r {
        Ok(n) => n.to_string(),
        Err(e) => format!("\"{}|{}\"", e.code, e.message),
    }
}

fn on_init() {
    log(1, "probe init");
}

fn on_tick(dt_ms: u32) -> Result<(), String> {
    match dt_ms {
        13 => Err(format!("unlucky tick {}", dt_ms)),
        666 => panic!("tick panicked at dt {}", dt_ms),
        _ => Ok(()),
    }
}

fn on_invoke(input: &[u8]) -> Result<Vec<u8>, String> {
    let text = String::from_utf8_lossy(input);
    if text.contains("\"export\":\"panic\"") {
        panic!("boom from invoke");
    }
    if text.contains("\"export\":\"fail\"") {
        return Err("asked to fail".to_string());
    }
    if !text.contains("\"export\":\"host\"") {
        return Ok(input.to_vec());
    }
    let random: Vec<String> = random_bytes(3).iter().map(|b| b.to_string()).collect();
    let roll: u32 = tessera_compute_sdk::rng().gen_range(1..=6);
    let channel = show(emit_channel("all", b"to everyone"));
    let spatial = show(emit_spatial("zone-1", 1.5, -2.0, 8.0, b"near"));
    let event = show(emit_event("probe-event", b"{\"n\":1}").map(|_| 0));
    let set = show(state_set(b"probe state").map(|_| 0));
    let got = match state_get() {
        Some(b) => format!("\"{}\"", String::from_utf8_lossy(&b)),
        None => "null".to_string(),
    };
    Ok(format!(
        "{{\"now\":{},\"random\":[{}],\"roll\":{},\"channel\":{},\"spatial\":{},\"event\":{},\"set\":{},\"state\":{}}}",
        now_ms(),
        random.join(","),
        roll,
        channel,
        spatial,
        event,
        set,
        got
    )
    .into_bytes())
}

tessera_compute_sdk::register_module!(init: on_init, tick: on_tick, invoke: on_invoke);
