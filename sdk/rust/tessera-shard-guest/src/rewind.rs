//! Lag compensation (docs/guest-abi.md, "Lag compensation"): the host tells
//! the shard what a subscriber saw when it acted, so a hit can be judged
//! against the picture the player drew rather than the present.

use crate::binary::Reader;

/// A position in world units.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Vec3 {
    /// x.
    pub x: f64,
    /// y.
    pub y: f64,
    /// z.
    pub z: f64,
}

/// Lag compensation on: how much history the host keeps per subscriber and
/// how far behind a view may be, on top of the round trip.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LagCompensation {
    /// Ticks of history (1..=256).
    pub history_ticks: u32,
    /// Extra delay allowed beyond the round trip (ms); 0 means 250.
    pub max_view_delay_ms: u32,
}

impl LagCompensation {
    /// `history_ticks` of history with the default view delay (250 ms).
    pub fn new(history_ticks: u32) -> Self {
        LagCompensation { history_ticks, max_view_delay_ms: crate::abi::DEFAULT_MAX_VIEW_DELAY_MS }
    }
}

/// What one subscriber drew when it sent an input: the (clamped) view tick
/// and every replicated entity's position in that picture, ids ascending.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Rewind {
    view_tick: f64,
    now_tick: u64,
    entities: Vec<(u64, Vec3)>,
}

impl Rewind {
    /// A rewind with these positions (sorted by id here), for tests and for
    /// shards that build their own.
    pub fn with_positions(view_tick: f64, now_tick: u64, mut positions: Vec<(u64, Vec3)>) -> Self {
        positions.sort_by_key(|(id, _)| *id);
        Rewind { view_tick, now_tick, entities: positions }
    }

    /// Where entity `id` was drawn; `None`: the subscriber did not draw it.
    pub fn position_at(&self, id: u64) -> Option<Vec3> {
        self.entities.binary_search_by_key(&id, |(i, _)| *i).ok().map(|k| self.entities[k].1)
    }

    /// The entities drawn within `radius` of `center` (3-D distance), in
    /// ascending id order.
    pub fn entities_near(&self, center: Vec3, radius: f64) -> Vec<(u64, Vec3)> {
        let r2 = radius * radius;
        self.entities
            .iter()
            .filter(|(_, p)| {
                let (dx, dy, dz) = (p.x - center.x, p.y - center.y, p.z - center.z);
                dx * dx + dy * dy + dz * dz <= r2
            })
            .copied()
            .collect()
    }

    /// The view tick, clamped by the host (may be fractional).
    pub fn tick(&self) -> f64 {
        self.view_tick
    }
    /// The newest tick sent to that subscriber.
    pub fn now_tick(&self) -> u64 {
        self.now_tick
    }
    /// How far behind the subscriber's picture was: `now_tick - tick()`.
    pub fn ticks_behind(&self) -> f64 {
        self.now_tick as f64 - self.view_tick
    }
    /// Every entity drawn, ids ascending.
    pub fn entities(&self) -> &[(u64, Vec3)] {
        &self.entities
    }

    /// Reads the ABI layout: `f64 view_tick, u64 now_tick, u32 count`, then
    /// count x `u64 id, f64 x, f64 y, f64 z`.
    pub(crate) fn read(bytes: &[u8]) -> Result<Rewind, String> {
        let mut r = Reader::new(bytes);
        let view_tick = f64::from_bits(r.u64("view tick"));
        let now_tick = r.u64("now tick");
        let n = r.u32("entity count");
        if !r.can_hold(n as u64, 32) {
            r.fail("count larger than the argument", Some("entity count"));
        }
        let mut entities = Vec::with_capacity(if r.ok() { n as usize } else { 0 });
        for _ in 0..n {
            if !r.ok() {
                break;
            }
            let id = r.u64("entity id");
            let x = f64::from_bits(r.u64("x"));
            let y = f64::from_bits(r.u64("y"));
            let z = f64::from_bits(r.u64("z"));
            entities.push((id, Vec3 { x, y, z }));
        }
        if !r.finish() {
            return Err(r.error().to_string());
        }
        if !entities.windows(2).all(|w| w[0].0 < w[1].0) {
            return Err("entity ids are not ascending".to_string());
        }
        Ok(Rewind { view_tick, now_tick, entities })
    }
}
