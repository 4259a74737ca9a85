//! The transfer and message exports export_shard! generates, driven natively
//! as the host drives them: arguments in tessera_alloc buffers, results in
//! the output buffer, the layouts of include/tessera/abi.h ("Transfers and
//! messages between shards").

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Duration;

use serde::Deserialize;
use tessera_shard_guest::log::native::capture;
use tessera_shard_guest::{abi, export_shard, Auth, Outgoing, Shard, Target};

#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum Input {
    Join,
    Leave { to: String },
    Send { to: String, topic: String },
    Realm { name: String },
}

#[derive(Deserialize)]
struct Params {}

#[derive(Default)]
struct Realm {
    players: BTreeMap<String, Vec<u8>>,
    leaving: Vec<(String, String)>,
    to_send: Vec<Outgoing>,
    realm: String,
    got: Vec<(String, String, Vec<u8>)>,
    arrivals: Vec<(String, String, bool, Option<String>)>,
}

impl Shard for Realm {
    type Params = Params;
    type Input = Input;
    type Snapshot = ();
    fn init(_shard_id: &str, _params: Params) -> Result<Self, String> {
        Ok(Realm::default())
    }
    fn apply_input(&mut self, sid: &str, input: Input) -> Result<(), String> {
        match input {
            Input::Join => {
                self.players.insert(sid.to_string(), sid.as_bytes().to_vec());
            }
            Input::Leave { to } => self.leaving.push((sid.to_string(), to)),
            Input::Send { to, topic } => {
                let target = match to.as_str() {
                    "*" => Target::All,
                    g if g.starts_with('#') => Target::Group(g[1..].to_string()),
                    s => Target::Shard(s.to_string()),
                };
                self.to_send.push(Outgoing::new(target, topic, sid.as_bytes()));
            }
            Input::Realm { name } => self.realm = name,
        }
        Ok(())
    }
    fn tick(&mut self, _dt: Duration) {}
    fn snapshot(&self) {}
    fn transfer_out(&mut self, sid: &str) -> Result<Option<Vec<u8>>, String> {
        if sid == "stuck" {
            return Err("stuck here".into());
        }
        Ok(self.players.remove(sid))
    }
    fn transfer_in(&mut self, sid: &str, state: &[u8], auth: &Auth, returning: bool) -> Result<(), String> {
        assert_eq!(auth.subscriber(), sid);
        self.arrivals.push((sid.to_string(), auth.from_shard().to_string(), returning, auth.claim("party")));
        if !returning && auth.claim("party").is_none() {
            return Err("join a party first".into());
        }
        self.players.insert(sid.to_string(), state.to_vec());
        Ok(())
    }
    fn transfer_requests(&mut self) -> Vec<(String, String)> {
        std::mem::take(&mut self.leaving)
    }
    fn groups(&self) -> Vec<String> {
        if self.realm.is_empty() {
            Vec::new()
        } else {
            vec![format!("realm:{}", self.realm), "world".to_string()]
        }
    }
    fn outbox(&mut self) -> Vec<Outgoing> {
        std::mem::take(&mut self.to_send)
    }
    fn on_message(&mut self, from: &str, topic: &str, data: &[u8]) {
        if topic == "crash" {
            panic!("a message crashed the realm");
        }
        self.got.push((from.to_string(), topic.to_string(), data.to_vec()));
    }
}

export_shard!(Realm, transfers, transfer_requests, groups, outbox, on_message);

static LOCK: Mutex<()> = Mutex::new(());

fn pass(bytes: &[u8]) -> (usize, u32) {
    if bytes.is_empty() {
        return (0, 0);
    }
    let ptr = tessera_alloc(bytes.len() as u32);
    assert_ne!(ptr, 0);
    unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), ptr as *mut u8, bytes.len()) };
    (ptr, bytes.len() as u32)
}

fn output() -> Vec<u8> {
    let (ptr, len) = (tessera_output_ptr(), tessera_output_len());
    if len == 0 {
        return Vec::new();
    }
    unsafe { std::slice::from_raw_parts(ptr as *const u8, len as usize) }.to_vec()
}

fn start() {
    tessera_shard_guest::__private::reset_for_testing(__tessera_shard());
    let (ip, il) = pass(b"zone-0");
    assert_eq!(unsafe { tessera_init(abi::CODEC_JSON, ip, il, 0, 0) }, abi::OK);
}

fn input(sid: &str, json: &str) {
    let (sp, sl) = pass(sid.as_bytes());
    let (ip, il) = pass(json.as_bytes());
    assert_eq!(unsafe { tessera_apply_input(sp, sl, ip, il) }, abi::OK, "{}", json);
}

fn out(sid: &str) -> (i32, Vec<u8>) {
    let (sp, sl) = pass(sid.as_bytes());
    let code = unsafe { tessera_transfer_out(sp, sl) };
    (code, output())
}

fn str_(b: &[u8]) -> Vec<u8> {
    [&(b.len() as u32).to_le_bytes()[..], b].concat()
}

fn arg_in(flags: u32, sid: &str, peer: &str, claims: &str, state: &[u8]) -> Vec<u8> {
    [&flags.to_le_bytes()[..], &str_(sid.as_bytes()), &str_(peer.as_bytes()), &str_(claims.as_bytes()), &str_(state)]
        .concat()
}

fn call_in(arg: &[u8]) -> (i32, Vec<u8>) {
    let (p, l) = pass(arg);
    let code = unsafe { tessera_transfer_in(p, l) };
    (code, output())
}

fn shard() -> &'static mut Realm {
    __tessera_shard().as_mut().unwrap()
}

#[test]
fn transfer_out_gives_state_no_state_or_refusal() {
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    start();
    input("p1", r#""join""#);
    assert_eq!(out("p1"), (abi::OK, b"p1".to_vec()));
    assert!(!shard().players.contains_key("p1"));
    assert_eq!(out("p1"), (abi::NO_STATE, Vec::new()));
    assert_eq!(out("stuck"), (abi::ERROR, b"stuck here".to_vec()));
    let (p, l) = pass(&[0xff, 0xfe]);
    assert_eq!(unsafe { tessera_transfer_out(p, l) }, abi::ERROR);
    assert_eq!(output(), b"tessera_transfer_out: the subscriber id is not valid UTF-8");
}

#[test]
fn transfer_in_passes_auth_and_returning() {
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    start();
    assert_eq!(call_in(&arg_in(0, "p2", "zone-1", "{}", b"st")), (abi::ERROR, b"join a party first".to_vec()));
    assert_eq!(call_in(&arg_in(0, "p2", "zone-1", r#"{"party":"north"}"#, b"st")), (abi::OK, Vec::new()));
    assert_eq!(shard().players.get("p2").map(|v| &v[..]), Some(&b"st"[..]));
    // Returning: taken back even without the claim.
    assert_eq!(call_in(&arg_in(abi::TRANSFER_IN_RETURNING, "p3", "zone-2", "{}", b"")), (abi::OK, Vec::new()));
    assert_eq!(
        shard().arrivals,
        vec![
            ("p2".to_string(), "zone-1".to_string(), false, None),
            ("p2".to_string(), "zone-1".to_string(), false, Some("north".to_string())),
            ("p3".to_string(), "zone-2".to_string(), true, None),
        ]
    );
    // Malformed: an error naming the problem, the shard untouched.
    let good = arg_in(0, "p4", "z", r#"{"party":1}"#, b"x");
    let (code, text) = call_in(&good[..good.len() - 1]);
    assert_eq!(code, abi::ERROR);
    assert_eq!(
        String::from_utf8(text).unwrap(),
        format!("tessera_transfer_in: malformed argument: unexpected end reading state at byte {}", good.len() - 1)
    );
    let (code, _) = call_in(&[]);
    assert_eq!(code, abi::ERROR);
    assert_eq!(shard().arrivals.len(), 3);
}

#[test]
fn requests_groups_and_outbox_are_taken() {
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    start();
    assert_eq!(tessera_transfer_requests(), abi::NO_STATE);
    assert_eq!(tessera_groups(), abi::NO_STATE);
    assert_eq!(tessera_outbox(), abi::NO_STATE);
    input("p1", r#"{"leave":{"to":"zone-1"}}"#);
    input("p2", r#"{"leave":{"to":"zone-2"}}"#);
    assert_eq!(tessera_transfer_requests(), abi::OK);
    let want = [&2u32.to_le_bytes()[..], &str_(b"p1"), &str_(b"zone-1"), &str_(b"p2"), &str_(b"zone-2")].concat();
    assert_eq!(output(), want);
    assert_eq!(tessera_transfer_requests(), abi::NO_STATE);
    assert_eq!(output(), b"");

    input("", r#"{"realm":{"name":"midgard"}}"#);
    assert_eq!(tessera_groups(), abi::OK);
    assert_eq!(output(), [&2u32.to_le_bytes()[..], &str_(b"realm:midgard"), &str_(b"world")].concat());
    assert_eq!(tessera_groups(), abi::OK, "groups are read, not taken");

    input("a", r#"{"send":{"to":"zone-1","topic":"t1"}}"#);
    input("b", r##"{"send":{"to":"#world","topic":"t2"}}"##);
    input("c", r#"{"send":{"to":"*","topic":"t3"}}"#);
    assert_eq!(tessera_outbox(), abi::OK);
    let want = [
        &3u32.to_le_bytes()[..],
        &[abi::TARGET_SHARD],
        &str_(b"zone-1"),
        &str_(b"t1"),
        &str_(b"a"),
        &[abi::TARGET_GROUP],
        &str_(b"world"),
        &str_(b"t2"),
        &str_(b"b"),
        &[abi::TARGET_ALL],
        &str_(b""),
        &str_(b"t3"),
        &str_(b"c"),
    ]
    .concat();
    assert_eq!(output(), want);
    assert_eq!(tessera_outbox(), abi::NO_STATE);
}

#[test]
fn messages_arrive_in_order_and_bad_batches_deliver_none() {
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    start();
    let batch = [
        &3u32.to_le_bytes()[..],
        &str_(b"zone-1"),
        &str_(b"relic_taken"),
        &str_(b"midgard"),
        &str_(b""),
        &str_(b"news"),
        &str_(&[0, 0xff]),
        &str_(b"zone-1"),
        &str_(&[b'x', 0xff]),
        &str_(b""),
    ]
    .concat();
    let (p, l) = pass(&batch);
    assert_eq!(unsafe { tessera_on_messages(p, l) }, abi::OK);
    assert_eq!(output(), b"");
    assert_eq!(
        shard().got,
        vec![
            ("zone-1".to_string(), "relic_taken".to_string(), b"midgard".to_vec()),
            (String::new(), "news".to_string(), vec![0, 0xff]),
            ("zone-1".to_string(), "x\u{fffd}".to_string(), Vec::new()),
        ]
    );
    let (p, l) = pass(&batch[..batch.len() - 1]);
    assert_eq!(unsafe { tessera_on_messages(p, l) }, abi::ERROR);
    assert!(String::from_utf8(output()).unwrap().starts_with("tessera_on_messages: malformed argument: unexpected end"));
    assert_eq!(shard().got.len(), 3);
    assert_eq!(unsafe { tessera_on_messages(0, 0) }, abi::ERROR);
    assert_eq!(output(), b"tessera_on_messages: malformed argument: unexpected end reading message count at byte 0");
}

#[test]
fn a_panic_in_a_talk_hook_logs_it() {
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    tessera_shard_guest::__private::reset_for_testing(__tessera_shard());
    let (r, lines) = capture(|| tessera_outbox());
    assert!(r.is_err());
    assert!(lines.last().unwrap().1.starts_with("tessera_outbox called before tessera_init/tessera_restore"));
    start();
    let batch = [&1u32.to_le_bytes()[..], &str_(b"zone-1"), &str_(b"crash"), &str_(b"")].concat();
    let (p, l) = pass(&batch);
    let (r, lines) = capture(|| unsafe { tessera_on_messages(p, l) });
    assert!(r.is_err());
    assert!(lines.last().unwrap().1.starts_with("a message crashed the realm (at tests/talk.rs:"));
}
