//! The safe host functions against the fake host.

use tessera_compute_sdk::{abi, testing, HostError};

#[test]
fn state_round_trips_and_large_blobs_are_read_whole() {
    testing::reset();
    assert_eq!(tessera_compute_sdk::state_get(), None);
    let big: Vec<u8> = (0..abi::MAX_STATE_BYTES).map(|i| (i % 251) as u8).collect();
    tessera_compute_sdk::state_set(&big).unwrap();
    assert_eq!(tessera_compute_sdk::state_get(), Some(big));
    tessera_compute_sdk::state_set(b"").unwrap();
    assert_eq!(tessera_compute_sdk::state_get(), Some(Vec::new()));
}

#[test]
fn a_failed_read_is_an_error_not_no_state() {
    testing::reset();
    testing::with_host(|h| h.fail_next("state_get", abi::ERR_DATA_OPS, "over 50 data ops"));
    let e = tessera_compute_sdk::try_state_get().unwrap_err();
    assert_eq!(e, HostError { code: "data_ops".into(), message: "over 50 data ops".into() });
    testing::with_host(|h| h.fail_next("state_get", abi::ERR_DATA_OPS, "again"));
    let r = std::panic::catch_unwind(tessera_compute_sdk::state_get);
    assert!(r.is_err());
}

#[test]
fn emits_return_connections_or_the_hosts_error() {
    testing::reset();
    testing::with_host(|h| h.connections = 3);
    assert_eq!(tessera_compute_sdk::emit_channel("all", b"hi"), Ok(3));
    assert_eq!(tessera_compute_sdk::emit_spatial("zone-1", 1.5, -2.0, 10.0, b"p"), Ok(3));
    assert_eq!(tessera_compute_sdk::emit_event("season-changed", b"{}"), Ok(()));
    testing::with_host(|h| h.fail_next("emit_channel", abi::ERR_EGRESS_BUDGET, "600 messages a minute"));
    let e = tessera_compute_sdk::emit_channel("all", b"hi").unwrap_err();
    assert!(e.is_egress_budget());
    assert_eq!(e.to_string(), "egress_budget: 600 messages a minute");
    testing::with_host(|h| h.fail_next("emit_event", abi::ERR_DEPTH, "depth 8"));
    assert_eq!(tessera_compute_sdk::emit_event("x", b"").unwrap_err().code, "event_depth");
    testing::with_host(|h| {
        let targets: Vec<_> = h.emitted.iter().map(|e| (e.kind, e.target.clone())).collect();
        assert_eq!(
            targets,
            vec![
                ("channel", "all".to_string()),
                ("spatial", "zone-1@1.5,-2,10".to_string()),
                ("event", "season-changed".to_string())
            ]
        );
    });
}

#[test]
fn random_bytes_fills_large_requests_in_chunks() {
    testing::reset();
    let bytes = tessera_compute_sdk::random_bytes(abi::MAX_RANDOM_BYTES * 2 + 5);
    assert_eq!(bytes.len(), abi::MAX_RANDOM_BYTES * 2 + 5);
    assert!(bytes.iter().any(|b| *b != 0));
    assert!(tessera_compute_sdk::random_bytes(0).is_empty());
}

#[test]
fn clock_and_log_reach_the_host() {
    testing::reset();
    testing::with_host(|h| h.now_ms = 1_700_000_000_123);
    assert_eq!(tessera_compute_sdk::now_ms(), 1_700_000_000_123);
    tessera_compute_sdk::log(abi::LOG_ERROR, "é");
    testing::with_host(|h| assert_eq!(h.logs, vec![(3, "é".to_string())]));
}

#[cfg(feature = "json")]
#[test]
fn json_helpers_read_inputs_and_keep_state() {
    use tessera_compute_sdk::json::{self, EventInput, InvokeInput};
    testing::reset();
    let i: InvokeInput = InvokeInput::parse(br#"{"export":"buy","params":{"amount":3},"callerUserId":"u1"}"#).unwrap();
    assert_eq!((i.export.as_str(), i.caller_user_id.as_str()), ("buy", "u1"));
    assert_eq!(i.params["amount"], 3);
    let e = EventInput::parse(
        br#"{"event":"compute_event","name":"season-changed","payload":{"season":"summer"},"sourceModule":"world-sim","flowId":"f1","depth":2,"coalesced":4}"#,
    )
    .unwrap();
    assert_eq!((e.depth, e.coalesced), (2, Some(4)));
    assert_eq!(e.payload["season"], "summer");
    let p: std::collections::BTreeMap<String, String> = e.payload_as().unwrap();
    assert_eq!(p["season"], "summer");
    assert!(e.payload_as::<Vec<u8>>().unwrap_err().starts_with("season-changed: invalid payload"));
    assert_eq!(i.params_as::<std::collections::BTreeMap<String, u32>>().unwrap()["amount"], 3);
    assert!(InvokeInput::<json::Value>::parse(b"[1]").unwrap_err().starts_with("invalid invoke input"));
    assert_eq!(json::state_get_json::<Vec<u32>>().unwrap(), None);
    json::state_set_json(&vec![1u32, 2]).unwrap();
    assert_eq!(json::state_get_json::<Vec<u32>>().unwrap(), Some(vec![1, 2]));
    assert!(json::state_get_json::<String>().is_err());
}

#[cfg(feature = "rand")]
#[test]
fn rng_is_seeded_by_the_host() {
    use tessera_compute_sdk::rand::Rng;
    testing::reset();
    let a: Vec<u32> = (0..4).map(|_| tessera_compute_sdk::rng().gen()).collect();
    // Each rng() takes fresh host bytes, so the generators differ.
    assert!(a.windows(2).any(|w| w[0] != w[1]), "{:?}", a);
    testing::reset();
    let b: Vec<u32> = (0..4).map(|_| tessera_compute_sdk::rng().gen()).collect();
    // Same host bytes (the fake's generator restarts), same numbers.
    assert_eq!(a, b);
    let n = tessera_compute_sdk::rng().gen_range(10..20);
    assert!((10..20).contains(&n));
}
