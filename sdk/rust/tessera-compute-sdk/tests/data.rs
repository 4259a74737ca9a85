//! The data and shards functions (the `json` feature) against the fake
//! host: the requests they send, the replies they read, the host's errors.
#![cfg(feature = "json")]

use tessera_compute_sdk::json::{json, Value};
use tessera_compute_sdk::{abi, data, shards, testing, HostError};

fn last_request(function: &str, op: &str) -> Value {
    testing::with_host(|h| h.requests(function, op).pop().expect("a recorded request"))
}

#[test]
fn rows_round_trip_through_insert_get_update_delete() {
    testing::reset();
    testing::with_host(|h| h.now_ms = 1_000);
    let row = data::insert("Character", Some("c1"), &json!({"name": "Ann \"the\" Bold", "hp": 10})).unwrap();
    assert_eq!(row["id"], "c1");
    assert_eq!(row["name"], "Ann \"the\" Bold");
    assert_eq!(row["version"], 1);
    assert_eq!(
        last_request("data", "insert"),
        json!({"type": "Character", "id": "c1", "fields": {"name": "Ann \"the\" Bold", "hp": 10}})
    );

    assert_eq!(data::get("Character", "c1").unwrap(), Some(row.clone()));
    assert_eq!(data::get("Character", "nobody").unwrap(), None);
    assert_eq!(last_request("data", "get"), json!({"type": "Character", "id": "nobody"}));

    testing::with_host(|h| h.now_ms = 2_000);
    let updated = data::update("Character", "c1", &json!({"hp": 7})).unwrap();
    assert_eq!((updated["hp"].clone(), updated["version"].clone()), (json!(7), json!(2)));
    assert_eq!(updated["updatedAt"], 2_000);
    assert_eq!(last_request("data", "update"), json!({"type": "Character", "id": "c1", "set": {"hp": 7}}));

    assert_eq!(data::lookup("Character", "name", &json!("Ann \"the\" Bold")).unwrap(), Some(updated));
    assert_eq!(data::lookup("Character", "name", &json!("Bob")).unwrap(), None);
    assert_eq!(last_request("data", "lookup"), json!({"type": "Character", "field": "name", "value": "Bob"}));

    assert_eq!(data::delete("Character", "c1"), Ok(true));
    assert_eq!(data::delete("Character", "c1"), Ok(false));
    assert_eq!(data::get("Character", "c1").unwrap(), None);
}

#[test]
fn insert_without_an_id_gets_one_from_the_host() {
    testing::reset();
    let a = data::insert("Item", None, &json!({"kind": "sword"})).unwrap();
    let b = data::insert("Item", None, &json!({"kind": "axe"})).unwrap();
    assert_ne!(a["id"], b["id"]);
    assert!(a["id"].as_str().map_or(false, |id| !id.is_empty()));
    assert_eq!(last_request("data", "insert"), json!({"type": "Item", "fields": {"kind": "axe"}}));
}

#[test]
fn list_pages_through_matching_rows_and_count_agrees() {
    testing::reset();
    for i in 0..7 {
        let owner = if i % 2 == 0 { "p1" } else { "p2" };
        data::insert("Item", Some(&format!("i{}", i)), &json!({"owner": owner, "level": i})).unwrap();
    }
    let filter = json!({"owner": "p1"});
    let first = data::list("Item", &filter, "", 2).unwrap();
    assert_eq!(ids(&first.rows), vec!["i0", "i2"]);
    assert_eq!(first.next_cursor, "i2");
    assert_eq!(last_request("data", "list"), json!({"type": "Item", "where": {"owner": "p1"}, "limit": 2}));
    let second = data::list("Item", &filter, &first.next_cursor, 2).unwrap();
    assert_eq!(ids(&second.rows), vec!["i4", "i6"]);
    assert_eq!(second.next_cursor, "");
    assert_eq!(last_request("data", "list")["cursor"], "i2");

    assert_eq!(data::count("Item", &filter), Ok(4));
    assert_eq!(data::count("Item", &json!({})), Ok(7));
    assert_eq!(data::count("Item", &json!({"level": {"ge": 2, "lt": 5}})), Ok(3));
    assert_eq!(data::count("Item", &json!({"level": {"in": [0, 6]}})), Ok(2));
    assert_eq!(data::count("Nothing", &json!({})), Ok(0));
    assert_eq!(data::count("Item", &json!({"level": {"near": 1}})).unwrap_err().code, "BAD_FILTER");
}

fn ids(rows: &[Value]) -> Vec<&str> {
    rows.iter().map(|r| r["id"].as_str().unwrap()).collect()
}

#[test]
fn the_hosts_refusals_are_host_errors_with_its_code() {
    testing::reset();
    data::insert("Item", Some("x"), &json!({})).unwrap();
    let e = data::insert("Item", Some("x"), &json!({})).unwrap_err();
    assert_eq!(e.code, "ROW_EXISTS");
    assert!(e.message.contains("x"), "{}", e.message);
    assert_eq!(data::update("Item", "missing", &json!({"a": 1})).unwrap_err().code, "ROW_NOT_FOUND");

    testing::with_host(|h| h.entity_types = vec!["Item".to_string()]);
    assert_eq!(data::get("Monster", "m").unwrap_err().code, "UNKNOWN_TYPE");

    // A failure queued for one op leaves the others alone.
    testing::with_host(|h| h.fail_next_code("data.insert", abi::ERR_DATA, "UNIQUE_VIOLATION", "name \"a\" is taken"));
    assert!(data::get("Item", "x").unwrap().is_some());
    let e = data::insert("Item", None, &json!({"name": "a"})).unwrap_err();
    assert_eq!(e, HostError { code: "UNIQUE_VIOLATION".into(), message: "name \"a\" is taken".into() });
    assert_eq!(e.to_string(), "UNIQUE_VIOLATION: name \"a\" is taken");
}

#[test]
fn arguments_that_are_not_objects_are_refused_before_the_host() {
    testing::reset();
    for e in [
        data::insert("Item", None, &json!([1])).unwrap_err(),
        data::update("Item", "x", &json!("hp")).unwrap_err(),
        data::list("Item", &json!(null), "", 10).unwrap_err(),
        data::count("Item", &json!(3)).unwrap_err(),
        shards::ticket("s", "p", &json!([]), 60).unwrap_err(),
        shards::transfer("a", "p", "b", &json!("x")).unwrap_err(),
    ] {
        assert_eq!(e.code, "BAD_REQUEST", "{}", e);
    }
    testing::with_host(|h| assert!(h.host_ops.is_empty(), "{:?}", h.host_ops));
}

#[test]
fn the_data_op_cap_is_the_hosts_data_ops_error() {
    testing::reset();
    testing::with_host(|h| h.max_data_ops = Some(2));
    data::count("Item", &json!({})).unwrap();
    data::count("Item", &json!({})).unwrap();
    let e = data::count("Item", &json!({})).unwrap_err();
    assert_eq!(e.code, "data_ops");
    assert!(e.message.contains("2"), "{}", e.message);
    // Shards calls are not data ops.
    assert_eq!(shards::list(None), Ok(Vec::new()));
}

#[test]
fn shards_are_created_found_listed_and_stopped() {
    testing::reset();
    testing::with_host(|h| h.shard_kinds = vec!["arena".to_string(), "lobby".to_string()]);
    let s = shards::create("arena", "a1", &json!({"map": "dunes"}), None).unwrap();
    assert_eq!((s["id"].clone(), s["kind"].clone()), (json!("a1"), json!("arena")));
    assert_eq!(last_request("shards", "create"), json!({"kind": "arena", "id": "a1", "params": {"map": "dunes"}}));
    shards::create("lobby", "l1", &Value::Null, Some("m2")).unwrap();
    assert_eq!(last_request("shards", "create"), json!({"kind": "lobby", "id": "l1", "machine": "m2"}));

    assert_eq!(shards::create("arena", "a1", &Value::Null, None).unwrap_err().code, "SHARD_EXISTS");
    assert_eq!(shards::create("race", "r1", &Value::Null, None).unwrap_err().code, "SHARD_KIND_UNKNOWN");

    assert_eq!(shards::get("a1").unwrap().unwrap()["kind"], "arena");
    assert_eq!(shards::get("zz").unwrap(), None);
    assert_eq!(shards::list(None).unwrap().len(), 2);
    let arenas = shards::list(Some("arena")).unwrap();
    assert_eq!(arenas.len(), 1);
    assert_eq!(last_request("shards", "list"), json!({"kind": "arena"}));

    shards::stop("a1").unwrap();
    assert_eq!(shards::get("a1").unwrap(), None);
    assert_eq!(shards::stop("a1").unwrap_err().code, "SHARD_NOT_FOUND");
}

#[test]
fn tickets_inputs_messages_and_transfers() {
    testing::reset();
    shards::create("zone", "z1", &Value::Null, None).unwrap();
    shards::create("zone", "z2", &Value::Null, None).unwrap();

    let t = shards::ticket("z1", "player-7", &json!({"role": "gm"}), 120).unwrap();
    assert!(!t.is_empty());
    assert_eq!(
        last_request("shards", "ticket"),
        json!({"id": "z1", "subscriber": "player-7", "claims": {"role": "gm"}, "ttlSecs": 120})
    );
    assert_eq!(shards::ticket("nope", "p", &json!({}), 60).unwrap_err().code, "SHARD_NOT_FOUND");

    shards::send("z1", &json!({"heal": {"player": "player-7", "hp": 5}})).unwrap();
    assert_eq!(shards::send("nope", &json!(1)).unwrap_err().code, "SHARD_NOT_FOUND");
    shards::publish("shard:z2", "weather", "rain\n\"heavy\"").unwrap();
    shards::publish("all", "news", "").unwrap();
    shards::transfer("z1", "player-7", "z2", &json!({"gate": 3})).unwrap();
    assert_eq!(shards::transfer("z1", "p", "z9", &json!({})).unwrap_err().code, "SHARD_NOT_FOUND");

    testing::with_host(|h| {
        assert_eq!(h.sent, vec![("z1".to_string(), json!({"heal": {"player": "player-7", "hp": 5}}))]);
        assert_eq!(
            h.published,
            vec![
                ("shard:z2".to_string(), "weather".to_string(), "rain\n\"heavy\"".to_string()),
                ("all".to_string(), "news".to_string(), String::new()),
            ]
        );
        assert_eq!(h.transfers.len(), 1);
        assert_eq!(h.transfers[0].3, json!({"gate": 3}));
    });

    testing::with_host(|h| h.fail_next_code("shards", abi::ERR_SHARDS, "SHARD_TRANSFER_REFUSED", "full"));
    let e = shards::transfer("z1", "player-7", "z2", &json!({})).unwrap_err();
    assert_eq!((e.code.as_str(), e.message.as_str()), ("SHARD_TRANSFER_REFUSED", "full"));
}

#[test]
fn raw_calls_send_the_request_as_given_and_return_the_reply_text() {
    testing::reset();
    let reply = tessera_compute_sdk::data_call("insert", r#"{"type":"Item","id":"k","fields":{"n":1}}"#).unwrap();
    let v: Value = tessera_compute_sdk::json::serde_json::from_str(&reply).unwrap();
    assert_eq!(v["row"]["n"], 1);
    let reply = tessera_compute_sdk::shards_call("list", "{}").unwrap();
    assert_eq!(reply, r#"{"shards":[]}"#);
    let e = tessera_compute_sdk::data_call("get", "not json").unwrap_err();
    assert_eq!(e.code, "BAD_REQUEST");
    let e = tessera_compute_sdk::data_call("explode", r#"{"type":"Item"}"#).unwrap_err();
    assert_eq!(e.code, "BAD_REQUEST");
}

#[test]
fn invoke_input_carries_the_calling_shard() {
    use tessera_compute_sdk::json::InvokeInput;
    let i: InvokeInput = InvokeInput::parse(br#"{"export":"grant","params":{},"callerUserId":"","callerShardId":"zone-1"}"#).unwrap();
    assert_eq!(i.caller_shard_id, "zone-1");
    let i: InvokeInput = InvokeInput::parse(br#"{"export":"grant","callerShardId":null}"#).unwrap();
    assert_eq!(i.caller_shard_id, "");
    let i: InvokeInput = InvokeInput::parse(br#"{"export":"grant"}"#).unwrap();
    assert_eq!(i.caller_shard_id, "");
}
