//! Moving a player to another shard (docs/guest-abi.md, "Transfers and
//! messages"): the source's [`Shard::transfer_out`](crate::Shard::transfer_out)
//! hands over the player's state as bytes and forgets the player, the
//! target's [`Shard::transfer_in`](crate::Shard::transfer_in) takes them with
//! an [`Auth`] saying who moves and with which ticket claims. When the target
//! refuses (or is not running), the source's `transfer_in` gets the same
//! bytes back with `returning = true` and must take its player back.

use std::ops::Range;

use serde::de::{DeserializeOwned, IgnoredAny};
use serde::Serialize;

use crate::codec::{self, Codec};

/// `value` as MessagePack (structs as maps), the transfer state the C++
/// SDK writes for an encoded state type: return it from
/// [`Shard::transfer_out`](crate::Shard::transfer_out).
pub fn encode_state<T: Serialize + ?Sized>(value: &T) -> Vec<u8> {
    codec::encode(Codec::MsgPack, value)
}

/// Decodes what [`encode_state`] wrote, in
/// [`Shard::transfer_in`](crate::Shard::transfer_in); the error reads
/// `invalid transfer state: ...`.
pub fn decode_state<T: DeserializeOwned>(state: &[u8]) -> Result<T, String> {
    codec::decode(Codec::MsgPack, state).map_err(|e| format!("invalid transfer state: {}", e))
}

/// The moving player and the claims of its ticket for this shard.
///
/// For a move the module started ([`Shard::transfer_requests`](crate::Shard::transfer_requests))
/// the claims are those of the player's connection; for a move the admin API
/// started, those the request gave.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Auth {
    subscriber: String,
    claims_json: String,
    from_shard: String,
    claims: Vec<(String, Range<usize>)>, // name, value's text in claims_json
}

impl Auth {
    /// An `Auth` for `subscriber` with the claims in `claims_json` (a JSON
    /// object; anything else counts as no claims), coming from shard
    /// `from_shard`. The SDK builds it from what the host passes; shard
    /// tests can build their own.
    pub fn new(subscriber: &str, claims_json: &str, from_shard: &str) -> Auth {
        let claims = object_members(claims_json).unwrap_or_default();
        Auth {
            subscriber: subscriber.to_string(),
            claims_json: claims_json.to_string(),
            from_shard: from_shard.to_string(),
            claims,
        }
    }

    /// The moving player's subscriber id (as in `apply_input`).
    pub fn subscriber(&self) -> &str {
        &self.subscriber
    }

    /// The value of claim `name`: a JSON string as its text (`"north"` gives
    /// `north`), any other JSON value as compact JSON text (`3`, `true`,
    /// `{"a":1}`, in the order written). `None` when the claim is absent or
    /// the claims are not a JSON object.
    pub fn claim(&self, name: &str) -> Option<String> {
        let (_, at) = self.claims.iter().rev().find(|(n, _)| n == name)?;
        let raw = &self.claims_json[at.clone()];
        if raw.starts_with('"') {
            return serde_json::from_slice::<String>(raw.as_bytes()).ok();
        }
        Some(compact_json(raw))
    }

    /// All claims as the JSON object text the host passed.
    pub fn claims_json(&self) -> &str {
        &self.claims_json
    }

    /// The shard the player comes from; for a returning player, the shard
    /// that refused it.
    pub fn from_shard(&self) -> &str {
        &self.from_shard
    }
}

fn skip_space(json: &[u8], mut pos: usize) -> usize {
    while pos < json.len() && matches!(json[pos], b' ' | b'\t' | b'\n' | b'\r') {
        pos += 1;
    }
    pos
}

/// The end of the JSON value starting at `pos` of valid JSON text `json`.
fn value_end(json: &[u8], pos: usize) -> usize {
    let (mut depth, mut in_string) = (0usize, false);
    let mut i = pos;
    while i < json.len() {
        let c = json[i];
        if in_string {
            if c == b'\\' {
                i += 1;
            } else if c == b'"' {
                in_string = false;
                if depth == 0 {
                    return i + 1;
                }
            }
        } else {
            match c {
                b'"' => in_string = true,
                b'{' | b'[' => depth += 1,
                b'}' | b']' => {
                    if depth == 0 {
                        return i;
                    }
                    depth -= 1;
                    if depth == 0 {
                        return i + 1;
                    }
                }
                b',' | b' ' | b'\t' | b'\n' | b'\r' | b':' if depth == 0 => return i,
                _ => {}
            }
        }
        i += 1;
    }
    json.len()
}

/// The top-level members of the JSON object `json`: each name and where its
/// value's text is. `None` unless `json` is valid JSON and an object.
fn object_members(json: &str) -> Option<Vec<(String, Range<usize>)>> {
    let bytes = json.as_bytes();
    serde_json::from_slice::<IgnoredAny>(bytes).ok()?;
    let mut pos = skip_space(bytes, 0);
    if bytes.get(pos) != Some(&b'{') {
        return None;
    }
    pos += 1;
    let mut members = Vec::new();
    loop {
        pos = skip_space(bytes, pos);
        match bytes.get(pos) {
            None | Some(b'}') => return Some(members),
            Some(b',') => pos = skip_space(bytes, pos + 1),
            _ => {}
        }
        let key_end = value_end(bytes, pos);
        let name = serde_json::from_slice::<String>(&bytes[pos..key_end]).ok()?;
        pos = skip_space(bytes, skip_space(bytes, key_end) + 1); // past ':'
        let end = value_end(bytes, pos);
        members.push((name, pos..end));
        pos = end;
    }
}

/// `json` (valid JSON text) without the whitespace between tokens.
fn compact_json(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    let (mut in_string, mut escaped) = (false, false);
    for c in json.chars() {
        if in_string {
            out.push(c);
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
        } else if c == '"' {
            in_string = true;
            out.push(c);
        } else if !matches!(c, ' ' | '\t' | '\n' | '\r') {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claims_read_as_text_or_compact_json() {
        let auth = Auth::new(
            "p1",
            r#"{"party":"north","level":3,"ok":true,"tags":[ "a b", "c\"d" ],"o":{"z":1, "a":null},"esc":"a\u00e9\n"}"#,
            "zone-0",
        );
        assert_eq!(auth.subscriber(), "p1");
        assert_eq!(auth.from_shard(), "zone-0");
        assert_eq!(auth.claim("party").as_deref(), Some("north"));
        assert_eq!(auth.claim("level").as_deref(), Some("3"));
        assert_eq!(auth.claim("ok").as_deref(), Some("true"));
        assert_eq!(auth.claim("tags").as_deref(), Some(r#"["a b","c\"d"]"#));
        assert_eq!(auth.claim("o").as_deref(), Some(r#"{"z":1,"a":null}"#));
        assert_eq!(auth.claim("esc").as_deref(), Some("a\u{e9}\n"));
        assert_eq!(auth.claim("missing"), None);
        assert!(auth.claims_json().starts_with(r#"{"party""#));
    }

    #[test]
    fn a_repeated_claim_counts_its_last_value() {
        assert_eq!(Auth::new("p", r#"{"a":1,"a":[2, 3]}"#, "s").claim("a").as_deref(), Some("[2,3]"));
    }

    #[test]
    fn members_are_found_whatever_the_spacing() {
        let text = " {\n \"a\" :\t-1.5e3 ,\"b\":\"x,}\\\"y\", \"c\" : [ {\"d\":\"]\"} ] , \"e\":{} } ";
        let auth = Auth::new("p", text, "s");
        assert_eq!(auth.claim("a").as_deref(), Some("-1.5e3"));
        assert_eq!(auth.claim("b").as_deref(), Some("x,}\"y"));
        assert_eq!(auth.claim("c").as_deref(), Some(r#"[{"d":"]"}]"#));
        assert_eq!(auth.claim("e").as_deref(), Some("{}"));
        assert_eq!(Auth::new("p", "{}", "s").claim("a"), None);
        assert_eq!(Auth::new("p", r#"{"\u0061":true}"#, "s").claim("a").as_deref(), Some("true"));
    }

    #[test]
    fn states_round_trip_as_msgpack_maps() {
        #[derive(serde::Serialize, serde::Deserialize, Debug, PartialEq)]
        struct Moving {
            n: i64,
        }
        let bytes = encode_state(&Moving { n: 5 });
        assert_eq!(bytes, [0x81, 0xa1, b'n', 0x05]);
        assert_eq!(decode_state::<Moving>(&bytes), Ok(Moving { n: 5 }));
        assert!(decode_state::<Moving>(&[0x81]).unwrap_err().starts_with("invalid transfer state: "));
    }

    #[test]
    fn claims_that_are_not_an_object_are_no_claims() {
        for text in ["", "[1]", "\"party\"", "{\"party\":", "null"] {
            let auth = Auth::new("p", text, "s");
            assert_eq!(auth.claim("party"), None, "{}", text);
            assert_eq!(auth.claims_json(), text);
        }
    }
}
