//! The two codecs of the guest ABI: MessagePack (`rmp-serde`) and JSON
//! (`serde_json`), chosen per instance by the codec the host passes to
//! `tessera_init` (the shard kind's `codec` in `tessera.json`).
//!
//! Encoding matches the C++ SDK byte for byte, so a Rust shard and a C++
//! shard with the same state send the same snapshots:
//! - structs are maps keyed by field name (MessagePack too), in declaration
//!   order; enums are externally tagged (`{"move_to":{"x":1,"y":2}}`);
//! - every integer, string, array and map header uses its smallest
//!   MessagePack form; `f32` is a MessagePack float32, `f64` a float64;
//! - JSON numbers are written like C's `%g` with the fewest digits that read
//!   back as the same value (at least 6 for `f32`, 15 for `f64`): `100`,
//!   `0.1`, `1e+06`; NaN and infinity become `null`.

use std::io;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::abi;

/// The encoding of params, inputs and snapshots of one shard instance.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Codec {
    /// MessagePack (codec id 0).
    MsgPack,
    /// JSON (codec id 1).
    Json,
}

impl Codec {
    /// The codec with ABI id `id`, or `None` for an unknown id.
    pub fn from_id(id: i32) -> Option<Codec> {
        match id {
            abi::CODEC_MSGPACK => Some(Codec::MsgPack),
            abi::CODEC_JSON => Some(Codec::Json),
            _ => None,
        }
    }

    /// The ABI id of this codec.
    pub fn id(self) -> i32 {
        match self {
            Codec::MsgPack => abi::CODEC_MSGPACK,
            Codec::Json => abi::CODEC_JSON,
        }
    }
}

/// Appends `value` encoded in `codec` to `out`.
///
/// Panics when serde refuses the value (for example a map whose keys are
/// not strings in JSON): that is a bug in the shard's types.
pub fn encode_into<T: Serialize + ?Sized>(codec: Codec, value: &T, out: &mut Vec<u8>) {
    let result = match codec {
        Codec::MsgPack => {
            let mut ser = rmp_serde::Serializer::new(&mut *out).with_struct_map();
            value.serialize(&mut ser).map_err(|e| e.to_string())
        }
        Codec::Json => {
            let mut ser = serde_json::Serializer::with_formatter(&mut *out, CompactG);
            value.serialize(&mut ser).map_err(|e| e.to_string())
        }
    };
    if let Err(e) = result {
        panic!("cannot encode a value: {}", e);
    }
}

/// `value` encoded in `codec`.
pub fn encode<T: Serialize + ?Sized>(codec: Codec, value: &T) -> Vec<u8> {
    let mut out = Vec::new();
    encode_into(codec, value, &mut out);
    out
}

/// Decodes exactly one value from all of `bytes`; trailing bytes are an
/// error. The error text says what serde found wrong.
///
/// Both codecs first read the bytes into a `serde_json::Value`, then decode
/// the value into `T`: each type then has one decoder, not one per codec,
/// which keeps modules small. (So MessagePack maps need string keys, and
/// binary values are not accepted.)
pub fn decode<T: DeserializeOwned>(codec: Codec, bytes: &[u8]) -> Result<T, String> {
    let value = read_value(codec, bytes)?;
    T::deserialize(value).map_err(|e| e.to_string())
}

fn read_value(codec: Codec, bytes: &[u8]) -> Result<serde_json::Value, String> {
    match codec {
        Codec::MsgPack => {
            let mut rest: &[u8] = bytes;
            let value = {
                let mut de = rmp_serde::Deserializer::new(&mut rest);
                serde_json::Value::deserialize(&mut de).map_err(|e| e.to_string())?
            };
            if !rest.is_empty() {
                return Err(format!("trailing bytes at byte {}", bytes.len() - rest.len()));
            }
            Ok(value)
        }
        Codec::Json => serde_json::from_slice(bytes).map_err(|e| e.to_string()),
    }
}

/// Decodes params: an empty buffer means "no params given" and decodes as
/// an empty map, so fields marked `#[serde(default)]` keep their defaults.
pub fn decode_params<T: DeserializeOwned>(codec: Codec, bytes: &[u8]) -> Result<T, String> {
    if !bytes.is_empty() {
        return decode(codec, bytes);
    }
    match codec {
        Codec::MsgPack => decode(codec, &[0x80]),
        Codec::Json => decode(codec, b"{}"),
    }
}

/// serde_json's compact output, with numbers written like the C++ SDK.
#[derive(Clone, Copy, Debug, Default)]
struct CompactG;

impl serde_json::ser::Formatter for CompactG {
    fn write_f32<W: ?Sized + io::Write>(&mut self, writer: &mut W, value: f32) -> io::Result<()> {
        writer.write_all(format_g(&format!("{:e}", value), 6).as_bytes())
    }
    fn write_f64<W: ?Sized + io::Write>(&mut self, writer: &mut W, value: f64) -> io::Result<()> {
        writer.write_all(format_g(&format!("{:e}", value), 15).as_bytes())
    }
}

/// Renders Rust's shortest round-trip scientific form (`-1.25e-3`) the way
/// C's `%.{P}g` does, with P the larger of `min_digits` and the number of
/// significant digits: fixed notation when -4 <= exponent < P, otherwise
/// `d.ddde+XX`; no trailing zeros.
pub(crate) fn format_g(sci: &str, min_digits: usize) -> String {
    let (negative, body) = match sci.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, sci),
    };
    let (mantissa, exponent) = body.split_once('e').unwrap_or((body, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let digits = digits.trim_end_matches('0');
    let digits = if digits.is_empty() { "0" } else { digits };
    let precision = digits.len().max(min_digits) as i32;
    let mut out = String::with_capacity(24);
    if negative {
        out.push('-');
    }
    if digits == "0" {
        out.push('0');
    } else if exponent >= -4 && exponent < precision {
        if exponent >= 0 {
            let int_len = exponent as usize + 1;
            if digits.len() <= int_len {
                out.push_str(digits);
                out.extend(std::iter::repeat('0').take(int_len - digits.len()));
            } else {
                out.push_str(&digits[..int_len]);
                out.push('.');
                out.push_str(&digits[int_len..]);
            }
        } else {
            out.push_str("0.");
            out.extend(std::iter::repeat('0').take((-exponent - 1) as usize));
            out.push_str(digits);
        }
    } else {
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        out.push('e');
        out.push(if exponent < 0 { '-' } else { '+' });
        let magnitude = exponent.unsigned_abs();
        if magnitude < 10 {
            out.push('0');
        }
        out.push_str(&magnitude.to_string());
    }
    out
}
