//! The host API: the safe functions over the `tessera_compute_v1` imports.
//! Call them from any entry point (`init`, `tick`, `invoke`, `event`).

use std::fmt;

use crate::abi;
use crate::sys;

/// Why a host function refused a call: the host's `last_error`
/// (`{"code": "...", "message": "..."}`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostError {
    /// The ABI's code string, e.g. `"egress_budget"`, `"stale_state"`,
    /// `"too_large"` (see [`abi::error_code_name`]).
    pub code: String,
    /// What the host said, for people.
    pub message: String,
}

impl HostError {
    /// Whether this is the `egress_budget` error: the module is over its
    /// per-minute message or byte budget and nothing was sent.
    pub fn is_egress_budget(&self) -> bool {
        self.code == "egress_budget"
    }

    /// Whether this is the `stale_state` error: another instance (the
    /// tick-lease holder) persisted the blob since this one read it.
    pub fn is_stale_state(&self) -> bool {
        self.code == "stale_state"
    }

    /// The error of a failed host call that returned `result` (negative):
    /// the host's `last_error`, or one made from the ABI's code table when
    /// the host gave none.
    fn from_result(result: i32) -> HostError {
        let fallback = || HostError {
            code: abi::error_code_name(result).unwrap_or("unknown").to_string(),
            message: format!("host call failed with code {}", result),
        };
        match last_error_json() {
            Some(json) => parse_error_json(&json).unwrap_or_else(fallback),
            None => fallback(),
        }
    }
}

impl fmt::Display for HostError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for HostError {}

fn check(result: i32) -> Result<u32, HostError> {
    if result >= 0 {
        Ok(result as u32)
    } else {
        Err(HostError::from_result(result))
    }
}

fn last_error_json() -> Option<String> {
    let mut buf = vec![0u8; 256];
    loop {
        // SAFETY: `buf` is writable for its length.
        let size = unsafe { sys::last_error(buf.as_mut_ptr(), buf.len()) };
        if size <= 0 {
            return None;
        }
        let size = size as usize;
        if size <= buf.len() {
            buf.truncate(size);
            return String::from_utf8(buf).ok();
        }
        buf.resize(size, 0);
    }
}

/// Sends a line to the module's logs at `level` ([`abi::LOG_DEBUG`] 0,
/// [`abi::LOG_INFO`] 1, [`abi::LOG_WARN`] 2, [`abi::LOG_ERROR`] 3). The
/// host records the entry call's trigger source and flow id with it.
pub fn log(level: i32, text: &str) {
    // SAFETY: the host reads `text` during the call only.
    unsafe { sys::log(level, text.as_ptr(), text.len()) }
}

/// The host's clock: unix time in milliseconds. Modules have no clock of
/// their own.
pub fn now_ms() -> i64 {
    // SAFETY: no arguments.
    unsafe { sys::now_ms() }
}

/// `n` bytes from the host's cryptographic random generator (in chunks of
/// [`abi::MAX_RANDOM_BYTES`] for a larger `n`).
///
/// # Panics
/// When the host refuses, which it does only for a length over the limit;
/// the panic fails the run with the host's reason.
pub fn random_bytes(n: usize) -> Vec<u8> {
    let mut out = vec![0u8; n];
    for chunk in out.chunks_mut(abi::MAX_RANDOM_BYTES) {
        // SAFETY: `chunk` is writable for its length.
        let r = unsafe { sys::random_bytes(chunk.as_mut_ptr(), chunk.len()) };
        if let Err(e) = check(r) {
            panic!("random_bytes({}) failed: {}", n, e);
        }
    }
    out
}

/// The module's durable state blob, or `None` when it was never set.
///
/// Reading records the blob's revision: a later [`state_set`] from an
/// instance that is not the tick-lease holder passes only if nobody
/// persisted a newer one meanwhile.
///
/// # Panics
/// When the host cannot read it (e.g. over the call's data-op cap): the
/// run fails rather than the module mistaking it for "no state". Use
/// [`try_state_get`] to handle that case.
pub fn state_get() -> Option<Vec<u8>> {
    match try_state_get() {
        Ok(state) => state,
        Err(e) => panic!("state_get failed: {}", e),
    }
}

/// [`state_get`], with the host's refusal as an error.
pub fn try_state_get() -> Result<Option<Vec<u8>>, HostError> {
    // SAFETY: a zero capacity writes nothing.
    let mut size = unsafe { sys::state_get(std::ptr::null_mut(), 0) };
    let mut buf = Vec::new();
    loop {
        if size == abi::ERR_NO_STATE {
            return Ok(None);
        }
        check(size)?;
        let want = size as usize;
        if want <= buf.len() {
            buf.truncate(want);
            return Ok(Some(buf));
        }
        buf.resize(want, 0);
        // SAFETY: `buf` is writable for its length.
        size = unsafe { sys::state_get(buf.as_mut_ptr(), buf.len()) };
    }
}

/// Replaces the module's durable state blob (at most
/// [`abi::MAX_STATE_BYTES`]).
///
/// Errors: `too_large`; `stale_state` when this instance is not the
/// tick-lease holder and the holder persisted a newer revision since this
/// instance read or wrote the blob (the write is dropped and the host logs
/// a warning in the module's logs).
pub fn state_set(bytes: &[u8]) -> Result<(), HostError> {
    // SAFETY: the host reads `bytes` during the call only.
    check(unsafe { sys::state_set(bytes.as_ptr(), bytes.len()) }).map(|_| ())
}

/// Raises compute event `name` (1 to [`abi::MAX_EVENT_NAME_BYTES`] bytes)
/// with `payload` (at most [`abi::MAX_EVENT_PAYLOAD_BYTES`]; JSON by
/// convention) for the event triggers of every module, this one included.
///
/// Errors: `invalid`, `too_large`, `event_depth` (this run is at the
/// cascade depth limit, [`abi::MAX_EVENT_DEPTH`]).
pub fn emit_event(name: &str, payload: &[u8]) -> Result<(), HostError> {
    // SAFETY: the host reads both buffers during the call only.
    let r = unsafe { sys::emit_event(name.as_ptr(), name.len(), payload.as_ptr(), payload.len()) };
    check(r).map(|_| ())
}

/// Sends `payload` (at most [`abi::MAX_NOTIFY_PAYLOAD_BYTES`]) as a NOTIFY
/// to the connected players of `channel` (`"all"`, or the channels
/// `docs/compute-abi.md` lists), and returns how many connections it
/// reached.
///
/// Each call counts one message and its bytes against the module's
/// per-minute egress budget, even when it reaches nobody. Errors:
/// `egress_budget` (nothing was sent), `invalid`, `too_large`.
pub fn emit_channel(channel: &str, payload: &[u8]) -> Result<u32, HostError> {
    // SAFETY: the host reads both buffers during the call only.
    let r = unsafe {
        sys::emit_channel(channel.as_ptr(), channel.len(), payload.as_ptr(), payload.len())
    };
    check(r)
}

/// Sends `payload` (at most [`abi::MAX_NOTIFY_PAYLOAD_BYTES`]) as a NOTIFY
/// to the players of shard `shard` whose interest-area centre is within
/// `radius` of `(x, y)`, and returns how many connections it reached.
///
/// Counts against the egress budget as [`emit_channel`]. Errors:
/// `egress_budget`, `not_found` (no such shard), `invalid` (non-finite
/// coordinates), `too_large`.
pub fn emit_spatial(shard: &str, x: f32, y: f32, radius: f32, payload: &[u8]) -> Result<u32, HostError> {
    // SAFETY: the host reads both buffers during the call only.
    let r = unsafe {
        sys::emit_spatial(shard.as_ptr(), shard.len(), x, y, radius, payload.as_ptr(), payload.len())
    };
    check(r)
}

/// One operation on the app's data with a request you built: `op` is one
/// of [`abi::data_op`], `request` its JSON object (at most
/// [`abi::MAX_DATA_REQUEST_BYTES`]). Returns the host's JSON reply.
///
/// The operation runs inside the entry call's transaction: it commits
/// only if the entry call succeeds (an `Err`, a panic, running out of fuel
/// or the watchdog roll back every data operation of the call). With the
/// `json` feature, [`data`](crate::data) has one typed function per op.
///
/// Errors: the host's code, e.g. `"ROW_NOT_FOUND"`, `"UNIQUE_VIOLATION"`,
/// `"BAD_VALUE"` ([`abi::ERR_DATA`]), `data_ops` (over the policy's
/// `maxDbOpsPerTick` in this call), `too_large`, `unavailable`.
pub fn data_call(op: &str, request: &str) -> Result<String, HostError> {
    // SAFETY: the host reads both buffers during the call only.
    let size = unsafe { sys::data(op.as_ptr(), op.len(), request.as_ptr(), request.len()) };
    read_reply(size)
}

/// One operation on the app's shards with a request you built: `op` is
/// one of [`abi::shards_op`], `request` its JSON object. Returns the
/// host's JSON reply. `send` and `publish` take effect only once the entry
/// call's transaction commits. With the `json` feature,
/// [`shards`](crate::shards) has one typed function per op.
///
/// Errors: the host's code, e.g. `"SHARD_NOT_FOUND"`, `"SHARD_EXISTS"`
/// ([`abi::ERR_SHARDS`]), `too_large`, `unavailable`.
pub fn shards_call(op: &str, request: &str) -> Result<String, HostError> {
    // SAFETY: the host reads both buffers during the call only.
    let size = unsafe { sys::shards(op.as_ptr(), op.len(), request.as_ptr(), request.len()) };
    read_reply(size)
}

/// The reply of a data / shards call that returned `size`.
fn read_reply(size: i32) -> Result<String, HostError> {
    let size = check(size)? as usize;
    let mut buf = vec![0u8; size];
    if size > 0 {
        // SAFETY: `buf` is writable for its length.
        let got = check(unsafe { sys::reply(buf.as_mut_ptr(), buf.len()) })? as usize;
        buf.truncate(got);
    }
    String::from_utf8(buf).map_err(|_| HostError {
        code: "BAD_REPLY".to_string(),
        message: "the host's reply is not UTF-8".to_string(),
    })
}

/// Reads `{"code": "...", "message": "..."}` (other members skipped).
pub(crate) fn parse_error_json(json: &str) -> Option<HostError> {
    let mut p = Parser { s: json.as_bytes(), at: 0 };
    let mut code = None;
    let mut message = None;
    p.expect(b'{')?;
    if !p.eat(b'}') {
        loop {
            let key = p.string()?;
            p.expect(b':')?;
            if key == "code" || key == "message" {
                let v = p.string()?;
                if key == "code" {
                    code = Some(v);
                } else {
                    message = Some(v);
                }
            } else {
                p.skip_value(0)?;
            }
            if p.eat(b'}') {
                break;
            }
            p.expect(b',')?;
        }
    }
    p.ws();
    if p.at != p.s.len() {
        return None;
    }
    Some(HostError { code: code?, message: message.unwrap_or_default() })
}

/// Just enough JSON for `last_error`.
struct Parser<'a> {
    s: &'a [u8],
    at: usize,
}

impl<'a> Parser<'a> {
    fn ws(&mut self) {
        while self.at < self.s.len() && matches!(self.s[self.at], b' ' | b'\t' | b'\n' | b'\r') {
            self.at += 1;
        }
    }

    fn eat(&mut self, c: u8) -> bool {
        self.ws();
        if self.s.get(self.at) == Some(&c) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, c: u8) -> Option<()> {
        if self.eat(c) {
            Some(())
        } else {
            None
        }
    }

    fn hex4(&mut self) -> Option<u32> {
        let digits = self.s.get(self.at..self.at + 4)?;
        self.at += 4;
        u32::from_str_radix(std::str::from_utf8(digits).ok()?, 16).ok()
    }

    fn string(&mut self) -> Option<String> {
        self.expect(b'"')?;
        let mut out: Vec<u8> = Vec::new();
        loop {
            let c = *self.s.get(self.at)?;
            self.at += 1;
            match c {
                b'"' => return String::from_utf8(out).ok(),
                b'\\' => {
                    let e = *self.s.get(self.at)?;
                    self.at += 1;
                    let ch = match e {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => {
                            let hi = self.hex4()?;
                            let code = if (0xd800..0xdc00).contains(&hi) {
                                if self.s.get(self.at..self.at + 2) != Some(b"\\u") {
                                    return None;
                                }
                                self.at += 2;
                                let lo = self.hex4()?;
                                if !(0xdc00..0xe000).contains(&lo) {
                                    return None;
                                }
                                0x10000 + ((hi - 0xd800) << 10) + (lo - 0xdc00)
                            } else {
                                hi
                            };
                            char::from_u32(code)?
                        }
                        _ => return None,
                    };
                    let mut tmp = [0u8; 4];
                    out.extend_from_slice(ch.encode_utf8(&mut tmp).as_bytes());
                }
                c if c < 0x20 => return None,
                c => out.push(c),
            }
        }
    }

    fn skip_value(&mut self, depth: u32) -> Option<()> {
        if depth > 32 {
            return None;
        }
        self.ws();
        match *self.s.get(self.at)? {
            b'"' => self.string().map(|_| ()),
            b'{' | b'[' => {
                let close = if self.s[self.at] == b'{' { b'}' } else { b']' };
                self.at += 1;
                if self.eat(close) {
                    return Some(());
                }
                loop {
                    if close == b'}' {
                        self.string()?;
                        self.expect(b':')?;
                    }
                    self.skip_value(depth + 1)?;
                    if self.eat(close) {
                        return Some(());
                    }
                    self.expect(b',')?;
                }
            }
            _ => {
                let start = self.at;
                while self.at < self.s.len()
                    && matches!(self.s[self.at], b'-' | b'+' | b'.' | b'0'..=b'9' | b'a'..=b'z' | b'E')
                {
                    self.at += 1;
                }
                if self.at == start {
                    None
                } else {
                    Some(())
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_error_json() {
        let e = parse_error_json(r#"{"code":"egress_budget","message":"600 msgs/min \"used\" \u00e9"}"#)
            .unwrap();
        assert_eq!(e.code, "egress_budget");
        assert_eq!(e.message, "600 msgs/min \"used\" \u{e9}");
        let e = parse_error_json(r#" { "x": [1, {"y": null}], "message": "m", "code": "invalid" } "#)
            .unwrap();
        assert_eq!((e.code.as_str(), e.message.as_str()), ("invalid", "m"));
        assert_eq!(parse_error_json(r#"{"code":"a","message":"\ud83d\ude00"}"#).unwrap().message, "\u{1f600}");
    }

    #[test]
    fn refuses_broken_error_json() {
        for bad in ["", "{", r#"{"message":"m"}"#, r#"{"code":1}"#, r#"{"code":"a"} x"#, r#"{"code":"\ud800"}"#] {
            assert_eq!(parse_error_json(bad), None, "{}", bad);
        }
    }
}
