//! The raw host functions. In a wasm32 build they are the module's imports
//! from `tessera_compute_v1`; in a native build (tests) they call the
//! thread's [`testing::FakeHost`](crate::testing::FakeHost), which follows
//! the same contract, so the safe wrappers run the same code either way.
//!
//! Pointers are guest memory addresses; the host reads or writes them
//! during the call only.

#[cfg(target_arch = "wasm32")]
#[link(wasm_import_module = "tessera_compute_v1")]
extern "C" {
    #[link_name = "log"]
    pub fn log(level: i32, ptr: *const u8, len: usize);
    #[link_name = "now_ms"]
    pub fn now_ms() -> i64;
    #[link_name = "random_bytes"]
    pub fn random_bytes(ptr: *mut u8, len: usize) -> i32;
    #[link_name = "state_get"]
    pub fn state_get(ptr: *mut u8, cap: usize) -> i32;
    #[link_name = "state_set"]
    pub fn state_set(ptr: *const u8, len: usize) -> i32;
    #[link_name = "emit_event"]
    pub fn emit_event(name_ptr: *const u8, name_len: usize, ptr: *const u8, len: usize) -> i32;
    #[link_name = "emit_channel"]
    pub fn emit_channel(
        channel_ptr: *const u8,
        channel_len: usize,
        ptr: *const u8,
        len: usize,
    ) -> i32;
    #[link_name = "emit_spatial"]
    pub fn emit_spatial(
        shard_ptr: *const u8,
        shard_len: usize,
        x: f32,
        y: f32,
        radius: f32,
        ptr: *const u8,
        len: usize,
    ) -> i32;
    #[link_name = "last_error"]
    pub fn last_error(ptr: *mut u8, cap: usize) -> i32;
    #[link_name = "data"]
    pub fn data(op_ptr: *const u8, op_len: usize, req_ptr: *const u8, req_len: usize) -> i32;
    #[link_name = "shards"]
    pub fn shards(op_ptr: *const u8, op_len: usize, req_ptr: *const u8, req_len: usize) -> i32;
    #[link_name = "reply"]
    pub fn reply(ptr: *mut u8, cap: usize) -> i32;
}

#[cfg(not(target_arch = "wasm32"))]
pub use native::*;

#[cfg(not(target_arch = "wasm32"))]
mod native {
    use crate::testing::with_host;

    unsafe fn bytes<'a>(ptr: *const u8, len: usize) -> &'a [u8] {
        if len == 0 {
            &[]
        } else {
            std::slice::from_raw_parts(ptr, len)
        }
    }

    unsafe fn text(ptr: *const u8, len: usize) -> String {
        String::from_utf8_lossy(bytes(ptr, len)).into_owned()
    }

    /// Copies `src` to (ptr, cap), as much as fits, and returns its size.
    unsafe fn copy_out(src: &[u8], ptr: *mut u8, cap: usize) -> i32 {
        let n = src.len().min(cap);
        if n > 0 {
            std::ptr::copy_nonoverlapping(src.as_ptr(), ptr, n);
        }
        src.len() as i32
    }

    pub unsafe fn log(level: i32, ptr: *const u8, len: usize) {
        let line = text(ptr, len);
        with_host(|h| h.log_line(level, line));
    }

    pub unsafe fn now_ms() -> i64 {
        with_host(|h| h.now_ms)
    }

    pub unsafe fn random_bytes(ptr: *mut u8, len: usize) -> i32 {
        let out = if len == 0 { &mut [][..] } else { std::slice::from_raw_parts_mut(ptr, len) };
        with_host(|h| h.fill_random(out))
    }

    pub unsafe fn state_get(ptr: *mut u8, cap: usize) -> i32 {
        match with_host(|h| h.get_state()) {
            Ok(Some(blob)) => copy_out(&blob, ptr, cap),
            Ok(None) => -1,
            Err(code) => code,
        }
    }

    pub unsafe fn state_set(ptr: *const u8, len: usize) -> i32 {
        let blob = bytes(ptr, len).to_vec();
        with_host(|h| h.set_state(blob))
    }

    pub unsafe fn emit_event(name_ptr: *const u8, name_len: usize, ptr: *const u8, len: usize) -> i32 {
        let name = text(name_ptr, name_len);
        let payload = bytes(ptr, len).to_vec();
        with_host(|h| h.emit("event", name, payload))
    }

    pub unsafe fn emit_channel(
        channel_ptr: *const u8,
        channel_len: usize,
        ptr: *const u8,
        len: usize,
    ) -> i32 {
        let channel = text(channel_ptr, channel_len);
        let payload = bytes(ptr, len).to_vec();
        with_host(|h| h.emit("channel", channel, payload))
    }

    pub unsafe fn emit_spatial(
        shard_ptr: *const u8,
        shard_len: usize,
        x: f32,
        y: f32,
        radius: f32,
        ptr: *const u8,
        len: usize,
    ) -> i32 {
        let target = format!("{}@{},{},{}", text(shard_ptr, shard_len), x, y, radius);
        let payload = bytes(ptr, len).to_vec();
        with_host(|h| h.emit("spatial", target, payload))
    }

    pub unsafe fn last_error(ptr: *mut u8, cap: usize) -> i32 {
        let json = with_host(|h| h.last_error_json());
        copy_out(json.as_bytes(), ptr, cap)
    }

    pub unsafe fn data(op_ptr: *const u8, op_len: usize, req_ptr: *const u8, req_len: usize) -> i32 {
        let op = text(op_ptr, op_len);
        let request = text(req_ptr, req_len);
        with_host(|h| h.host_op("data", op, request))
    }

    pub unsafe fn shards(op_ptr: *const u8, op_len: usize, req_ptr: *const u8, req_len: usize) -> i32 {
        let op = text(op_ptr, op_len);
        let request = text(req_ptr, req_len);
        with_host(|h| h.host_op("shards", op, request))
    }

    pub unsafe fn reply(ptr: *mut u8, cap: usize) -> i32 {
        let reply = with_host(|h| h.reply.clone());
        copy_out(reply.as_bytes(), ptr, cap)
    }
}
