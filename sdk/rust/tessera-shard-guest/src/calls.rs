//! Keyed calls and entity writes (docs/guest-abi.md, "Keyed calls and
//! entity writes"): how a shard asks the app's functions to do something
//! durable, exactly once, and writes fields of the app's data back.
//!
//! **Keyed calls.** [`Shard::calls`](crate::Shard::calls) returns every
//! [`Call`] the shard still waits for, after every tick; the host runs each
//! new key once (the function, a compute module's invoke export, runs in
//! its own transaction, which also stores the key and the result) and skips
//! keys in flight. The answer comes to
//! [`Shard::on_call_result`](crate::Shard::on_call_result), once per key
//! per shard run, before the next tick's inputs. The same key with the same
//! args returns the stored result without running again (even after a
//! crash); the same key with other args is refused with `KEY_REUSED`.
//!
//! The loot pattern: keep the pending calls in the shard's state (and in
//! what [`Shard::save`](crate::Shard::save) saves), return all of them from
//! `calls()`, apply the effect only in `on_call_result` and drop the call
//! there, and make keys unique for good (e.g. `"loot:<shard>:<tick>:<n>"`).
//! After a restore, `calls()` returns the restored calls again and the host
//! answers them from the stored results.
//!
//! **Entity writes.** [`Shard::writes`](crate::Shard::writes) returns the
//! rows to change, taken after every tick (drain a list you fill during the
//! tick). The host keeps the latest value per row and field and writes them
//! in one transaction every flush interval (2 s by default) and when the
//! shard stops; a write the data refuses (no such row, a bad value) is
//! logged on the server, never silently dropped while the shard lives.
//!
//! Limits (`include/tessera/abi.h`; the host refuses and logs beyond them):
//! keys 1 to 128 bytes, function names up to 256, args up to 64 KiB of
//! JSON, 1,024 calls in flight per shard, 4,096 rows written per tick.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// One keyed call of a function of the app.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Call {
    /// Unique for good: the host stores the result under it (1 to 128
    /// bytes).
    pub key: String,
    /// `"module.export"`, or a bare export name when exactly one module has
    /// an invoke trigger with it.
    pub function: String,
    /// The function's params (any JSON; `Value::Null` for none).
    pub args: Value,
}

impl Call {
    /// A call of `function` under `key` with `args`.
    pub fn new(key: impl Into<String>, function: impl Into<String>, args: Value) -> Call {
        Call { key: key.into(), function: function.into(), args }
    }
}

/// Field values to write to one row of the app's data.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Write {
    /// The entity type (`"Character"`).
    pub entity: String,
    /// The row's id.
    pub id: String,
    /// The fields to set and their values.
    pub set: Map<String, Value>,
}

impl Write {
    /// A write to row `id` of `entity` that sets nothing yet; add fields
    /// with [`field`](Write::field).
    pub fn new(entity: impl Into<String>, id: impl Into<String>) -> Write {
        Write { entity: entity.into(), id: id.into(), set: Map::new() }
    }

    /// Also sets `name` to `value` (a later value for the same name wins).
    pub fn field(mut self, name: impl Into<String>, value: impl Into<Value>) -> Write {
        self.set.insert(name.into(), value.into());
        self
    }
}

/// The argument of `tessera_on_call_result`: `{"key", "ok": true,
/// "result"}` or `{"key", "ok": false, "error": "CODE: message"}`.
#[derive(Deserialize)]
struct CallResultArg {
    key: String,
    ok: bool,
    #[serde(default)]
    result: Value,
    #[serde(default)]
    error: String,
}

/// Reads the `tessera_on_call_result` argument.
pub(crate) fn decode_call_result(bytes: &[u8]) -> Result<(String, Result<Value, String>), String> {
    let arg: CallResultArg = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
    let result = if arg.ok { Ok(arg.result) } else { Err(arg.error) };
    Ok((arg.key, result))
}

/// The `tessera_calls` / `tessera_writes` output: a JSON array.
pub(crate) fn encode_json<T: Serialize>(items: &[T], out: &mut Vec<u8>) {
    if let Err(e) = serde_json::to_writer(&mut *out, items) {
        // Only a map with non-string keys fails, which Call and Write
        // cannot hold.
        panic!("cannot encode as JSON: {}", e);
    }
}
