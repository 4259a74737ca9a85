//! The layouts of the transfer and message exports (`include/tessera/abi.h`,
//! "Transfers and messages between shards"; docs/guest-abi.md). Little-endian;
//! a `str` is a u32 byte length followed by that many bytes. The decoders
//! read what the host passes and return an error (never panic) for a
//! truncated or overlong argument.

use crate::abi;
use crate::binary::{Reader, Writer};
use crate::messages::Outgoing;

/// The argument of `tessera_transfer_in`: `u32 flags | str subscriber |
/// str peer_shard | str claims_json | str state`.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct TransferInArg<'a> {
    pub returning: bool,
    pub subscriber: &'a str,
    pub peer_shard: &'a str,
    pub claims_json: &'a str,
    pub state: &'a [u8],
}

fn utf8<'a>(bytes: &'a [u8], what: &str) -> Result<&'a str, String> {
    std::str::from_utf8(bytes).map_err(|_| format!("{} is not valid UTF-8", what))
}

/// Reads the `tessera_transfer_in` argument. Flag bits other than
/// `TRANSFER_IN_RETURNING` are ignored.
pub(crate) fn decode_transfer_in(bytes: &[u8]) -> Result<TransferInArg<'_>, String> {
    let mut r = Reader::new(bytes);
    let flags = r.u32("flags");
    let subscriber = r.str("subscriber");
    let peer_shard = r.str("peer shard");
    let claims_json = r.str("claims");
    let state = r.str("state");
    if !r.finish() {
        return Err(r.error().to_string());
    }
    Ok(TransferInArg {
        returning: flags & abi::TRANSFER_IN_RETURNING != 0,
        subscriber: utf8(subscriber, "the subscriber id")?,
        peer_shard: utf8(peer_shard, "the peer shard id")?,
        claims_json: utf8(claims_json, "the claims")?,
        state,
    })
}

/// One message of a `tessera_on_messages` batch.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Incoming<'a> {
    pub from: &'a [u8],
    pub topic: &'a [u8],
    pub data: &'a [u8],
}

/// Reads the `tessera_on_messages` argument: `u32 count | count x (str from,
/// str topic, str data)`. All or nothing: a malformed batch delivers none.
pub(crate) fn decode_messages(bytes: &[u8]) -> Result<Vec<Incoming<'_>>, String> {
    let mut r = Reader::new(bytes);
    let count = r.u32("message count");
    if !r.can_hold(count as u64, 12) {
        r.fail("count larger than the argument", Some("message count"));
    }
    let mut messages = Vec::with_capacity(if r.ok() { count as usize } else { 0 });
    while messages.len() < count as usize && r.ok() {
        let from = r.str("from");
        let topic = r.str("topic");
        let data = r.str("data");
        messages.push(Incoming { from, topic, data });
    }
    if !r.finish() {
        return Err(r.error().to_string());
    }
    Ok(messages)
}

/// `tessera_transfer_requests` output: `u32 count | count x (str subscriber,
/// str target_shard)`.
pub(crate) fn encode_transfer_requests(requests: &[(String, String)], out: &mut Vec<u8>) {
    let mut w = Writer { out };
    w.u32(requests.len() as u32);
    for (subscriber, to) in requests {
        w.str(subscriber.as_bytes());
        w.str(to.as_bytes());
    }
}

/// `tessera_groups` output: `u32 count | count x str`.
pub(crate) fn encode_groups(groups: &[String], out: &mut Vec<u8>) {
    let mut w = Writer { out };
    w.u32(groups.len() as u32);
    for g in groups {
        w.str(g.as_bytes());
    }
}

/// `tessera_outbox` output: `u32 count | count x (u8 target_kind, str target,
/// str topic, str data)`; the target of `All` is empty.
pub(crate) fn encode_outbox(messages: &[Outgoing], out: &mut Vec<u8>) {
    let mut w = Writer { out };
    w.u32(messages.len() as u32);
    for m in messages {
        w.u8(m.to.kind());
        w.str(m.to.name().as_bytes());
        w.str(m.topic.as_bytes());
        w.str(&m.data);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::messages::Target;

    fn s(text: &[u8]) -> Vec<u8> {
        [&(text.len() as u32).to_le_bytes()[..], text].concat()
    }

    #[test]
    fn transfer_in_reads_flags_ids_claims_and_state() {
        let bytes = [
            &[1, 0, 0, 0][..],
            &[2, 0, 0, 0],
            b"p1",
            &[6, 0, 0, 0],
            b"zone-0",
            &[2, 0, 0, 0],
            b"{}",
            &[3, 0, 0, 0],
            &[0x81, 0xa1, b'n'],
        ]
        .concat();
        let arg = decode_transfer_in(&bytes).unwrap();
        assert_eq!(
            arg,
            TransferInArg {
                returning: true,
                subscriber: "p1",
                peer_shard: "zone-0",
                claims_json: "{}",
                state: &[0x81, 0xa1, b'n'],
            }
        );
        // Other flag bits, empty strings and an empty state.
        let bytes = [&[0xfe, 0, 0, 0][..], &[0; 16]].concat();
        let arg = decode_transfer_in(&bytes).unwrap();
        assert!(!arg.returning);
        assert_eq!((arg.subscriber, arg.peer_shard, arg.claims_json, arg.state), ("", "", "", &[][..]));
    }

    #[test]
    fn transfer_in_refuses_short_long_and_non_utf8_arguments() {
        let good = [&[0u8, 0, 0, 0][..], &s(b"p"), &s(b"a"), &s(b"{}"), &s(b"xyz")].concat();
        assert!(decode_transfer_in(&good).is_ok());
        for cut in 0..good.len() {
            assert!(decode_transfer_in(&good[..cut]).is_err(), "cut at {}", cut);
        }
        assert_eq!(decode_transfer_in(&good[..2]).unwrap_err(), "unexpected end reading flags at byte 0");
        assert_eq!(decode_transfer_in(&good[..good.len() - 1]).unwrap_err(), "unexpected end reading state at byte 24");
        let mut long = good.clone();
        long.push(0);
        assert_eq!(decode_transfer_in(&long).unwrap_err(), "trailing bytes at byte 27");
        // A length beyond the argument.
        let mut huge = good.clone();
        huge[4..8].copy_from_slice(&u32::MAX.to_le_bytes());
        assert_eq!(decode_transfer_in(&huge).unwrap_err(), "unexpected end reading subscriber at byte 8");
        let bad = [&[0u8, 0, 0, 0][..], &s(&[0xff]), &s(b"a"), &s(b"{}"), &s(b"")].concat();
        assert_eq!(decode_transfer_in(&bad).unwrap_err(), "the subscriber id is not valid UTF-8");
    }

    #[test]
    fn messages_batch_reads_every_message_or_none() {
        let bytes = [
            &[2, 0, 0, 0][..],
            &s(b"zone-1"),
            &s(b"relic_taken"),
            &s(b"midgard"),
            &s(b""),
            &s(b"hi"),
            &s(&[0, 0xff]),
        ]
        .concat();
        let got = decode_messages(&bytes).unwrap();
        assert_eq!(
            got,
            vec![
                Incoming { from: b"zone-1", topic: b"relic_taken", data: b"midgard" },
                Incoming { from: b"", topic: b"hi", data: &[0, 0xff] },
            ]
        );
        assert_eq!(decode_messages(&[0, 0, 0, 0]).unwrap(), vec![]);
        for cut in 0..bytes.len() {
            assert!(decode_messages(&bytes[..cut]).is_err(), "cut at {}", cut);
        }
        // A count no argument of this size can hold fails before any read.
        let mut many = bytes.clone();
        many[..4].copy_from_slice(&u32::MAX.to_le_bytes());
        assert_eq!(
            decode_messages(&many).unwrap_err(),
            "count larger than the argument reading message count at byte 4"
        );
        let mut more = bytes.clone();
        more[0] = 3;
        assert_eq!(decode_messages(&more).unwrap_err(), "unexpected end reading from at byte 56");
        let mut fewer = bytes;
        fewer[0] = 1;
        assert_eq!(decode_messages(&fewer).unwrap_err(), "trailing bytes at byte 40");
    }

    #[test]
    fn requests_groups_and_outbox_write_the_layouts() {
        let mut out = Vec::new();
        encode_transfer_requests(&[("p1".into(), "zone-1".into()), ("".into(), "z".into())], &mut out);
        assert_eq!(
            out,
            [&[2, 0, 0, 0][..], &[2, 0, 0, 0], b"p1", &[6, 0, 0, 0], b"zone-1", &[0, 0, 0, 0], &[1, 0, 0, 0], b"z"]
                .concat()
        );
        out.clear();
        encode_groups(&["world".into(), "realm:midgard".into()], &mut out);
        assert_eq!(out, [&[2, 0, 0, 0][..], &[5, 0, 0, 0], b"world", &[13, 0, 0, 0], b"realm:midgard"].concat());
        out.clear();
        encode_groups(&[], &mut out);
        assert_eq!(out, [0, 0, 0, 0]);
        out.clear();
        encode_outbox(
            &[
                Outgoing::new(Target::Shard("zone-1".into()), "hi", b"x".to_vec()),
                Outgoing::new(Target::Group("world".into()), "relic_taken", &b"the relic"[..]),
                Outgoing::new(Target::All, "t", Vec::new()),
            ],
            &mut out,
        );
        let want = [
            &[3, 0, 0, 0][..],
            &[0],
            &[6, 0, 0, 0],
            b"zone-1",
            &[2, 0, 0, 0],
            b"hi",
            &[1, 0, 0, 0],
            b"x",
            &[1],
            &[5, 0, 0, 0],
            b"world",
            &[11, 0, 0, 0],
            b"relic_taken",
            &[9, 0, 0, 0],
            b"the relic",
            &[2],
            &[0, 0, 0, 0],
            &[1, 0, 0, 0],
            b"t",
            &[0, 0, 0, 0],
        ]
        .concat();
        assert_eq!(out, want);
    }
}
