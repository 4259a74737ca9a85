//! The fake host's answers to `data` and `shards` calls (native builds
//! with the `json` feature): an in-memory store with the real host's
//! request and reply shapes and error codes (`testing` lists what differs).

use std::cmp::Ordering;

use serde_json::{json, Map, Value};

use crate::abi;
use crate::testing::FakeHost;

/// (ABI code, last_error code, message).
type Failure = (i32, String, String);

fn data_error(code: &str, message: String) -> Failure {
    (abi::ERR_DATA, code.to_string(), message)
}

fn shards_error(code: &str, message: String) -> Failure {
    (abi::ERR_SHARDS, code.to_string(), message)
}

/// The reply JSON of `function` op `op`, or why it is refused.
pub(crate) fn answer(h: &mut FakeHost, function: &str, op: &str, request: &str) -> Result<String, Failure> {
    let refuse = if function == "data" { data_error } else { shards_error };
    let req = match serde_json::from_str::<Value>(request) {
        Ok(Value::Object(m)) => m,
        Ok(_) => return Err(refuse("BAD_REQUEST", "the request is not a JSON object".to_string())),
        Err(e) => return Err(refuse("BAD_REQUEST", format!("the request is not JSON: {}", e))),
    };
    let reply = if function == "data" { data(h, op, &req)? } else { shards(h, op, &req)? };
    Ok(reply.to_string())
}

fn text<'a>(req: &'a Map<String, Value>, key: &str, refuse: fn(&str, String) -> Failure) -> Result<&'a str, Failure> {
    match req.get(key) {
        Some(Value::String(s)) if !s.is_empty() => Ok(s),
        _ => Err(refuse("BAD_REQUEST", format!("\"{}\" must be a non-empty string", key))),
    }
}

fn object_or_empty(req: &Map<String, Value>, key: &str, refuse: fn(&str, String) -> Failure) -> Result<Map<String, Value>, Failure> {
    match req.get(key) {
        None => Ok(Map::new()),
        Some(Value::Object(m)) => Ok(m.clone()),
        Some(_) => Err(refuse("BAD_REQUEST", format!("\"{}\" must be an object", key))),
    }
}

fn data(h: &mut FakeHost, op: &str, req: &Map<String, Value>) -> Result<Value, Failure> {
    let ty = text(req, "type", data_error)?.to_string();
    if !h.entity_types.is_empty() && !h.entity_types.contains(&ty) {
        return Err(data_error("UNKNOWN_TYPE", format!("no entity type {}", ty)));
    }
    let now = h.now_ms;
    match op {
        abi::data_op::GET => {
            let id = text(req, "id", data_error)?;
            let row = h.rows.get(&ty).and_then(|t| t.get(id)).cloned();
            Ok(json!({ "row": row }))
        }
        abi::data_op::LOOKUP => {
            let field = text(req, "field", data_error)?;
            let value = req.get("value").cloned().unwrap_or(Value::Null);
            let row = h
                .rows
                .get(&ty)
                .and_then(|t| t.values().find(|r| r.get(field) == Some(&value)))
                .cloned();
            Ok(json!({ "row": row }))
        }
        abi::data_op::LIST | abi::data_op::COUNT => {
            let filter = object_or_empty(req, "where", data_error)?;
            let cursor = req.get("cursor").and_then(Value::as_str).unwrap_or("").to_string();
            let limit = req.get("limit").and_then(Value::as_u64).unwrap_or(100);
            if op == abi::data_op::LIST && !(1..=1000).contains(&limit) {
                return Err(data_error("BAD_REQUEST", format!("limit {} is not 1..1000", limit)));
            }
            let mut rows = Vec::new();
            if let Some(table) = h.rows.get(&ty) {
                for (id, row) in table {
                    if op == abi::data_op::LIST && !cursor.is_empty() && id.as_str() <= cursor.as_str() {
                        continue;
                    }
                    if matches(row, &filter)? {
                        rows.push(row.clone());
                    }
                }
            }
            if op == abi::data_op::COUNT {
                return Ok(json!({ "count": rows.len() }));
            }
            let more = rows.len() as u64 > limit;
            rows.truncate(limit as usize);
            let next = if more { rows.last().and_then(|r| r["id"].as_str()).unwrap_or("").to_string() } else { String::new() };
            Ok(json!({ "rows": rows, "nextCursor": next }))
        }
        abi::data_op::INSERT => {
            let fields = match req.get("fields") {
                Some(Value::Object(m)) => m.clone(),
                _ => return Err(data_error("BAD_REQUEST", "\"fields\" must be an object".to_string())),
            };
            let id = match req.get("id") {
                None => {
                    h.next_row_id += 1;
                    format!("row-{}", h.next_row_id)
                }
                Some(_) => text(req, "id", data_error)?.to_string(),
            };
            let table = h.rows.entry(ty.clone()).or_default();
            if table.contains_key(&id) {
                return Err(data_error("ROW_EXISTS", format!("{} {} exists already", ty, id)));
            }
            let mut row = fields;
            row.insert("id".into(), id.clone().into());
            row.insert("createdAt".into(), now.into());
            row.insert("updatedAt".into(), now.into());
            row.insert("version".into(), 1.into());
            let row = Value::Object(row);
            table.insert(id, row.clone());
            Ok(json!({ "row": row }))
        }
        abi::data_op::UPDATE => {
            let id = text(req, "id", data_error)?;
            let set = match req.get("set") {
                Some(Value::Object(m)) => m.clone(),
                _ => return Err(data_error("BAD_REQUEST", "\"set\" must be an object".to_string())),
            };
            let row = match h.rows.get_mut(&ty).and_then(|t| t.get_mut(id)) {
                Some(Value::Object(row)) => row,
                _ => return Err(data_error("ROW_NOT_FOUND", format!("no {} {}", ty, id))),
            };
            for (k, v) in set {
                if matches!(k.as_str(), "id" | "createdAt" | "updatedAt" | "version") {
                    return Err(data_error("UNKNOWN_FIELD", format!("{} cannot be set", k)));
                }
                row.insert(k, v);
            }
            let version = row.get("version").and_then(Value::as_i64).unwrap_or(0) + 1;
            row.insert("version".into(), version.into());
            row.insert("updatedAt".into(), now.into());
            Ok(json!({ "row": Value::Object(row.clone()) }))
        }
        abi::data_op::DELETE => {
            let id = text(req, "id", data_error)?;
            let deleted = h.rows.get_mut(&ty).map(|t| t.remove(id).is_some()).unwrap_or(false);
            Ok(json!({ "deleted": deleted }))
        }
        _ => Err(data_error("BAD_REQUEST", format!("no data op {}", op))),
    }
}

/// The filter semantics of `docs/data.md`: equality, `null`, and
/// `{eq, ne, lt, le, gt, ge, in}` objects, all conditions together.
fn matches(row: &Value, filter: &Map<String, Value>) -> Result<bool, Failure> {
    for (field, cond) in filter {
        let value = row.get(field).unwrap_or(&Value::Null);
        let ok = match cond {
            Value::Null => value.is_null(),
            Value::Object(ops) => {
                let mut all = true;
                for (op, arg) in ops {
                    let hit = match op.as_str() {
                        "eq" => value == arg,
                        "ne" => value != arg,
                        "lt" => compare(value, arg) == Some(Ordering::Less),
                        "le" => matches!(compare(value, arg), Some(Ordering::Less | Ordering::Equal)),
                        "gt" => compare(value, arg) == Some(Ordering::Greater),
                        "ge" => matches!(compare(value, arg), Some(Ordering::Greater | Ordering::Equal)),
                        "in" => match arg {
                            Value::Array(values) => values.contains(value),
                            _ => return Err(data_error("BAD_FILTER", format!("{}: \"in\" takes an array", field))),
                        },
                        _ => return Err(data_error("BAD_FILTER", format!("{}: no operator {}", field, op))),
                    };
                    all = all && hit;
                }
                all
            }
            other => value == other,
        };
        if !ok {
            return Ok(false);
        }
    }
    Ok(true)
}

fn compare(a: &Value, b: &Value) -> Option<Ordering> {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64()?.partial_cmp(&y.as_f64()?),
        (Value::String(x), Value::String(y)) => Some(x.as_bytes().cmp(y.as_bytes())),
        _ => None,
    }
}

fn shard_ref<'a>(h: &'a FakeHost, req: &Map<String, Value>, key: &str) -> Result<&'a Value, Failure> {
    let id = text(req, key, shards_error)?;
    h.shards.get(id).ok_or_else(|| shards_error("SHARD_NOT_FOUND", format!("no shard {}", id)))
}

fn shards(h: &mut FakeHost, op: &str, req: &Map<String, Value>) -> Result<Value, Failure> {
    match op {
        abi::shards_op::CREATE => {
            let kind = text(req, "kind", shards_error)?;
            let id = text(req, "id", shards_error)?;
            if !h.shard_kinds.is_empty() && !h.shard_kinds.iter().any(|k| k == kind) {
                return Err(shards_error("SHARD_KIND_UNKNOWN", format!("no shard kind {}", kind)));
            }
            if h.shards.contains_key(id) {
                return Err(shards_error("SHARD_EXISTS", format!("shard {} runs already", id)));
            }
            let machine = req.get("machine").and_then(Value::as_str).unwrap_or("local");
            let shard = json!({"id": id, "kind": kind, "status": "running", "tick": 0,
                               "subscribers": 0, "machine": machine});
            h.shards.insert(id.to_string(), shard.clone());
            Ok(shard)
        }
        abi::shards_op::GET => {
            let id = text(req, "id", shards_error)?;
            Ok(json!({ "shard": h.shards.get(id) }))
        }
        abi::shards_op::LIST => {
            let kind = req.get("kind").and_then(Value::as_str);
            let shards: Vec<&Value> =
                h.shards.values().filter(|s| kind.map_or(true, |k| s["kind"] == k)).collect();
            Ok(json!({ "shards": shards }))
        }
        abi::shards_op::TICKET => {
            let id = shard_ref(h, req, "id")?["id"].clone();
            let subscriber = text(req, "subscriber", shards_error)?;
            object_or_empty(req, "claims", shards_error)?;
            Ok(json!({ "ticket": format!("fake-ticket:{}:{}", id.as_str().unwrap_or(""), subscriber) }))
        }
        abi::shards_op::SEND => {
            shard_ref(h, req, "id")?;
            let id = text(req, "id", shards_error)?.to_string();
            let input = req.get("input").cloned().unwrap_or(Value::Null);
            h.sent.push((id, input));
            Ok(json!({}))
        }
        abi::shards_op::PUBLISH => {
            let target = text(req, "target", shards_error)?.to_string();
            let topic = text(req, "topic", shards_error)?.to_string();
            let data = req.get("data").and_then(Value::as_str).unwrap_or("").to_string();
            if let Some(id) = target.strip_prefix("shard:") {
                if !h.shards.contains_key(id) {
                    return Err(shards_error("SHARD_NOT_FOUND", format!("no shard {}", id)));
                }
            } else if target != "all" && !target.starts_with("group:") {
                return Err(shards_error("BAD_REQUEST", format!("bad target {}", target)));
            }
            h.published.push((target, topic, data));
            Ok(json!({}))
        }
        abi::shards_op::TRANSFER => {
            shard_ref(h, req, "from")?;
            shard_ref(h, req, "to")?;
            let from = text(req, "from", shards_error)?.to_string();
            let to = text(req, "to", shards_error)?.to_string();
            let subscriber = text(req, "subscriber", shards_error)?.to_string();
            let claims = Value::Object(object_or_empty(req, "claims", shards_error)?);
            h.transfers.push((from, subscriber, to, claims));
            Ok(json!({}))
        }
        abi::shards_op::STOP => {
            shard_ref(h, req, "id")?;
            let id = text(req, "id", shards_error)?;
            h.shards.remove(id);
            Ok(json!({}))
        }
        _ => Err(shards_error("BAD_REQUEST", format!("no shards op {}", op))),
    }
}
