//! The app's data (the `json` feature): the entity types of `tessera.json`'s
//! `"data"`, one function per operation of the `data` host function
//! (`docs/compute-abi.md` "The app's data").
//!
//! A row is a JSON object `{"id", "createdAt", "updatedAt", "version",
//! ...fields}`. Every data operation of one entry call (init, tick, event
//! or invoke) runs in one transaction the host opens for the call: they
//! all commit when the entry succeeds, and none of them does when it
//! returns an `Err`, panics, runs out of fuel or hits the watchdog.
//!
//! ```ignore
//! use tessera_compute_sdk::{data, json::json};
//!
//! let row = data::insert("Item", None, &json!({"owner": "p1", "kind": "sword"}))?;
//! let id = row["id"].as_str().unwrap_or_default().to_string();
//! data::update("Item", &id, &json!({"kind": "axe"}))?;
//! let page = data::list("Item", &json!({"owner": "p1"}), "", 100)?;
//! ```
//!
//! Errors are [`HostError`]s whose `code` is the host's: `UNKNOWN_TYPE`,
//! `UNKNOWN_FIELD`, `BAD_VALUE`, `BAD_FILTER`, `NO_INDEX`, `ROW_NOT_FOUND`,
//! `ROW_EXISTS`, `UNIQUE_VIOLATION`, `UNAVAILABLE`, `data_ops` (over the
//! policy's `maxDbOpsPerTick` in this call), `too_large`; `BAD_REQUEST` is
//! this crate refusing an argument (a filter or field set that is not a
//! JSON object) before asking the host.

use serde_json::{Map, Value};

use crate::abi::data_op;
use crate::HostError;

/// One page of [`list`]: rows ordered by id, and where the next page
/// starts.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Page {
    /// The rows of this page.
    pub rows: Vec<Value>,
    /// Pass it to the next [`list`] call for the following page; `""` when
    /// there are no more rows.
    pub next_cursor: String,
}

/// Row `id` of entity type `entity`, or `None` when there is none.
pub fn get(entity: &str, id: &str) -> Result<Option<Value>, HostError> {
    let mut req = Map::new();
    req.insert("type".into(), entity.into());
    req.insert("id".into(), id.into());
    Ok(non_null(member(call(data_op::GET, req)?, "row")))
}

/// The row of `entity` whose indexed `field` equals `value`, or `None`.
/// `NO_INDEX` when the field has no index.
pub fn lookup(entity: &str, field: &str, value: &Value) -> Result<Option<Value>, HostError> {
    let mut req = Map::new();
    req.insert("type".into(), entity.into());
    req.insert("field".into(), field.into());
    req.insert("value".into(), value.clone());
    Ok(non_null(member(call(data_op::LOOKUP, req)?, "row")))
}

/// Up to `limit` rows of `entity` matching `filter` (a JSON object:
/// `{"hp": 3}`, `{"hp": {"gt": 3, "le": 10}}`, `{"name": {"in": ["a",
/// "b"]}}`, `{"x": null}`; `{}` matches every row), starting after
/// `cursor` (`""`: from the start; else a previous [`Page::next_cursor`]).
pub fn list(entity: &str, filter: &Value, cursor: &str, limit: u32) -> Result<Page, HostError> {
    let mut req = Map::new();
    req.insert("type".into(), entity.into());
    req.insert("where".into(), object("filter", filter)?);
    if !cursor.is_empty() {
        req.insert("cursor".into(), cursor.into());
    }
    req.insert("limit".into(), limit.into());
    let mut reply = match call(data_op::LIST, req)? {
        Value::Object(m) => m,
        other => return Err(bad_reply(&format!("not an object: {}", other))),
    };
    let rows = match reply.remove("rows") {
        Some(Value::Array(rows)) => rows,
        None | Some(Value::Null) => Vec::new(),
        Some(other) => return Err(bad_reply(&format!("\"rows\" is not an array: {}", other))),
    };
    let next_cursor = match reply.remove("nextCursor") {
        Some(Value::String(s)) => s,
        _ => String::new(),
    };
    Ok(Page { rows, next_cursor })
}

/// How many rows of `entity` match `filter` (as in [`list`]).
pub fn count(entity: &str, filter: &Value) -> Result<u64, HostError> {
    let mut req = Map::new();
    req.insert("type".into(), entity.into());
    req.insert("where".into(), object("filter", filter)?);
    member(call(data_op::COUNT, req)?, "count")
        .as_u64()
        .ok_or_else(|| bad_reply("\"count\" is not a number"))
}

/// Inserts a row of `entity` with `fields` (a JSON object; missing fields
/// take their defaults) and returns it. `id`: `None` lets the host pick
/// one; a taken id is `ROW_EXISTS`.
pub fn insert(entity: &str, id: Option<&str>, fields: &Value) -> Result<Value, HostError> {
    let mut req = Map::new();
    req.insert("type".into(), entity.into());
    if let Some(id) = id {
        req.insert("id".into(), id.into());
    }
    req.insert("fields".into(), object("fields", fields)?);
    row(call(data_op::INSERT, req)?)
}

/// Sets the fields of `set` (a JSON object) on row `id` of `entity` and
/// returns the row as it is now. `ROW_NOT_FOUND` when there is no such row.
pub fn update(entity: &str, id: &str, set: &Value) -> Result<Value, HostError> {
    let mut req = Map::new();
    req.insert("type".into(), entity.into());
    req.insert("id".into(), id.into());
    req.insert("set".into(), object("set", set)?);
    row(call(data_op::UPDATE, req)?)
}

/// Deletes row `id` of `entity`: `true` when it existed.
pub fn delete(entity: &str, id: &str) -> Result<bool, HostError> {
    let mut req = Map::new();
    req.insert("type".into(), entity.into());
    req.insert("id".into(), id.into());
    member(call(data_op::DELETE, req)?, "deleted")
        .as_bool()
        .ok_or_else(|| bad_reply("\"deleted\" is not a boolean"))
}

fn call(op: &str, request: Map<String, Value>) -> Result<Value, HostError> {
    let text = crate::data_call(op, &Value::Object(request).to_string())?;
    parse_reply(&text)
}

fn row(reply: Value) -> Result<Value, HostError> {
    match member(reply, "row") {
        row @ Value::Object(_) => Ok(row),
        other => Err(bad_reply(&format!("\"row\" is not an object: {}", other))),
    }
}

/// The host's reply text as JSON (`Null` when it is empty).
pub(crate) fn parse_reply(text: &str) -> Result<Value, HostError> {
    if text.trim().is_empty() {
        return Ok(Value::Null);
    }
    serde_json::from_str(text).map_err(|e| bad_reply(&format!("not JSON: {}", e)))
}

/// Member `key` of an object reply (`Null` when absent).
pub(crate) fn member(mut reply: Value, key: &str) -> Value {
    match reply.as_object_mut().and_then(|m| m.remove(key)) {
        Some(v) => v,
        None => Value::Null,
    }
}

pub(crate) fn non_null(v: Value) -> Option<Value> {
    if v.is_null() {
        None
    } else {
        Some(v)
    }
}

/// `value` when it is a JSON object, else `BAD_REQUEST` naming `what`.
pub(crate) fn object(what: &str, value: &Value) -> Result<Value, HostError> {
    if value.is_object() {
        Ok(value.clone())
    } else {
        Err(HostError {
            code: "BAD_REQUEST".to_string(),
            message: format!("{} must be a JSON object, not {}", what, value),
        })
    }
}

pub(crate) fn bad_reply(what: &str) -> HostError {
    HostError { code: "BAD_REPLY".to_string(), message: format!("the host's reply: {}", what) }
}
