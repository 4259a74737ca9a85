//! The keyed call and entity write exports export_shard! generates
//! (`calls`, `writes`), driven natively as the host drives them: JSON in
//! the output buffer, the on_call_result argument in a tessera_alloc
//! buffer (include/tessera/abi.h, "Keyed calls and entity writes").

use std::sync::Mutex;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use tessera_shard_guest::{abi, export_shard, restore_value, save_value, Call, Shard, Write};

#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum Input {
    Loot { item: String },
    Move { x: f32, y: f32 },
}

#[derive(Deserialize)]
struct Params {}

/// The loot pattern: pending calls live in the saved state; an item is
/// granted only in on_call_result.
#[derive(Default, Serialize, Deserialize)]
struct Dungeon {
    id: String,
    next_key: u64,
    pending: Vec<Call>,
    granted: Vec<(String, Value)>,
    refused: Vec<(String, String)>,
    #[serde(skip)]
    moved: Vec<Write>,
}

impl Shard for Dungeon {
    type Params = Params;
    type Input = Input;
    type Snapshot = ();
    fn init(shard_id: &str, _params: Params) -> Result<Self, String> {
        Ok(Dungeon { id: shard_id.to_string(), ..Dungeon::default() })
    }
    fn restore(_shard_id: &str, _params: Params, state: &[u8]) -> Result<Self, String> {
        restore_value(state)
    }
    fn save(&self) -> Result<Option<Vec<u8>>, String> {
        Ok(Some(save_value(self)))
    }
    fn apply_input(&mut self, sid: &str, input: Input) -> Result<(), String> {
        match input {
            Input::Loot { item } => {
                self.next_key += 1;
                let key = format!("loot:{}:{}", self.id, self.next_key);
                self.pending.push(Call::new(key, "loot.grant", json!({"player": sid, "item": item})));
            }
            Input::Move { x, y } => {
                self.moved.push(Write::new("Character", sid).field("x", x).field("y", y));
            }
        }
        Ok(())
    }
    fn tick(&mut self, _dt: Duration) {}
    fn snapshot(&self) {}
    fn calls(&mut self) -> Vec<Call> {
        self.pending.clone()
    }
    fn on_call_result(&mut self, key: &str, result: Result<Value, String>) {
        self.pending.retain(|c| c.key != key);
        match result {
            Ok(v) => self.granted.push((key.to_string(), v)),
            Err(e) => self.refused.push((key.to_string(), e)),
        }
    }
    fn writes(&mut self) -> Vec<Write> {
        std::mem::take(&mut self.moved)
    }
}

export_shard!(Dungeon, save, calls, writes);

static LOCK: Mutex<()> = Mutex::new(());

fn pass(bytes: &[u8]) -> (usize, u32) {
    if bytes.is_empty() {
        return (0, 0);
    }
    let ptr = tessera_alloc(bytes.len() as u32);
    unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), ptr as *mut u8, bytes.len()) };
    (ptr, bytes.len() as u32)
}

fn output() -> Vec<u8> {
    let (ptr, len) = (tessera_output_ptr(), tessera_output_len());
    if len == 0 {
        return Vec::new();
    }
    unsafe { std::slice::from_raw_parts(ptr as *const u8, len as usize) }.to_vec()
}

fn output_json() -> Value {
    serde_json::from_slice(&output()).expect("JSON output")
}

fn start() {
    tessera_shard_guest::__private::reset_for_testing(__tessera_shard());
    let (ip, il) = pass(b"dungeon-1");
    assert_eq!(unsafe { tessera_init(abi::CODEC_JSON, ip, il, 0, 0) }, abi::OK);
}

fn input(sid: &str, json: &str) {
    let (sp, sl) = pass(sid.as_bytes());
    let (ip, il) = pass(json.as_bytes());
    assert_eq!(unsafe { tessera_apply_input(sp, sl, ip, il) }, abi::OK, "{}", json);
}

fn call_result(arg: &str) -> i32 {
    let (p, l) = pass(arg.as_bytes());
    unsafe { tessera_on_call_result(p, l) }
}

fn shard() -> &'static mut Dungeon {
    __tessera_shard().as_mut().unwrap()
}

#[test]
fn calls_lists_every_pending_call_until_its_result_comes() {
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    start();
    assert_eq!(tessera_calls(), abi::NO_STATE);
    assert!(output().is_empty());

    input("p1", r#"{"loot":{"item":"sword"}}"#);
    input("p2", r#"{"loot":{"item":"shield \"big\""}}"#);
    let expected = json!([
        {"key": "loot:dungeon-1:1", "function": "loot.grant", "args": {"player": "p1", "item": "sword"}},
        {"key": "loot:dungeon-1:2", "function": "loot.grant", "args": {"player": "p2", "item": "shield \"big\""}},
    ]);
    assert_eq!(tessera_calls(), abi::OK);
    assert_eq!(output_json(), expected);
    // Still waiting: the same calls again on the next tick.
    assert_eq!(tessera_calls(), abi::OK);
    assert_eq!(output_json(), expected);

    assert_eq!(call_result(r#"{"key":"loot:dungeon-1:1","ok":true,"result":{"itemId":"i-9"}}"#), abi::OK);
    assert_eq!(
        call_result(r#"{"key":"loot:dungeon-1:2","ok":false,"error":"KEY_REUSED: other args"}"#),
        abi::OK
    );
    assert_eq!(shard().granted, vec![("loot:dungeon-1:1".to_string(), json!({"itemId": "i-9"}))]);
    assert_eq!(shard().refused, vec![("loot:dungeon-1:2".to_string(), "KEY_REUSED: other args".to_string())]);
    assert_eq!(tessera_calls(), abi::NO_STATE);
}

#[test]
fn a_result_without_a_value_is_null_and_a_malformed_one_is_refused() {
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    start();
    input("p1", r#"{"loot":{"item":"gem"}}"#);
    for bad in ["", "not json", r#"{"ok":true}"#, r#"{"key":"k","ok":"yes"}"#] {
        assert_eq!(call_result(bad), abi::ERROR, "{}", bad);
        let text = String::from_utf8(output()).unwrap();
        assert!(text.starts_with("tessera_on_call_result: malformed argument: "), "{}", text);
    }
    assert_eq!(shard().pending.len(), 1);
    assert_eq!(call_result(r#"{"key":"loot:dungeon-1:1","ok":true}"#), abi::OK);
    assert_eq!(shard().granted, vec![("loot:dungeon-1:1".to_string(), Value::Null)]);
}

#[test]
fn pending_calls_survive_save_and_restore() {
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    start();
    input("p1", r#"{"loot":{"item":"sword"}}"#);
    assert_eq!(tessera_save(), abi::OK);
    let saved = output();

    tessera_shard_guest::__private::reset_for_testing(__tessera_shard());
    let (ip, il) = pass(b"dungeon-1");
    let (sp, sl) = pass(&saved);
    assert_eq!(unsafe { tessera_restore(abi::CODEC_JSON, ip, il, 0, 0, sp, sl) }, abi::OK);
    assert_eq!(tessera_calls(), abi::OK);
    assert_eq!(
        output_json(),
        json!([{"key": "loot:dungeon-1:1", "function": "loot.grant", "args": {"player": "p1", "item": "sword"}}])
    );
}

#[test]
fn writes_are_taken_once_after_each_tick() {
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    start();
    assert_eq!(tessera_writes(), abi::NO_STATE);
    input("p1", r#"{"move":{"x":1.5,"y":-2}}"#);
    input("p2", r#"{"move":{"x":0,"y":3.25}}"#);
    assert_eq!(tessera_writes(), abi::OK);
    assert_eq!(
        output_json(),
        json!([
            {"entity": "Character", "id": "p1", "set": {"x": 1.5, "y": -2.0}},
            {"entity": "Character", "id": "p2", "set": {"x": 0.0, "y": 3.25}},
        ])
    );
    assert_eq!(tessera_writes(), abi::NO_STATE);
}

#[test]
fn write_fields_keep_the_latest_value() {
    let w = Write::new("Character", "c1").field("hp", 3).field("hp", 4).field("name", "Ann");
    assert_eq!(serde_json::to_value(&w).unwrap(), json!({"entity": "Character", "id": "c1", "set": {"hp": 4, "name": "Ann"}}));
}
