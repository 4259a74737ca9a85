//! Typed helpers over `serde_json` (the `json` feature):
//!
//! ```toml
//! [dependencies]
//! tessera-compute-sdk = { version = "0.1", features = ["json"] }
//! serde = { version = "1", features = ["derive"] }
//! ```
//!
//! [`InvokeInput`] and [`EventInput`] are the entry inputs the host sends;
//! [`state_get_json`] / [`state_set_json`] keep a serde value in the state
//! blob; [`emit_event_json`] and [`emit_channel_json`] send JSON payloads.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::HostError;

pub use serde_json::{json, Value};
/// The `serde_json` crate this module uses, for modules that do not name it.
pub use serde_json;

/// The input of an invoke entry: `{"export", "params", "callerUserId",
/// "callerShardId"}`.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(bound(deserialize = "P: Deserialize<'de> + Default"))]
pub struct InvokeInput<P = Value> {
    /// The invoke export called (its trigger's `exportName`).
    pub export: String,
    /// The caller's params (checked against the trigger's contract, if it
    /// has one, before the module runs); `P::default()` when absent.
    #[serde(default)]
    pub params: P,
    /// The player who called, or "" for a management caller.
    #[serde(rename = "callerUserId", default)]
    pub caller_user_id: String,
    /// The shard whose keyed call (or onStop) runs this invoke, or "".
    #[serde(rename = "callerShardId", default, deserialize_with = "null_as_empty")]
    pub caller_shard_id: String,
}

/// A string member that may also be `null` (read as "").
fn null_as_empty<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    Ok(Option::<String>::deserialize(d)?.unwrap_or_default())
}

impl<P: DeserializeOwned + Default> InvokeInput<P> {
    /// Reads an invoke entry's input. `Err` says what is wrong.
    pub fn parse(input: &[u8]) -> Result<Self, String> {
        serde_json::from_slice(input).map_err(|e| format!("invalid invoke input: {}", e))
    }
}

impl InvokeInput<Value> {
    /// The params read as `T`, for a module whose exports take different
    /// params. `Err` names the export and what does not fit.
    pub fn params_as<T: DeserializeOwned>(&self) -> Result<T, String> {
        serde_json::from_value(self.params.clone())
            .map_err(|e| format!("{}: invalid params: {}", self.export, e))
    }
}

/// The input of an event entry (`docs/compute-abi.md` "Events").
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
pub struct EventInput {
    /// The event kind: `"compute_event"` for now.
    pub event: String,
    /// The event's name (the `emit_event` name).
    pub name: String,
    /// The payload when it is JSON, else `null` (see
    /// [`payload_base64`](Self::payload_base64)).
    #[serde(default)]
    pub payload: Value,
    /// The payload in base64 when it is not JSON.
    #[serde(rename = "payloadBase64", default, skip_serializing_if = "Option::is_none")]
    pub payload_base64: Option<String>,
    /// The module that emitted it ("" when raised through the API).
    #[serde(rename = "sourceModule", default)]
    pub source_module: String,
    /// The flow id of the entry call that started the cascade.
    #[serde(rename = "flowId", default)]
    pub flow_id: String,
    /// How deep in an emit_event cascade this event is (1 = emitted by a
    /// run that no event started).
    #[serde(default)]
    pub depth: u32,
    /// With `debounceMs`: how many events the window coalesced into this
    /// one (the last of them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coalesced: Option<u32>,
}

impl EventInput {
    /// Reads an event entry's input. `Err` says what is wrong.
    pub fn parse(input: &[u8]) -> Result<Self, String> {
        serde_json::from_slice(input).map_err(|e| format!("invalid event input: {}", e))
    }

    /// The JSON payload read as `T`. `Err` names the event and what does
    /// not fit (a non-JSON payload is `null` here).
    pub fn payload_as<T: DeserializeOwned>(&self) -> Result<T, String> {
        serde_json::from_value(self.payload.clone())
            .map_err(|e| format!("{}: invalid payload: {}", self.name, e))
    }
}

/// The state blob read as JSON into `T`: `Ok(None)` when never set, `Err`
/// when it does not parse as `T` (or the host refused the read).
pub fn state_get_json<T: DeserializeOwned>() -> Result<Option<T>, String> {
    match crate::try_state_get().map_err(|e| e.to_string())? {
        None => Ok(None),
        Some(bytes) => serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|e| format!("the state blob is not the expected JSON: {}", e)),
    }
}

/// Stores `value` as JSON in the state blob ([`state_set`](crate::state_set)).
pub fn state_set_json<T: Serialize>(value: &T) -> Result<(), HostError> {
    crate::state_set(&to_bytes(value)?)
}

/// [`emit_event`](crate::emit_event) with a JSON payload.
pub fn emit_event_json<T: Serialize>(name: &str, payload: &T) -> Result<(), HostError> {
    crate::emit_event(name, &to_bytes(payload)?)
}

/// [`emit_channel`](crate::emit_channel) with a JSON payload.
pub fn emit_channel_json<T: Serialize>(channel: &str, payload: &T) -> Result<u32, HostError> {
    crate::emit_channel(channel, &to_bytes(payload)?)
}

/// `value` as JSON bytes, e.g. an invoke result.
pub fn to_bytes<T: Serialize>(value: &T) -> Result<Vec<u8>, HostError> {
    serde_json::to_vec(value)
        .map_err(|e| HostError { code: "invalid".to_string(), message: format!("not JSON: {}", e) })
}
