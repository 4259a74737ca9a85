//! Native builds only (`cargo test` of a module or of this crate): a fake
//! host behind the host functions, so module code runs outside the sandbox.
//!
//! Each thread has its own [`FakeHost`]; [`reset`] gives it a clean one.
//! It keeps the state blob, records log lines and emits, returns the errors
//! queued with [`FakeHost::fail_next`] and answers `last_error` with the
//! ABI's JSON, exactly as the real host's contract says. The entry points
//! [`register_module!`](crate::register_module) generates are plain
//! functions in a native build; call them directly and read the result
//! with [`output`].
//!
//! ```
//! use tessera_compute_sdk::testing;
//!
//! testing::reset();
//! tessera_compute_sdk::state_set(b"7").unwrap();
//! assert_eq!(tessera_compute_sdk::state_get(), Some(b"7".to_vec()));
//! testing::with_host(|h| h.fail_next("state_set", -4, "a newer revision exists"));
//! let err = tessera_compute_sdk::state_set(b"8").unwrap_err();
//! assert_eq!(err.code, "stale_state");
//! ```
//!
//! With the `json` feature it also answers the `data` and `shards` host
//! functions from an in-memory store ([`FakeHost::rows`],
//! [`FakeHost::shards`]), so [`data`](crate::data) and
//! [`shards`](crate::shards) code runs in `cargo test`:
//!
//! ```
//! # #[cfg(feature = "json")] {
//! use tessera_compute_sdk::{data, json::json, testing};
//!
//! testing::reset();
//! let row = data::insert("Item", Some("i1"), &json!({"kind": "sword"})).unwrap();
//! assert_eq!(row["kind"], "sword");
//! assert_eq!(data::insert("Item", Some("i1"), &json!({})).unwrap_err().code, "ROW_EXISTS");
//! testing::with_host(|h| h.fail_next_code("data.get", -10, "UNAVAILABLE", "store down"));
//! assert_eq!(data::get("Item", "i1").unwrap_err().code, "UNAVAILABLE");
//! # }
//! ```
//!
//! The fake's data store follows the real host's reply shapes and error
//! codes, with these differences: it has no schema (any entity type and
//! field is accepted unless [`FakeHost::entity_types`] lists the types),
//! `lookup` matches any field (no `NO_INDEX`), there are no transactions
//! (a failed entry call keeps its changes, and `send` / `publish` are
//! recorded at once), and shards are records, not running games.

use std::cell::RefCell;

/// One recorded `emit_event`, `emit_channel` or `emit_spatial` call that
/// succeeded.
#[derive(Clone, Debug, PartialEq)]
pub struct Emitted {
    /// "event", "channel" or "spatial".
    pub kind: &'static str,
    /// The event name, the channel, or `shard@x,y,radius` for a spatial emit.
    pub target: String,
    /// The payload bytes.
    pub payload: Vec<u8>,
}

/// The host a native build talks to. Fields are public so a test can set
/// up and inspect everything.
#[derive(Debug, Default)]
pub struct FakeHost {
    /// What `now_ms` returns.
    pub now_ms: i64,
    /// The durable state blob (`None`: never set).
    pub state: Option<Vec<u8>>,
    /// Successful `state_set` calls.
    pub state_writes: u32,
    /// `(level, text)` of every log line, panic messages included (level 4).
    pub logs: Vec<(i32, String)>,
    /// Every successful emit, in order.
    pub emitted: Vec<Emitted>,
    /// What emit_channel / emit_spatial report as connections reached.
    pub connections: i32,
    /// State of the deterministic byte generator behind `random_bytes`.
    pub random_state: u64,
    /// Every `data` / `shards` host call, in order, refused ones included.
    pub host_ops: Vec<HostOp>,
    /// `data` calls allowed before the `data_ops` error (`None`: no cap).
    /// [`FakeHost::data_ops_used`] counts them; reset it between "entry
    /// calls" to model the real per-call cap.
    pub max_data_ops: Option<u32>,
    /// `data` calls answered so far (refused ones included).
    pub data_ops_used: u32,
    /// The fake data store (the `json` feature): entity type -> id -> row
    /// (`{"id", "createdAt", "updatedAt", "version", ...fields}`).
    #[cfg(feature = "json")]
    pub rows: std::collections::BTreeMap<String, std::collections::BTreeMap<String, serde_json::Value>>,
    /// When not empty, the only entity types (others are `UNKNOWN_TYPE`).
    pub entity_types: Vec<String>,
    /// The fake's shards (the `json` feature): id -> shard object
    /// (`{"id", "kind", "status", "tick", "subscribers", "machine"}`).
    /// `stop` removes one.
    #[cfg(feature = "json")]
    pub shards: std::collections::BTreeMap<String, serde_json::Value>,
    /// When not empty, the only shard kinds `create` accepts (others are
    /// `SHARD_KIND_UNKNOWN`).
    pub shard_kinds: Vec<String>,
    /// `(shard id, input)` of every successful `shards.send`.
    #[cfg(feature = "json")]
    pub sent: Vec<(String, serde_json::Value)>,
    /// `(target, topic, data)` of every successful `shards.publish`.
    pub published: Vec<(String, String, String)>,
    /// `(from, subscriber, to, claims)` of every successful `shards.transfer`.
    #[cfg(feature = "json")]
    pub transfers: Vec<(String, String, String, serde_json::Value)>,
    /// Ids the fake picked for inserts without one: `row-1`, `row-2`, ...
    pub next_row_id: u64,
    pub(crate) reply: String,
    failures: Vec<(String, i32, String, String)>,
    last_error: String,
}

/// One recorded `data` or `shards` host call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostOp {
    /// "data" or "shards".
    pub function: &'static str,
    /// The operation, e.g. "insert".
    pub op: String,
    /// The request JSON as the module sent it.
    pub request: String,
}

impl FakeHost {
    /// Makes the next call of host function `call` ("state_get",
    /// "state_set", "emit_event", "emit_channel", "emit_spatial",
    /// "random_bytes") fail with ABI error `code` (negative) and `message`.
    pub fn fail_next(&mut self, call: &str, code: i32, message: &str) {
        let name = crate::abi::error_code_name(code).unwrap_or("unknown");
        self.fail_next_code(call, code, name, message);
    }

    /// Makes the next call of `call` fail with ABI error `code` and
    /// last_error's code `name` (e.g. `-10`, `"ROW_NOT_FOUND"`). `call` is
    /// a host function as for [`fail_next`](Self::fail_next), or `"data"` /
    /// `"shards"` (any op), or one op of them: `"data.insert"`,
    /// `"shards.send"`.
    pub fn fail_next_code(&mut self, call: &str, code: i32, name: &str, message: &str) {
        self.failures.push((call.to_string(), code, name.to_string(), message.to_string()));
    }

    /// The recorded requests of `function` ("data" or "shards") op `op`,
    /// parsed (the `json` feature).
    #[cfg(feature = "json")]
    pub fn requests(&self, function: &str, op: &str) -> Vec<serde_json::Value> {
        self.host_ops
            .iter()
            .filter(|o| o.function == function && o.op == op)
            .map(|o| serde_json::from_str(&o.request).unwrap_or(serde_json::Value::Null))
            .collect()
    }

    /// The lines logged at `level`, in order.
    pub fn lines_at(&self, level: i32) -> Vec<String> {
        self.logs.iter().filter(|(l, _)| *l == level).map(|(_, t)| t.clone()).collect()
    }

    fn take_failure(&mut self, call: &str) -> Option<i32> {
        self.take_failure_of(&[call])
    }

    fn take_failure_of(&mut self, calls: &[&str]) -> Option<i32> {
        let at = self.failures.iter().position(|(c, _, _, _)| calls.contains(&c.as_str()))?;
        let (_, code, name, message) = self.failures.remove(at);
        self.set_error(code, &name, &message)
    }

    fn set_error(&mut self, code: i32, name: &str, message: &str) -> Option<i32> {
        self.last_error =
            format!("{{\"code\":{},\"message\":{}}}", json_string(name), json_string(message));
        Some(code)
    }

    /// A `data` or `shards` call: the reply's size, or a negative code.
    pub(crate) fn host_op(&mut self, function: &'static str, op: String, request: String) -> i32 {
        self.host_ops.push(HostOp { function, op: op.clone(), request: request.clone() });
        let one = format!("{}.{}", function, op);
        if let Some(code) = self.take_failure_of(&[function, one.as_str()]) {
            return code;
        }
        if function == "data" {
            self.data_ops_used += 1;
            if let Some(cap) = self.max_data_ops {
                if self.data_ops_used > cap {
                    let message = format!("over {} data operations in this call", cap);
                    return self.set_error(crate::abi::ERR_DATA_OPS, "data_ops", &message).unwrap_or(-7);
                }
            }
        }
        match self.answer(function, &op, &request) {
            Ok(reply) => {
                self.reply = reply;
                self.reply.len() as i32
            }
            Err((code, name, message)) => self.set_error(code, &name, &message).unwrap_or(code),
        }
    }

    #[cfg(feature = "json")]
    fn answer(&mut self, function: &str, op: &str, request: &str) -> Result<String, (i32, String, String)> {
        crate::fake_data::answer(self, function, op, request)
    }

    #[cfg(not(feature = "json"))]
    fn answer(&mut self, function: &str, _op: &str, _request: &str) -> Result<String, (i32, String, String)> {
        Err((
            crate::abi::ERR_UNAVAILABLE,
            "unavailable".to_string(),
            format!("the fake host answers {} calls with the json feature only", function),
        ))
    }

    pub(crate) fn log_line(&mut self, level: i32, text: String) {
        self.logs.push((level, text));
    }

    pub(crate) fn fill_random(&mut self, out: &mut [u8]) -> i32 {
        if let Some(code) = self.take_failure("random_bytes") {
            return code;
        }
        for b in out.iter_mut() {
            // xorshift64*: reproducible bytes, not secure ones.
            let mut x = self.random_state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            self.random_state = x;
            *b = (x.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 56) as u8;
        }
        0
    }

    pub(crate) fn get_state(&mut self) -> Result<Option<Vec<u8>>, i32> {
        match self.take_failure("state_get") {
            Some(code) => Err(code),
            None => Ok(self.state.clone()),
        }
    }

    pub(crate) fn set_state(&mut self, blob: Vec<u8>) -> i32 {
        if let Some(code) = self.take_failure("state_set") {
            return code;
        }
        self.state = Some(blob);
        self.state_writes += 1;
        0
    }

    pub(crate) fn emit(&mut self, kind: &'static str, target: String, payload: Vec<u8>) -> i32 {
        let call = match kind {
            "event" => "emit_event",
            "channel" => "emit_channel",
            _ => "emit_spatial",
        };
        if let Some(code) = self.take_failure(call) {
            return code;
        }
        self.emitted.push(Emitted { kind, target, payload });
        if kind == "event" {
            0
        } else {
            self.connections
        }
    }

    pub(crate) fn last_error_json(&self) -> String {
        self.last_error.clone()
    }
}

fn json_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

thread_local! {
    static HOST: RefCell<FakeHost> = RefCell::new(FakeHost::default());
}

/// Runs `f` on this thread's fake host.
pub fn with_host<R>(f: impl FnOnce(&mut FakeHost) -> R) -> R {
    HOST.with(|h| f(&mut h.borrow_mut()))
}

/// Replaces this thread's fake host with a fresh one (no state, no logs)
/// and clears the module's output buffer.
pub fn reset() {
    HOST.with(|h| *h.borrow_mut() = FakeHost::default());
    crate::__private::clear_output();
}

/// The output buffer of the last entry call: an invoke's result, or a
/// failed entry's error text.
pub fn output() -> Vec<u8> {
    crate::__private::output().to_vec()
}

/// Copies `input` into a buffer from `tessera_alloc`, as the host does
/// before `tessera_compute_invoke` / `tessera_compute_event`, and returns
/// the `(ptr, len)` to pass them.
pub fn input(input: &[u8]) -> (usize, u32) {
    let ptr = crate::__private::alloc(input.len() as u32);
    // SAFETY: alloc returned a buffer of input.len() bytes.
    unsafe { std::ptr::copy_nonoverlapping(input.as_ptr(), ptr as *mut u8, input.len()) };
    (ptr, input.len() as u32)
}
