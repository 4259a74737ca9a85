//! The codecs write what the C++ SDK writes (sdk/cpp/tests/sdk_codec_test.cc
//! checks the same shapes there) and read what clients send.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use tessera_shard_guest::codec::{decode, decode_params, encode};
use tessera_shard_guest::Codec;

#[derive(Serialize, Deserialize, Debug, PartialEq)]
struct Player {
    id: String,
    x: f32,
    y: f32,
}

#[derive(Serialize)]
struct Mixed {
    n: i64,
    u: u64,
    d: f64,
    b: bool,
    o: Option<u8>,
    v: Vec<i32>,
    m: BTreeMap<String, u8>,
}

#[derive(Deserialize, Debug, PartialEq)]
#[serde(rename_all = "snake_case")]
enum Input {
    MoveTo { x: f32, y: f32 },
    Say(String),
}

#[derive(Deserialize, Debug, PartialEq)]
struct Params {
    #[serde(default = "default_width")]
    width: f32,
    #[serde(default)]
    replicate: bool,
}
fn default_width() -> f32 {
    800.0
}

#[test]
fn msgpack_structs_are_maps_with_the_smallest_headers() {
    let p = Player { id: "alice".into(), x: 100.0, y: 80.5 };
    let mut want = vec![0x83, 0xa2, b'i', b'd', 0xa5];
    want.extend_from_slice(b"alice");
    want.extend_from_slice(&[0xa1, b'x', 0xca]);
    want.extend_from_slice(&100.0f32.to_be_bytes());
    want.extend_from_slice(&[0xa1, b'y', 0xca]);
    want.extend_from_slice(&80.5f32.to_be_bytes());
    assert_eq!(encode(Codec::MsgPack, &p), want);
}

#[test]
fn msgpack_integers_pick_the_smallest_form() {
    let cases: Vec<(i64, Vec<u8>)> = vec![
        (0, vec![0x00]),
        (127, vec![0x7f]),
        (128, vec![0xcc, 0x80]),
        (300, vec![0xcd, 0x01, 0x2c]),
        (-1, vec![0xff]),
        (-32, vec![0xe0]),
        (-33, vec![0xd0, 0xdf]),
        (-200, vec![0xd1, 0xff, 0x38]),
        (70000, vec![0xce, 0x00, 0x01, 0x11, 0x70]),
    ];
    for (v, want) in cases {
        assert_eq!(encode(Codec::MsgPack, &v), want, "{}", v);
    }
    let long = "x".repeat(40);
    let bytes = encode(Codec::MsgPack, &long);
    assert_eq!(&bytes[..2], &[0xd9, 40]);
    let many: Vec<u8> = vec![1; 20];
    assert_eq!(&encode(Codec::MsgPack, &many)[..3], &[0xdc, 0x00, 20]);
    assert_eq!(encode(Codec::MsgPack, &None::<u8>), vec![0xc0]);
    assert_eq!(encode(Codec::MsgPack, &1.5f64)[0], 0xcb);
}

// Expected numbers: what the C++ SDK's json::Writer writes for the same
// values (checked by compiling sdk/cpp/include/tessera/json_writer.h).
#[test]
fn json_is_compact_and_numbers_read_like_printf_g() {
    let m = Mixed {
        n: -5,
        u: 7,
        d: 0.1,
        b: true,
        o: None,
        v: vec![1, 2],
        m: [("k".to_string(), 3u8)].into_iter().collect(),
    };
    assert_eq!(
        String::from_utf8(encode(Codec::Json, &m)).unwrap(),
        r#"{"n":-5,"u":7,"d":0.1,"b":true,"o":null,"v":[1,2],"m":{"k":3}}"#
    );
    let f32s: [(f32, &str); 14] = [
        (100.0, "100"),
        (0.1, "0.1"),
        (80.5, "80.5"),
        (-0.0, "-0"),
        (0.0, "0"),
        (1e6, "1e+06"),
        (123456.0, "123456"),
        (1234567.0, "1234567"),
        (0.0001, "0.0001"),
        (0.00001, "1e-05"),
        (1.0 / 3.0, "0.33333334"),
        (3.4e38, "3.4e+38"),
        (1e-7, "1e-07"),
        (12345.678, "12345.678"),
    ];
    for (v, want) in f32s {
        assert_eq!(String::from_utf8(encode(Codec::Json, &v)).unwrap(), want, "{}", v);
    }
    let f64s: [(f64, &str); 7] = [
        (0.1, "0.1"),
        (1.0 / 3.0, "0.3333333333333333"),
        (1e21, "1e+21"),
        (123456789012345.0, "123456789012345"),
        (1e15, "1e+15"),
        (1e16, "1e+16"),
        (0.1 + 0.2, "0.30000000000000004"),
    ];
    for (v, want) in f64s {
        assert_eq!(String::from_utf8(encode(Codec::Json, &v)).unwrap(), want, "{}", v);
    }
    assert_eq!(encode(Codec::Json, &f32::NAN), b"null");
    assert_eq!(encode(Codec::Json, "a\"\\\n\u{1}"), br#""a\"\\\n\u0001""#);
}

#[test]
fn inputs_decode_externally_tagged_in_both_codecs() {
    let json = br#"{"move_to":{"x":100,"y":80.5}}"#;
    assert_eq!(decode::<Input>(Codec::Json, json).unwrap(), Input::MoveTo { x: 100.0, y: 80.5 });
    // The same input as a client's MessagePack: integer x, float64 y.
    let mut mp = vec![0x81, 0xa7];
    mp.extend_from_slice(b"move_to");
    mp.extend_from_slice(&[0x82, 0xa1, b'x', 0x64, 0xa1, b'y', 0xcb]);
    mp.extend_from_slice(&80.5f64.to_be_bytes());
    assert_eq!(decode::<Input>(Codec::MsgPack, &mp).unwrap(), Input::MoveTo { x: 100.0, y: 80.5 });
    let say = encode(Codec::MsgPack, &BTreeMap::from([("say".to_string(), "hi".to_string())]));
    assert_eq!(decode::<Input>(Codec::MsgPack, &say).unwrap(), Input::Say("hi".into()));
}

#[test]
fn decoding_refuses_bad_input_with_a_reason() {
    let e = decode::<Input>(Codec::Json, br#"{"jump":{}}"#).unwrap_err();
    assert!(e.contains("jump"), "{}", e);
    let e = decode::<Input>(Codec::Json, br#"{"move_to":{"x":"far","y":1}}"#).unwrap_err();
    assert!(e.contains("string"), "{}", e);
    let mut mp = encode(Codec::MsgPack, &Player { id: "a".into(), x: 1.0, y: 2.0 });
    assert!(decode::<Player>(Codec::MsgPack, &mp).is_ok());
    mp.push(0xc0);
    assert!(decode::<Player>(Codec::MsgPack, &mp).unwrap_err().contains("trailing bytes"));
    assert!(decode::<Player>(Codec::MsgPack, &[0x83, 0xa2]).is_err());
}

#[test]
fn empty_params_keep_the_defaults() {
    for codec in [Codec::MsgPack, Codec::Json] {
        assert_eq!(decode_params::<Params>(codec, &[]).unwrap(), Params { width: 800.0, replicate: false });
    }
    assert_eq!(
        decode_params::<Params>(Codec::Json, br#"{"replicate":true,"other":1}"#).unwrap(),
        Params { width: 800.0, replicate: true }
    );
}
