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
    failures: Vec<(String, i32, String)>,
    last_error: String,
}

impl FakeHost {
    /// Makes the next call of host function `call` ("state_get",
    /// "state_set", "emit_event", "emit_channel", "emit_spatial",
    /// "random_bytes") fail with ABI error `code` (negative) and `message`.
    pub fn fail_next(&mut self, call: &str, code: i32, message: &str) {
        self.failures.push((call.to_string(), code, message.to_string()));
    }

    /// The lines logged at `level`, in order.
    pub fn lines_at(&self, level: i32) -> Vec<String> {
        self.logs.iter().filter(|(l, _)| *l == level).map(|(_, t)| t.clone()).collect()
    }

    fn take_failure(&mut self, call: &str) -> Option<i32> {
        let at = self.failures.iter().position(|(c, _, _)| c == call)?;
        let (_, code, message) = self.failures.remove(at);
        let name = crate::abi::error_code_name(code).unwrap_or("unknown");
        self.last_error =
            format!("{{\"code\":{},\"message\":{}}}", json_string(name), json_string(&message));
        Some(code)
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
