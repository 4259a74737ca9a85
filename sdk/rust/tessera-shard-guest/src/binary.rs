//! Little-endian readers and writers for the binary layouts of
//! docs/guest-abi.md ("Interest and replication", "Transfers and
//! messages").

pub(crate) struct Writer<'a> {
    pub out: &'a mut Vec<u8>,
}

impl<'a> Writer<'a> {
    pub fn u8(&mut self, v: u8) {
        self.out.push(v);
    }
    pub fn u32(&mut self, v: u32) {
        self.out.extend_from_slice(&v.to_le_bytes());
    }
    pub fn u64(&mut self, v: u64) {
        self.out.extend_from_slice(&v.to_le_bytes());
    }
    pub fn f32(&mut self, v: f32) {
        self.out.extend_from_slice(&v.to_le_bytes());
    }
    pub fn f64(&mut self, v: f64) {
        self.out.extend_from_slice(&v.to_le_bytes());
    }
    pub fn bytes(&mut self, b: &[u8]) {
        self.out.extend_from_slice(b);
    }
    /// A `str` of the layouts: a u32 byte length, then the bytes.
    pub fn str(&mut self, b: &[u8]) {
        self.u32(b.len() as u32);
        self.bytes(b);
    }
    pub fn len(&self) -> usize {
        self.out.len()
    }
    pub fn patch_u32(&mut self, at: usize, v: u32) {
        self.out[at..at + 4].copy_from_slice(&v.to_le_bytes());
    }
}

/// After the first failure every read returns zero and `error` says what
/// was short, as the C++ SDK's reader.
pub(crate) struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
    error: Option<String>,
}

impl<'a> Reader<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        Reader { data, pos: 0, error: None }
    }
    pub fn ok(&self) -> bool {
        self.error.is_none()
    }
    pub fn error(&self) -> &str {
        self.error.as_deref().unwrap_or("")
    }
    pub fn fail(&mut self, problem: &str, what: Option<&str>) {
        if self.error.is_some() {
            return;
        }
        let mut e = problem.to_string();
        if let Some(w) = what {
            e.push_str(" reading ");
            e.push_str(w);
        }
        e.push_str(&format!(" at byte {}", self.pos));
        self.error = Some(e);
    }
    fn take(&mut self, n: usize, what: &str) -> Option<&'a [u8]> {
        if self.error.is_some() {
            return None;
        }
        if self.data.len() - self.pos < n {
            self.fail("unexpected end", Some(what));
            return None;
        }
        let s = &self.data[self.pos..self.pos + n];
        self.pos += n;
        Some(s)
    }
    fn le(&mut self, n: usize, what: &str) -> u64 {
        match self.take(n, what) {
            Some(b) => b.iter().rev().fold(0u64, |v, &x| (v << 8) | x as u64),
            None => 0,
        }
    }
    pub fn u32(&mut self, what: &str) -> u32 {
        self.le(4, what) as u32
    }
    pub fn u64(&mut self, what: &str) -> u64 {
        self.le(8, what)
    }
    /// A u32 byte length, then that many bytes.
    pub fn str(&mut self, what: &str) -> &'a [u8] {
        let n = self.u32(what) as usize;
        self.take(n, what).unwrap_or(&[])
    }
    /// Whether `count` items of at least `item_bytes` each can still follow.
    pub fn can_hold(&self, count: u64, item_bytes: usize) -> bool {
        self.ok() && count <= ((self.data.len() - self.pos) / item_bytes) as u64
    }
    /// Fails unless every byte was read.
    pub fn finish(&mut self) -> bool {
        if self.ok() && self.pos != self.data.len() {
            self.fail("trailing bytes", None);
        }
        self.ok()
    }
}
