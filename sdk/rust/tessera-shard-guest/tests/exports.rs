//! Drives a shard through the exports export_shard! generates, natively, as
//! the host would: arguments in tessera_alloc buffers, results in the output
//! buffer, binary layouts of docs/guest-abi.md.

use std::sync::Mutex;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tessera_shard_guest::log::native::capture;
use tessera_shard_guest::{
    abi, export_shard, finish, restore_value, save_value, InterestArea, InterestConfig, LagCompensation, Replicated,
    ReplicationConfig, Rewind, Shard, Vec3, View,
};

#[derive(Deserialize)]
struct Params {
    #[serde(default)]
    stealthy: Vec<u64>,
}

#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum Input {
    Spawn { id: u64, x: f64, y: f64 },
    Remove { id: u64 },
    Finish,
    Crash,
    Shoot { id: u64 },
}

#[derive(Serialize)]
struct Snapshot {
    tick: u32,
    seen: Vec<u64>,
}

struct Zone {
    stealthy: Vec<u64>,
    ticks: u32,
    store: Replicated,
}

impl Shard for Zone {
    type Params = Params;
    type Input = Input;
    type Snapshot = Snapshot;
    fn init(shard_id: &str, params: Params) -> Result<Self, String> {
        if shard_id == "refuse" {
            return Err("refused".into());
        }
        Ok(Zone { stealthy: params.stealthy, ticks: 0, store: Replicated::new() })
    }
    fn apply_input(&mut self, _sid: &str, input: Input) -> Result<(), String> {
        match input {
            Input::Spawn { id, x, y } => {
                if x < 0.0 {
                    return Err("outside the zone".into());
                }
                self.store.set_pos(id, x, y, 0.0);
                self.store.set_component_value(id, 1, "unit");
            }
            Input::Remove { id } => self.store.remove(id),
            Input::Finish => finish("over"),
            Input::Crash => panic!("the zone crashed on purpose"),
            Input::Shoot { .. } => return Err("shots need a rewind".into()),
        }
        Ok(())
    }
    fn tick(&mut self, dt: Duration) {
        assert_eq!(dt, Duration::from_millis(50));
        self.ticks += 1;
    }
    fn snapshot(&self) -> Snapshot {
        Snapshot { tick: self.ticks, seen: Vec::new() }
    }
    fn save(&self) -> Result<Option<Vec<u8>>, String> {
        Ok(if self.ticks == 0 { None } else { Some(save_value(&self.ticks)) })
    }
    fn restore(shard_id: &str, params: Params, state: &[u8]) -> Result<Self, String> {
        let mut zone = Self::init(shard_id, params)?;
        zone.ticks = restore_value(state)?;
        Ok(zone)
    }
    fn interest(&self) -> Option<InterestConfig> {
        Some(InterestConfig { cell_size: 10.0, margin: 1.0, shared_snapshots: false })
    }
    fn interest_area(&self, sid: &str) -> Option<InterestArea> {
        if sid == "blind" {
            None
        } else {
            Some(InterestArea { x: 1.0, y: 2.0, radius: 5.0 })
        }
    }
    fn can_see(&self, _sid: &str, id: u64) -> bool {
        !self.stealthy.contains(&id)
    }
    fn snapshot_visible(&self, _sid: &str, view: &View<'_>) -> Snapshot {
        Snapshot { tick: self.ticks, seen: view.visible.to_vec() }
    }
    fn replicated(&mut self) -> Option<&mut Replicated> {
        Some(&mut self.store)
    }
    fn replication_config(&self) -> ReplicationConfig {
        ReplicationConfig { precision: 0.5, max_bytes_per_tick: 100, y_up: false }
    }
    fn lag_compensation(&self) -> Option<LagCompensation> {
        Some(LagCompensation::new(10))
    }
    fn apply_input_at(&mut self, sid: &str, input: Input, rewind: &Rewind) -> Result<(), String> {
        match input {
            Input::Shoot { id } => match rewind.position_at(id) {
                Some(p) if p.x >= 0.0 => {
                    self.store.remove(id);
                    Ok(())
                }
                _ => Err(format!("missed {} ({} ticks behind)", id, rewind.ticks_behind())),
            },
            other => self.apply_input(sid, other),
        }
    }
}

export_shard!(Zone, save, can_see, snapshot_visible);

// The exports share one instance: tests take turns.
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

fn start(codec: i32, id: &str, params: &str) -> i32 {
    tessera_shard_guest::__private::reset_for_testing(__tessera_shard());
    let (ip, il) = pass(id.as_bytes());
    let (pp, pl) = pass(params.as_bytes());
    unsafe { tessera_init(codec, ip, il, pp, pl) }
}

fn input(sid: &str, json: &str) -> (i32, Vec<u8>) {
    let (sp, sl) = pass(sid.as_bytes());
    let (ip, il) = pass(json.as_bytes());
    let code = unsafe { tessera_apply_input(sp, sl, ip, il) };
    (code, output())
}

fn strs(list: &[&str]) -> Vec<u8> {
    let mut b = (list.len() as u32).to_le_bytes().to_vec();
    for s in list {
        b.extend_from_slice(&(s.len() as u32).to_le_bytes());
        b.extend_from_slice(s.as_bytes());
    }
    b
}

#[test]
fn init_refusals_carry_their_reason() {
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    assert_eq!(start(7, "z", ""), abi::ERROR);
    assert_eq!(output(), b"unknown codec 7");
    assert_eq!(start(abi::CODEC_JSON, "refuse", ""), abi::ERROR);
    assert_eq!(output(), b"refused");
    assert_eq!(start(abi::CODEC_JSON, "z", r#"{"stealthy":"no"}"#), abi::ERROR);
    assert!(String::from_utf8(output()).unwrap().starts_with("invalid params: "));
    assert_eq!(start(abi::CODEC_JSON, "z", ""), abi::OK);
    let (ip, il) = pass(b"z");
    assert_eq!(unsafe { tessera_init(abi::CODEC_JSON, ip, il, 0, 0) }, abi::ERROR);
    assert_eq!(output(), b"the shard has already started");
}

#[test]
fn inputs_ticks_snapshots_finish_and_save() {
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    assert_eq!(start(abi::CODEC_JSON, "z", ""), abi::OK);
    assert_eq!(tessera_save(), abi::NO_STATE);
    assert_eq!(input("a", r#"{"spawn":{"id":1,"x":-1,"y":0}}"#), (abi::ERROR, b"outside the zone".to_vec()));
    let (code, text) = input("a", r#"{"fly":{}}"#);
    assert_eq!(code, abi::ERROR);
    assert!(String::from_utf8(text).unwrap().starts_with("invalid input: "));
    assert_eq!(tessera_tick(50_000), abi::OK);
    assert_eq!(tessera_snapshot(), abi::OK);
    assert_eq!(output(), br#"{"tick":1,"seen":[]}"#);
    assert_eq!(tessera_save(), abi::OK);
    let saved = output();
    assert_eq!(input("", r#""finish""#).0, abi::OK);
    assert_eq!(tessera_tick(50_000), abi::FINISHED);
    assert_eq!(output(), b"over");
    assert_eq!(tessera_tick(50_000), abi::FINISHED);

    tessera_shard_guest::__private::reset_for_testing(__tessera_shard());
    let (ip, il) = pass(b"z");
    let (sp, sl) = pass(&saved);
    assert_eq!(unsafe { tessera_restore(abi::CODEC_MSGPACK, ip, il, 0, 0, sp, sl) }, abi::OK);
    assert_eq!(tessera_snapshot(), abi::OK);
    assert_eq!(output(), [&[0x82, 0xa4][..], b"tick", &[0x01, 0xa4], b"seen", &[0x90]].concat());
    let (ip, il) = pass(b"z2");
    let (sp, sl) = pass(&[0xc1]);
    tessera_shard_guest::__private::reset_for_testing(__tessera_shard());
    assert_eq!(unsafe { tessera_restore(abi::CODEC_MSGPACK, ip, il, 0, 0, sp, sl) }, abi::ERROR);
    assert!(String::from_utf8(output()).unwrap().starts_with("invalid saved state: "));
}

#[test]
fn a_panic_logs_its_message_at_the_panic_level() {
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    assert_eq!(start(abi::CODEC_JSON, "z", ""), abi::OK);
    let (result, lines) = capture(|| input("a", r#""crash""#));
    assert!(result.is_err());
    let (level, text) = lines.last().unwrap();
    assert_eq!(*level, 4);
    assert!(text.starts_with("the zone crashed on purpose (at tests/exports.rs:"), "{}", text);
}

#[test]
fn interest_hooks_write_the_abi_layouts() {
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    assert_eq!(start(abi::CODEC_JSON, "z", r#"{"stealthy":[2]}"#), abi::OK);
    assert_eq!(tessera_interest_config(), abi::OK);
    assert_eq!(output(), [&10.0f64.to_le_bytes()[..], &1.0f64.to_le_bytes(), &[0]].concat());
    input("a", r#"{"spawn":{"id":2,"x":3,"y":4}}"#);
    input("a", r#"{"spawn":{"id":1,"x":1.5,"y":0}}"#);
    // No entities(): positions come from the store, ascending ids.
    assert_eq!(tessera_entities(), abi::OK);
    let mut want = 2u32.to_le_bytes().to_vec();
    for (id, x, y) in [(1u64, 1.5f32, 0f32), (2, 3.0, 4.0)] {
        want.extend_from_slice(&id.to_le_bytes());
        want.extend_from_slice(&0u32.to_le_bytes());
        want.extend_from_slice(&x.to_le_bytes());
        want.extend_from_slice(&y.to_le_bytes());
    }
    assert_eq!(output(), want);

    let (p, l) = pass(&strs(&["a", "blind"]));
    assert_eq!(unsafe { tessera_interest_areas(p, l) }, abi::OK);
    let area = [&[1u8][..], &1f32.to_le_bytes(), &2f32.to_le_bytes(), &5f32.to_le_bytes()].concat();
    assert_eq!(output(), [&area[..], &[0u8; 13]].concat());
    let (p, l) = pass(&[1, 0, 0]);
    assert_eq!(unsafe { tessera_interest_areas(p, l) }, abi::ERROR);
    assert_eq!(output(), b"tessera_interest_areas: malformed argument: unexpected end reading subscriber count at byte 0");

    // Filter: "a" may see 1 and 3 but not the stealthy 2.
    let mut req = 1u32.to_le_bytes().to_vec();
    req.extend_from_slice(&1u32.to_le_bytes());
    req.push(b'a');
    req.extend_from_slice(&3u32.to_le_bytes());
    for id in [1u64, 2, 3] {
        req.extend_from_slice(&id.to_le_bytes());
    }
    let (p, l) = pass(&req);
    assert_eq!(unsafe { tessera_filter(p, l) }, abi::OK);
    assert_eq!(output(), vec![0b101]);

    let mut view = [&1u32.to_le_bytes()[..], b"a"].concat();
    for list in [&[1u64, 3][..], &[3], &[]] {
        view.extend_from_slice(&(list.len() as u32).to_le_bytes());
        for id in list {
            view.extend_from_slice(&id.to_le_bytes());
        }
    }
    let (p, l) = pass(&view);
    assert_eq!(unsafe { tessera_snapshot_visible(p, l) }, abi::OK);
    assert_eq!(output(), br#"{"tick":0,"seen":[1,3]}"#);
}

#[test]
fn the_store_sends_full_then_changes() {
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    assert_eq!(start(abi::CODEC_MSGPACK, "z", ""), abi::OK);
    assert_eq!(tessera_replication_config(), abi::OK);
    assert_eq!(output(), [&0.5f64.to_le_bytes()[..], &100u32.to_le_bytes(), &[0]].concat());
    let spawn = |id: u8, x: u8| {
        let mut b = vec![0x81, 0xa5];
        b.extend_from_slice(b"spawn");
        b.extend_from_slice(&[0x83, 0xa2, b'i', b'd', id, 0xa1, b'x', x, 0xa1, b'y', 0]);
        let (sp, sl) = pass(b"a");
        let (ip, il) = pass(&b);
        unsafe { tessera_apply_input(sp, sl, ip, il) }
    };
    assert_eq!(spawn(5, 2), abi::OK);
    assert_eq!(tessera_replicated(), abi::OK);
    // FULL, no removals, one NEW entity with POS and component 1 = "unit".
    let mut want = vec![abi::REPLICATED_FLAG_FULL];
    want.extend_from_slice(&0u32.to_le_bytes());
    want.extend_from_slice(&1u32.to_le_bytes());
    want.extend_from_slice(&5u64.to_le_bytes());
    want.push(abi::REPLICATED_WHAT_NEW | abi::REPLICATED_WHAT_POS);
    for v in [2.0f64, 0.0, 0.0] {
        want.extend_from_slice(&v.to_le_bytes());
    }
    want.extend_from_slice(&[1, 1]);
    want.extend_from_slice(&6u32.to_le_bytes());
    want.extend_from_slice(&[0xa4, b'u', b'n', b'i', b't']);
    assert_eq!(output(), want);
    // Nothing changed: an empty delta.
    assert_eq!(tessera_replicated(), abi::OK);
    assert_eq!(output(), [&[0u8][..], &0u32.to_le_bytes(), &0u32.to_le_bytes()].concat());
    // Same position again: still nothing. A move: POS only.
    assert_eq!(spawn(5, 2), abi::OK);
    assert_eq!(spawn(5, 3), abi::OK);
    assert_eq!(tessera_replicated(), abi::OK);
    let mut want = [&[0u8][..], &0u32.to_le_bytes(), &1u32.to_le_bytes(), &5u64.to_le_bytes()].concat();
    want.push(abi::REPLICATED_WHAT_POS);
    for v in [3.0f64, 0.0, 0.0] {
        want.extend_from_slice(&v.to_le_bytes());
    }
    want.push(0);
    assert_eq!(output(), want);
    // Removed and set again before the read: a reused id, NEW in changes.
    input_msgpack_remove(5);
    assert_eq!(spawn(5, 3), abi::OK);
    assert_eq!(tessera_entities(), abi::OK);
    assert_eq!(&output()[12..16], &1u32.to_le_bytes()); // generation 1
    assert_eq!(tessera_replicated(), abi::OK);
    let out = output();
    assert_eq!(&out[..13], &[&[0u8][..], &1u32.to_le_bytes(), &5u64.to_le_bytes()].concat()[..]);
    assert_eq!(&out[13..17], &1u32.to_le_bytes());
    assert_eq!(out[25], abi::REPLICATED_WHAT_NEW | abi::REPLICATED_WHAT_POS);
    // Removed for good: in the removed list only.
    input_msgpack_remove(5);
    assert_eq!(tessera_replicated(), abi::OK);
    assert_eq!(output(), [&[0u8][..], &1u32.to_le_bytes(), &5u64.to_le_bytes(), &0u32.to_le_bytes()].concat());
}

fn input_msgpack_remove(id: u8) {
    let mut b = vec![0x81, 0xa6];
    b.extend_from_slice(b"remove");
    b.extend_from_slice(&[0x81, 0xa2, b'i', b'd', id]);
    let (sp, sl) = pass(b"a");
    let (ip, il) = pass(&b);
    assert_eq!(unsafe { tessera_apply_input(sp, sl, ip, il) }, abi::OK);
}

#[test]
fn store_components_and_limits() {
    let mut s = Replicated::new();
    s.set_component(1, 3, b"abc");
    assert_eq!(s.component(1, 3), Some(&b"abc"[..]));
    assert_eq!(s.pos(1), Some([0.0, 0.0, 0.0]));
    s.remove_component(1, 3);
    assert_eq!(s.component(1, 3), None);
    assert!(s.contains(1) && s.len() == 1);
    let (r, lines) = capture(|| s.set_pos(1 << 53, 0.0, 0.0, 0.0));
    assert!(r.is_err());
    assert!(lines.last().unwrap().1.contains("is too large (ids must be below 2^53"));
    let (r, _) = capture(|| {
        let mut t = Replicated::new();
        for c in 0..=255u8 {
            t.set_component(9, c, b"x");
        }
    });
    assert!(r.is_err());
}

fn rewind_bytes(view: f64, now: u64, entities: &[(u64, [f64; 3])]) -> Vec<u8> {
    let mut b = view.to_le_bytes().to_vec();
    b.extend_from_slice(&now.to_le_bytes());
    b.extend_from_slice(&(entities.len() as u32).to_le_bytes());
    for (id, p) in entities {
        b.extend_from_slice(&id.to_le_bytes());
        for v in p {
            b.extend_from_slice(&v.to_le_bytes());
        }
    }
    b
}

fn input_at(sid: &str, json: &str, rewind: &[u8]) -> (i32, Vec<u8>) {
    let (sp, sl) = pass(sid.as_bytes());
    let (ip, il) = pass(json.as_bytes());
    let (rp, rl) = pass(rewind);
    let code = unsafe { tessera_apply_input_at(sp, sl, ip, il, rp, rl) };
    (code, output())
}

#[test]
fn lag_compensation_config_and_rewound_inputs() {
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    assert_eq!(start(abi::CODEC_JSON, "z", ""), abi::OK);
    assert_eq!(tessera_lag_compensation(), abi::OK);
    assert_eq!(output(), [&10u32.to_le_bytes()[..], &250u32.to_le_bytes()].concat());
    input("a", r#"{"spawn":{"id":4,"x":1,"y":2}}"#);
    let seen = rewind_bytes(12.25, 14, &[(4, [1.0, 2.0, 0.0]), (9, [-3.0, 0.0, 0.0])]);
    assert_eq!(input_at("a", r#"{"shoot":{"id":9}}"#, &seen), (abi::ERROR, b"missed 9 (1.75 ticks behind)".to_vec()));
    assert_eq!(input_at("a", r#"{"shoot":{"id":5}}"#, &seen).0, abi::ERROR);
    assert_eq!(input_at("a", r#"{"shoot":{"id":4}}"#, &seen).0, abi::OK);
    assert!(!__tessera_shard().as_mut().unwrap().store.contains(4));
    // Other inputs go to apply_input; a plain input cannot shoot.
    assert_eq!(input_at("a", r#"{"spawn":{"id":6,"x":1,"y":2}}"#, &seen).0, abi::OK);
    assert_eq!(input("a", r#"{"shoot":{"id":6}}"#), (abi::ERROR, b"shots need a rewind".to_vec()));
    // A malformed rewind is refused before the input is looked at.
    let (code, text) = input_at("a", r#"{"shoot":{"id":6}}"#, &seen[..20]);
    assert_eq!(code, abi::ERROR);
    assert_eq!(text, b"tessera_apply_input_at: malformed rewind: count larger than the argument reading entity count at byte 20");
    let unsorted = rewind_bytes(1.0, 1, &[(9, [0.0; 3]), (4, [0.0; 3])]);
    assert_eq!(input_at("a", r#"{"shoot":{"id":6}}"#, &unsorted).1, b"tessera_apply_input_at: malformed rewind: entity ids are not ascending");
}

#[test]
fn rewind_queries() {
    let v = |x: f64, y: f64, z: f64| Vec3 { x, y, z };
    let r = Rewind::with_positions(7.5, 9, vec![(3, v(10.0, 0.0, 0.0)), (1, v(0.0, 0.0, 0.0)), (2, v(3.0, 4.0, 0.0))]);
    assert_eq!(r.entities().iter().map(|e| e.0).collect::<Vec<_>>(), vec![1, 2, 3]);
    assert_eq!(r.position_at(2), Some(v(3.0, 4.0, 0.0)));
    assert_eq!(r.position_at(5), None);
    assert_eq!(r.entities_near(v(0.0, 0.0, 0.0), 5.0).iter().map(|e| e.0).collect::<Vec<_>>(), vec![1, 2]);
    assert_eq!(r.entities_near(v(0.0, 0.0, 1.0), 5.0).iter().map(|e| e.0).collect::<Vec<_>>(), vec![1]);
    assert_eq!((r.tick(), r.now_tick(), r.ticks_behind()), (7.5, 9, 1.5));
}
