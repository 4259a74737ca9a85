//! A module using the data API (the README's grant function), called
//! through the exports register_module! generates, against the fake host.
#![cfg(feature = "json")]

use tessera_compute_sdk::json::{json, InvokeInput, Value};
use tessera_compute_sdk::{abi, data, shards, testing};

fn on_invoke(input: &[u8]) -> Result<String, String> {
    let call: InvokeInput = InvokeInput::parse(input)?;
    match call.export.as_str() {
        "grant" => {
            let row = data::insert(
                "Item",
                None,
                &json!({"owner": call.params["player"], "kind": call.params["item"], "from": call.caller_shard_id}),
            )
            .map_err(|e| e.to_string())?;
            Ok(json!({"itemId": row["id"]}).to_string())
        }
        "heal" => {
            // The GM pattern: record the action, then tell the shard.
            let player = call.params["player"].as_str().unwrap_or_default();
            data::insert("GmAction", None, &json!({"by": call.caller_user_id, "player": player}))
                .map_err(|e| e.to_string())?;
            shards::send("zone-1", &json!({"heal": {"player": player}})).map_err(|e| e.to_string())?;
            Ok("{}".to_string())
        }
        other => Err(format!("no export {}", other)),
    }
}

tessera_compute_sdk::register_module!(init: || (), tick: |_| (), invoke: on_invoke);

fn invoke(input: Value) -> (i32, String) {
    let bytes = input.to_string().into_bytes();
    let (ptr, len) = testing::input(&bytes);
    let code = unsafe { tessera_compute_invoke(ptr, len) };
    (code, String::from_utf8(testing::output()).unwrap())
}

#[test]
fn a_grant_inserts_one_row_and_returns_its_id() {
    testing::reset();
    let (code, out) = invoke(json!({"export": "grant", "params": {"player": "p1", "item": "sword"},
                                    "callerUserId": "", "callerShardId": "zone-1"}));
    assert_eq!(code, abi::OK, "{}", out);
    let out: Value = tessera_compute_sdk::json::serde_json::from_str(&out).unwrap();
    let id = out["itemId"].as_str().unwrap().to_string();
    testing::with_host(|h| {
        let row = &h.rows["Item"][&id];
        assert_eq!((row["owner"].clone(), row["kind"].clone(), row["from"].clone()), (json!("p1"), json!("sword"), json!("zone-1")));
        assert_eq!(h.rows["Item"].len(), 1);
    });
}

#[test]
fn a_refused_insert_fails_the_call_with_the_code() {
    testing::reset();
    testing::with_host(|h| h.fail_next_code("data.insert", abi::ERR_DATA, "BAD_VALUE", "Item.kind: too long"));
    let (code, out) = invoke(json!({"export": "grant", "params": {"player": "p1", "item": "x"}}));
    assert_eq!((code, out.as_str()), (abi::FAILED, "BAD_VALUE: Item.kind: too long"));
}

#[test]
fn a_gm_heal_records_the_action_and_sends_the_input() {
    testing::reset();
    shards::create("zone", "zone-1", &Value::Null, None).unwrap();
    let (code, out) = invoke(json!({"export": "heal", "params": {"player": "p7"}, "callerUserId": "gm-1"}));
    assert_eq!(code, abi::OK, "{}", out);
    testing::with_host(|h| {
        assert_eq!(h.sent, vec![("zone-1".to_string(), json!({"heal": {"player": "p7"}}))]);
        let action = h.rows["GmAction"].values().next().unwrap();
        assert_eq!((action["by"].clone(), action["player"].clone()), (json!("gm-1"), json!("p7")));
    });
}
