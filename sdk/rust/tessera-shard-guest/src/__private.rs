//! The export bodies [`export_shard!`](crate::export_shard) calls. Not part
//! of the public API; native tests call them directly (pointers are then
//! 64-bit).

use std::time::Duration;

use crate::abi;
use crate::binary::{Reader, Writer};
use crate::codec::{self, Codec};
use crate::interest::{EntityPos, View};
use crate::log::install_panic_hook;
use crate::rewind::Rewind;
use crate::runtime::{runtime, Arg};
use crate::talk_abi;
use crate::transfer::Auth;
use crate::Shard;

pub use crate::runtime::alloc;

pub fn output_ptr() -> usize {
    runtime().output.as_ptr() as usize
}

pub fn output_len() -> u32 {
    runtime().output.len() as u32
}

fn fail_with(text: &str) -> i32 {
    let out = &mut runtime().output;
    out.clear();
    out.extend_from_slice(text.as_bytes());
    abi::ERROR
}

fn started<'a, S>(slot: &'a mut Option<S>, call: &str) -> &'a mut S {
    match slot {
        Some(s) => s,
        None => panic!("{} called before tessera_init/tessera_restore", call),
    }
}

fn text<'a>(bytes: &'a [u8], what: &str) -> Result<&'a str, String> {
    std::str::from_utf8(bytes).map_err(|_| format!("{} is not valid UTF-8", what))
}

fn start<S: Shard>(
    slot: &mut Option<S>,
    codec_id: i32,
    id: &[u8],
    params: &[u8],
    make: impl FnOnce(&str, S::Params) -> Result<S, String>,
) -> i32 {
    install_panic_hook();
    runtime().output.clear();
    if slot.is_some() {
        return fail_with("the shard has already started");
    }
    let codec = match Codec::from_id(codec_id) {
        Some(c) => c,
        None => return fail_with(&format!("unknown codec {}", codec_id)),
    };
    runtime().codec = codec;
    let id = match text(id, "the shard id") {
        Ok(id) => id,
        Err(e) => return fail_with(&e),
    };
    let params = match codec::decode_params::<S::Params>(codec, params) {
        Ok(p) => p,
        Err(e) => return fail_with(&format!("invalid params: {}", e)),
    };
    match make(id, params) {
        Ok(s) => {
            *slot = Some(s);
            abi::OK
        }
        Err(e) => fail_with(&e),
    }
}

/// # Safety
/// The pointers are 0 or `tessera_alloc` buffers of the given lengths.
pub unsafe fn init<S: Shard>(
    slot: &mut Option<S>,
    codec: i32,
    id_ptr: usize,
    id_len: u32,
    params_ptr: usize,
    params_len: u32,
) -> i32 {
    let id = Arg::new(id_ptr, id_len);
    let params = Arg::new(params_ptr, params_len);
    start(slot, codec, id.bytes(), params.bytes(), |id, p| S::init(id, p))
}

/// # Safety
/// As [`init`].
#[allow(clippy::too_many_arguments)]
pub unsafe fn restore<S: Shard>(
    slot: &mut Option<S>,
    codec: i32,
    id_ptr: usize,
    id_len: u32,
    params_ptr: usize,
    params_len: u32,
    state_ptr: usize,
    state_len: u32,
) -> i32 {
    let id = Arg::new(id_ptr, id_len);
    let params = Arg::new(params_ptr, params_len);
    let state = Arg::new(state_ptr, state_len);
    start(slot, codec, id.bytes(), params.bytes(), |id, p| S::restore(id, p, state.bytes()))
}

/// # Safety
/// As [`init`].
pub unsafe fn apply_input<S: Shard>(
    slot: &mut Option<S>,
    sid_ptr: usize,
    sid_len: u32,
    input_ptr: usize,
    input_len: u32,
) -> i32 {
    install_panic_hook();
    let sid = Arg::new(sid_ptr, sid_len);
    let input = Arg::new(input_ptr, input_len);
    let s = started(slot, "tessera_apply_input");
    runtime().output.clear();
    let (sid, decoded) = match decode_input::<S>(sid.bytes(), input.bytes()) {
        Ok(v) => v,
        Err(code) => return code,
    };
    match s.apply_input(sid, decoded) {
        Ok(()) => abi::OK,
        Err(e) => fail_with(&e),
    }
}

fn decode_input<'a, S: Shard>(sid: &'a [u8], input: &[u8]) -> Result<(&'a str, S::Input), i32> {
    let sid = text(sid, "the subscriber id").map_err(|e| fail_with(&format!("invalid input: {}", e)))?;
    let decoded = codec::decode::<S::Input>(runtime().codec, input)
        .map_err(|e| fail_with(&format!("invalid input: {}", e)))?;
    Ok((sid, decoded))
}

/// # Safety
/// As [`init`].
#[allow(clippy::too_many_arguments)]
pub unsafe fn apply_input_at<S: Shard>(
    slot: &mut Option<S>,
    sid_ptr: usize,
    sid_len: u32,
    input_ptr: usize,
    input_len: u32,
    rewind_ptr: usize,
    rewind_len: u32,
) -> i32 {
    install_panic_hook();
    let sid = Arg::new(sid_ptr, sid_len);
    let input = Arg::new(input_ptr, input_len);
    let rewind = Arg::new(rewind_ptr, rewind_len);
    let s = started(slot, "tessera_apply_input_at");
    runtime().output.clear();
    let rewind = match Rewind::read(rewind.bytes()) {
        Ok(r) => r,
        Err(e) => return fail_with(&format!("tessera_apply_input_at: malformed rewind: {}", e)),
    };
    let (sid, decoded) = match decode_input::<S>(sid.bytes(), input.bytes()) {
        Ok(v) => v,
        Err(code) => return code,
    };
    match s.apply_input_at(sid, decoded, &rewind) {
        Ok(()) => abi::OK,
        Err(e) => fail_with(&e),
    }
}

/// `OK` with `u32 history_ticks, u32 max_view_delay_ms`, or `NO_STATE`.
pub fn lag_compensation<S: Shard>(slot: &mut Option<S>) -> i32 {
    install_panic_hook();
    let s = started(slot, "tessera_lag_compensation");
    runtime().output.clear();
    let config = match s.lag_compensation() {
        Some(c) => c,
        None => return abi::NO_STATE,
    };
    if config.history_ticks == 0 || config.history_ticks > abi::MAX_HISTORY_TICKS {
        panic!(
            "lag_compensation(): history_ticks must be 1..{} (got {})",
            abi::MAX_HISTORY_TICKS,
            config.history_ticks
        );
    }
    let mut w = Writer { out: &mut runtime().output };
    w.u32(config.history_ticks);
    w.u32(config.max_view_delay_ms);
    abi::OK
}

/// `OK`, or `FINISHED` with finish()'s reason. A negative `dt_us` counts as 0.
pub fn tick<S: Shard>(slot: &mut Option<S>, dt_us: i64) -> i32 {
    install_panic_hook();
    let s = started(slot, "tessera_tick");
    runtime().output.clear();
    if !runtime().finished {
        s.tick(Duration::from_micros(dt_us.max(0) as u64));
    }
    let rt = runtime();
    if !rt.finished {
        return abi::OK;
    }
    rt.output.extend_from_slice(rt.reason.as_bytes());
    abi::FINISHED
}

pub fn snapshot<S: Shard>(slot: &mut Option<S>) -> i32 {
    install_panic_hook();
    let s = started(slot, "tessera_snapshot");
    let snap = s.snapshot();
    let rt = runtime();
    rt.output.clear();
    codec::encode_into(rt.codec, &snap, &mut rt.output);
    abi::OK
}

pub fn save<S: Shard>(slot: &mut Option<S>) -> i32 {
    install_panic_hook();
    let s = started(slot, "tessera_save");
    runtime().output.clear();
    match s.save() {
        Ok(Some(bytes)) => {
            runtime().output = bytes;
            abi::OK
        }
        Ok(None) => abi::NO_STATE,
        Err(e) => fail_with(&e),
    }
}

fn malformed(call: &str, r: &Reader<'_>) -> i32 {
    fail_with(&format!("{}: malformed argument: {}", call, r.error()))
}

fn quoted(sid: &str) -> String {
    format!("(\"{}\")", sid)
}

pub fn interest_config<S: Shard>(slot: &mut Option<S>) -> i32 {
    install_panic_hook();
    let s = started(slot, "tessera_interest_config");
    runtime().output.clear();
    let config = match s.interest() {
        Some(c) => c,
        None => return abi::NO_STATE,
    };
    if !(config.cell_size.is_finite() && config.cell_size > 0.0 && config.margin.is_finite() && config.margin >= 0.0)
    {
        panic!(
            "interest(): cell_size must be a finite number > 0 and margin a finite number >= 0 (got {} and {})",
            config.cell_size, config.margin
        );
    }
    let mut w = Writer { out: &mut runtime().output };
    w.f64(config.cell_size as f64);
    w.f64(config.margin as f64);
    w.u8(if config.shared_snapshots { abi::INTEREST_FLAG_SHARED_SNAPSHOTS } else { 0 });
    abi::OK
}

pub fn entities<S: Shard>(slot: &mut Option<S>) -> i32 {
    install_panic_hook();
    let s = started(slot, "tessera_entities");
    runtime().output.clear();
    let mut list: Vec<EntityPos> = Vec::new();
    if s.entities(&mut list) {
        let mut ids: Vec<u64> = list.iter().map(|e| e.id).collect();
        ids.sort_unstable();
        if let Some(pair) = ids.windows(2).find(|p| p[0] == p[1]) {
            panic!("entities(): entity id {} is listed twice", pair[0]);
        }
    } else {
        list.clear();
        let y_up = s.replication_config().y_up;
        if let Some(store) = s.replicated() {
            store.entity_positions(y_up, &mut list);
        }
    }
    let mut w = Writer { out: &mut runtime().output };
    w.u32(list.len() as u32);
    for e in &list {
        if e.id >= abi::ENTITY_ID_LIMIT {
            panic!("entities(): entity id {} is too large (ids must be below 2^53)", e.id);
        }
        if !(e.x.is_finite() && e.y.is_finite()) {
            panic!("entities(): entity {} has a position that is not a finite float", e.id);
        }
        w.u64(e.id);
        w.u32(e.generation);
        w.f32(e.x);
        w.f32(e.y);
    }
    abi::OK
}

/// # Safety
/// As [`init`].
pub unsafe fn interest_areas<S: Shard>(slot: &mut Option<S>, ptr: usize, len: u32) -> i32 {
    install_panic_hook();
    let arg = Arg::new(ptr, len);
    let s = started(slot, "tessera_interest_areas");
    let mut out = std::mem::take(&mut runtime().output);
    out.clear();
    let mut r = Reader::new(arg.bytes());
    let count = r.u32("subscriber count");
    if !r.can_hold(count as u64, 4) {
        r.fail("count larger than the argument", Some("subscriber count"));
    }
    {
        let mut w = Writer { out: &mut out };
        let mut i = 0;
        while i < count && r.ok() {
            i += 1;
            let sid = r.str("subscriber id");
            if !r.ok() {
                break;
            }
            let sid = String::from_utf8_lossy(sid);
            match s.interest_area(&sid) {
                None => {
                    w.u8(0);
                    w.f32(0.0);
                    w.f32(0.0);
                    w.f32(0.0);
                }
                Some(a) => {
                    if !(a.x.is_finite() && a.y.is_finite() && a.radius.is_finite() && a.radius >= 0.0) {
                        panic!(
                            "interest_area{}: x, y and radius must be finite and radius >= 0",
                            quoted(&sid)
                        );
                    }
                    w.u8(1);
                    w.f32(a.x);
                    w.f32(a.y);
                    w.f32(a.radius);
                }
            }
        }
    }
    runtime().output = out;
    if !r.finish() {
        return malformed("tessera_interest_areas", &r);
    }
    abi::OK
}

/// # Safety
/// As [`init`].
pub unsafe fn filter<S: Shard>(slot: &mut Option<S>, ptr: usize, len: u32) -> i32 {
    install_panic_hook();
    let arg = Arg::new(ptr, len);
    let s = started(slot, "tessera_filter");
    let mut out = std::mem::take(&mut runtime().output);
    out.clear();
    let mut r = Reader::new(arg.bytes());
    let count = r.u32("subscriber count");
    if !r.can_hold(count as u64, 8) {
        r.fail("count larger than the argument", Some("subscriber count"));
    }
    let mut i = 0;
    while i < count && r.ok() {
        i += 1;
        let sid = String::from_utf8_lossy(r.str("subscriber id")).into_owned();
        let n = r.u32("id count");
        if !r.can_hold(n as u64, 8) {
            r.fail("count larger than the argument", Some("ids"));
        }
        if !r.ok() {
            break;
        }
        let at = out.len();
        out.resize(at + (n as usize + 7) / 8, 0);
        for j in 0..n as usize {
            if s.can_see(&sid, r.u64("id")) {
                out[at + j / 8] |= 1 << (j % 8);
            }
        }
    }
    runtime().output = out;
    if !r.finish() {
        return malformed("tessera_filter", &r);
    }
    abi::OK
}

fn read_ids(r: &mut Reader<'_>, what: &str, out: &mut Vec<u64>) {
    out.clear();
    let n = r.u32(what);
    if !r.can_hold(n as u64, 8) {
        return r.fail("count larger than the argument", Some(what));
    }
    out.reserve(n as usize);
    for _ in 0..n {
        out.push(r.u64(what));
    }
}

/// # Safety
/// As [`init`].
pub unsafe fn snapshot_visible<S: Shard>(slot: &mut Option<S>, ptr: usize, len: u32) -> i32 {
    install_panic_hook();
    let arg = Arg::new(ptr, len);
    let s = started(slot, "tessera_snapshot_visible");
    runtime().output.clear();
    let mut r = Reader::new(arg.bytes());
    let sid = String::from_utf8_lossy(r.str("subscriber id")).into_owned();
    let (mut visible, mut entered, mut left) = (Vec::new(), Vec::new(), Vec::new());
    read_ids(&mut r, "visible ids", &mut visible);
    read_ids(&mut r, "entered ids", &mut entered);
    read_ids(&mut r, "left ids", &mut left);
    if !r.finish() {
        return malformed("tessera_snapshot_visible", &r);
    }
    let view = View { visible: &visible, entered: &entered, left: &left };
    let snap = s.snapshot_visible(&sid, &view);
    let rt = runtime();
    codec::encode_into(rt.codec, &snap, &mut rt.output);
    abi::OK
}

fn checked_precision<S: Shard>(s: &S) -> crate::ReplicationConfig {
    let config = s.replication_config();
    if !(config.precision.is_finite() && config.precision > 0.0) {
        panic!("replication_config(): precision must be a finite number > 0 (got {})", config.precision);
    }
    config
}

pub fn replication_config<S: Shard>(slot: &mut Option<S>) -> i32 {
    install_panic_hook();
    let s = started(slot, "tessera_replication_config");
    runtime().output.clear();
    if s.replicated().is_none() {
        return abi::NO_STATE;
    }
    let config = checked_precision(s);
    let mut w = Writer { out: &mut runtime().output };
    w.f64(config.precision);
    w.u32(config.max_bytes_per_tick);
    w.u8(if config.y_up { abi::REPLICATION_FLAG_Y_UP } else { 0 });
    abi::OK
}

pub fn replicated<S: Shard>(slot: &mut Option<S>) -> i32 {
    install_panic_hook();
    let s = started(slot, "tessera_replicated");
    runtime().output.clear();
    let precision = checked_precision(s).precision;
    let store = match s.replicated() {
        Some(store) => store,
        None => panic!(
            "tessera_replicated: replicated() returned None, but it returned a store when the host read the replication config"
        ),
    };
    store.take_changes(precision, &mut runtime().output);
    abi::OK
}

/// # Safety
/// As [`init`].
pub unsafe fn transfer_out<S: Shard>(slot: &mut Option<S>, sid_ptr: usize, sid_len: u32) -> i32 {
    install_panic_hook();
    let sid = Arg::new(sid_ptr, sid_len);
    let s = started(slot, "tessera_transfer_out");
    runtime().output.clear();
    let sid = match text(sid.bytes(), "the subscriber id") {
        Ok(sid) => sid,
        Err(e) => return fail_with(&format!("tessera_transfer_out: {}", e)),
    };
    match s.transfer_out(sid) {
        Ok(Some(state)) => {
            runtime().output = state;
            abi::OK
        }
        Ok(None) => abi::NO_STATE,
        Err(e) => fail_with(&e),
    }
}

/// # Safety
/// As [`init`].
pub unsafe fn transfer_in<S: Shard>(slot: &mut Option<S>, ptr: usize, len: u32) -> i32 {
    install_panic_hook();
    let arg = Arg::new(ptr, len);
    let s = started(slot, "tessera_transfer_in");
    runtime().output.clear();
    let a = match talk_abi::decode_transfer_in(arg.bytes()) {
        Ok(a) => a,
        Err(e) => return fail_with(&format!("tessera_transfer_in: malformed argument: {}", e)),
    };
    let auth = Auth::new(a.subscriber, a.claims_json, a.peer_shard);
    match s.transfer_in(a.subscriber, a.state, &auth, a.returning) {
        Ok(()) => abi::OK,
        Err(e) => fail_with(&e),
    }
}

pub fn transfer_requests<S: Shard>(slot: &mut Option<S>) -> i32 {
    install_panic_hook();
    let s = started(slot, "tessera_transfer_requests");
    runtime().output.clear();
    let requests = s.transfer_requests();
    if requests.is_empty() {
        return abi::NO_STATE;
    }
    talk_abi::encode_transfer_requests(&requests, &mut runtime().output);
    abi::OK
}

pub fn groups<S: Shard>(slot: &mut Option<S>) -> i32 {
    install_panic_hook();
    let s = started(slot, "tessera_groups");
    runtime().output.clear();
    let groups = s.groups();
    if groups.is_empty() {
        return abi::NO_STATE;
    }
    talk_abi::encode_groups(&groups, &mut runtime().output);
    abi::OK
}

pub fn outbox<S: Shard>(slot: &mut Option<S>) -> i32 {
    install_panic_hook();
    let s = started(slot, "tessera_outbox");
    runtime().output.clear();
    let messages = s.outbox();
    if messages.is_empty() {
        return abi::NO_STATE;
    }
    talk_abi::encode_outbox(&messages, &mut runtime().output);
    abi::OK
}

/// # Safety
/// As [`init`].
pub unsafe fn on_messages<S: Shard>(slot: &mut Option<S>, ptr: usize, len: u32) -> i32 {
    install_panic_hook();
    let arg = Arg::new(ptr, len);
    let s = started(slot, "tessera_on_messages");
    runtime().output.clear();
    let batch = match talk_abi::decode_messages(arg.bytes()) {
        Ok(b) => b,
        Err(e) => return fail_with(&format!("tessera_on_messages: malformed argument: {}", e)),
    };
    for m in &batch {
        let from = String::from_utf8_lossy(m.from);
        let topic = String::from_utf8_lossy(m.topic);
        s.on_message(&from, &topic, m.data);
    }
    abi::OK
}

/// `OK` with the pending calls as JSON, or `NO_STATE` when there are none.
pub fn calls<S: Shard>(slot: &mut Option<S>) -> i32 {
    install_panic_hook();
    let s = started(slot, "tessera_calls");
    runtime().output.clear();
    let calls = s.calls();
    if calls.is_empty() {
        return abi::NO_STATE;
    }
    crate::calls::encode_json(&calls, &mut runtime().output);
    abi::OK
}

/// # Safety
/// As [`init`].
pub unsafe fn on_call_result<S: Shard>(slot: &mut Option<S>, ptr: usize, len: u32) -> i32 {
    install_panic_hook();
    let arg = Arg::new(ptr, len);
    let s = started(slot, "tessera_on_call_result");
    runtime().output.clear();
    let (key, result) = match crate::calls::decode_call_result(arg.bytes()) {
        Ok(v) => v,
        Err(e) => return fail_with(&format!("tessera_on_call_result: malformed argument: {}", e)),
    };
    s.on_call_result(&key, result);
    abi::OK
}

/// `OK` with the rows to write as JSON, or `NO_STATE` when there are none.
pub fn writes<S: Shard>(slot: &mut Option<S>) -> i32 {
    install_panic_hook();
    let s = started(slot, "tessera_writes");
    runtime().output.clear();
    let writes = s.writes();
    if writes.is_empty() {
        return abi::NO_STATE;
    }
    crate::calls::encode_json(&writes, &mut runtime().output);
    abi::OK
}

/// Native tests only: forgets the shard and all SDK state.
pub fn reset_for_testing<S>(slot: &mut Option<S>) {
    *slot = None;
    let rt = runtime();
    rt.output.clear();
    rt.codec = Codec::MsgPack;
    rt.finished = false;
    rt.reason.clear();
}

/// Native tests only: the output buffer.
pub fn output() -> &'static [u8] {
    &runtime().output
}
