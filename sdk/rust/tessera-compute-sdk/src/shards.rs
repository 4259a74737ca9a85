//! The app's shards (the `json` feature): one function per operation of
//! the `shards` host function (`docs/compute-abi.md` "Shards").
//!
//! A shard is a JSON object `{"id", "kind", "status", "tick",
//! "subscribers", "machine", "stopReason"?, "error"?}`. [`send`] and
//! [`publish`] take effect only once the entry call's transaction commits:
//! a call that fails sends nothing.
//!
//! ```ignore
//! use tessera_compute_sdk::{json::json, shards};
//!
//! // A join function: create the arena if missing, mint a ticket.
//! if shards::get("arena-1")?.is_none() {
//!     shards::create("arena", "arena-1", &json!({"map": "dunes"}), None)?;
//! }
//! let ticket = shards::ticket("arena-1", &user, &json!({"team": "red"}), 600)?;
//! ```
//!
//! Errors are [`HostError`]s whose `code` is the host's: `SHARD_NOT_FOUND`,
//! `SHARD_EXISTS`, `SHARD_KIND_UNKNOWN`, `SHARD_BAD_PARAMS`,
//! `SHARD_MACHINE_UNKNOWN`, `SHARD_LIMIT`, `SHARD_TRANSFER_REFUSED`,
//! `SHARD_TRANSFER_BUSY`, `SHARD_TRANSFER_UNSUPPORTED`,
//! `SHARD_TRANSFER_NO_PLAYER`, `SHARD_TRANSFER_FAILED`, `BAD_REQUEST`,
//! `UNAVAILABLE`, `too_large`.

use serde_json::{Map, Value};

use crate::abi::shards_op;
use crate::data::{bad_reply, member, non_null, object, parse_reply};
use crate::HostError;

/// Starts shard `id` of `kind` with `params` (any JSON, given to the kind's
/// init; `Value::Null` for none) on `machine` (`None`: the host picks) and
/// returns the shard. `SHARD_EXISTS` when `id` runs already.
pub fn create(kind: &str, id: &str, params: &Value, machine: Option<&str>) -> Result<Value, HostError> {
    let mut req = Map::new();
    req.insert("kind".into(), kind.into());
    req.insert("id".into(), id.into());
    if !params.is_null() {
        req.insert("params".into(), params.clone());
    }
    if let Some(machine) = machine {
        req.insert("machine".into(), machine.into());
    }
    match call(shards_op::CREATE, req)? {
        shard @ Value::Object(_) => Ok(shard),
        other => Err(bad_reply(&format!("not a shard: {}", other))),
    }
}

/// Shard `id`, or `None` when there is none.
pub fn get(id: &str) -> Result<Option<Value>, HostError> {
    let mut req = Map::new();
    req.insert("id".into(), id.into());
    Ok(non_null(member(call(shards_op::GET, req)?, "shard")))
}

/// The app's shards, of `kind` only unless it is `None`.
pub fn list(kind: Option<&str>) -> Result<Vec<Value>, HostError> {
    let mut req = Map::new();
    if let Some(kind) = kind {
        req.insert("kind".into(), kind.into());
    }
    match member(call(shards_op::LIST, req)?, "shards") {
        Value::Array(shards) => Ok(shards),
        Value::Null => Ok(Vec::new()),
        other => Err(bad_reply(&format!("\"shards\" is not an array: {}", other))),
    }
}

/// A join ticket for player `subscriber` to shard `id`, carrying `claims`
/// (a JSON object the shard sees on join), valid for `ttl_secs`.
pub fn ticket(id: &str, subscriber: &str, claims: &Value, ttl_secs: u32) -> Result<String, HostError> {
    let mut req = Map::new();
    req.insert("id".into(), id.into());
    req.insert("subscriber".into(), subscriber.into());
    req.insert("claims".into(), object("claims", claims)?);
    req.insert("ttlSecs".into(), ttl_secs.into());
    match member(call(shards_op::TICKET, req)?, "ticket") {
        Value::String(t) => Ok(t),
        other => Err(bad_reply(&format!("\"ticket\" is not a string: {}", other))),
    }
}

/// Sends `input` (any JSON, converted to the kind's codec) to shard `id`:
/// it arrives in `apply_input` with an empty subscriber id, which no
/// connection can have, so the shard can trust it. Delivered after this
/// entry call's transaction commits.
pub fn send(id: &str, input: &Value) -> Result<(), HostError> {
    let mut req = Map::new();
    req.insert("id".into(), id.into());
    req.insert("input".into(), input.clone());
    call(shards_op::SEND, req).map(|_| ())
}

/// Publishes message `topic` with `data` to `target`: `"shard:<id>"`,
/// `"group:<name>"` or `"all"`; shards get it in `on_messages` with `from`
/// `""`. After this entry call's transaction commits.
pub fn publish(target: &str, topic: &str, data: &str) -> Result<(), HostError> {
    let mut req = Map::new();
    req.insert("target".into(), target.into());
    req.insert("topic".into(), topic.into());
    req.insert("data".into(), data.into());
    call(shards_op::PUBLISH, req).map(|_| ())
}

/// Moves player `subscriber` from shard `from` to shard `to`, with `claims`
/// (a JSON object) for the target's `transfer_in`.
pub fn transfer(from: &str, subscriber: &str, to: &str, claims: &Value) -> Result<(), HostError> {
    let mut req = Map::new();
    req.insert("from".into(), from.into());
    req.insert("subscriber".into(), subscriber.into());
    req.insert("to".into(), to.into());
    req.insert("claims".into(), object("claims", claims)?);
    call(shards_op::TRANSFER, req).map(|_| ())
}

/// Stops shard `id`.
pub fn stop(id: &str) -> Result<(), HostError> {
    let mut req = Map::new();
    req.insert("id".into(), id.into());
    call(shards_op::STOP, req).map(|_| ())
}

fn call(op: &str, request: Map<String, Value>) -> Result<Value, HostError> {
    let text = crate::shards_call(op, &Value::Object(request).to_string())?;
    parse_reply(&text)
}
