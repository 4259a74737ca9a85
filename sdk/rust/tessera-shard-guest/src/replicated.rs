//! The replicated entity store: the shard keeps its entities here and the
//! host sends each subscriber the changes instead of whole snapshots
//! (docs/guest-abi.md and docs/protocol.md, "Interest and replication").

use std::collections::BTreeMap;

use serde::Serialize;

use crate::abi;
use crate::binary::Writer;
use crate::interest::EntityPos;

/// How the host quantises and budgets replicated entities.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ReplicationConfig {
    /// World units per quantisation step (> 0): clients see every
    /// coordinate within precision / 2. |coordinate / precision| must stay
    /// below 2^52.
    pub precision: f64,
    /// Byte budget of each subscriber's entity changes per tick; 0: none.
    pub max_bytes_per_tick: u32,
    /// The ground plane is (x, z) with y up; otherwise (x, y) with z up.
    pub y_up: bool,
}

impl Default for ReplicationConfig {
    fn default() -> Self {
        ReplicationConfig { precision: 0.01, max_bytes_per_tick: 0, y_up: false }
    }
}

#[derive(Clone, Debug, Default)]
struct Component {
    id: u8,
    present: bool, // false: a tombstone of a component the host has
    held: bool,    // the host has this component
    dirty: bool,   // set or removed since the host's last read
    bytes: Vec<u8>,
}

#[derive(Clone, Debug, Default)]
struct Entity {
    pos: [f64; 3],
    held_pos: [f64; 3],         // what the host has (when held)
    components: Vec<Component>, // ascending ids
    present_components: u32,
    generation: u32, // bumped when the id is reused
    held: bool,      // the host has this incarnation
    listed: bool,    // in dirty
}

#[derive(Clone, Copy, Debug, Default)]
struct Removed {
    generation: u32, // of the last incarnation removed
    held: bool,      // the host still has an incarnation
}

/// The replicated entities of a shard: each an id below 2^53, a position
/// (x, y, z) in world units and up to 255 components (opaque byte strings
/// keyed by a `u8`; [`set_component_value`](Replicated::set_component_value)
/// encodes a value in the shard's codec). The store records what changed
/// since the host last read it, so setting a value it already has sends
/// nothing. It is a plain value: keep it as a field of the shard and return
/// it from [`Shard::replicated`](crate::Shard::replicated).
#[derive(Clone, Debug, Default)]
pub struct Replicated {
    entities: BTreeMap<u64, Entity>,
    dirty: Vec<u64>,
    removed: BTreeMap<u64, Removed>,
    read_once: bool,
}

fn check_id(id: u64, call: &str) {
    if id >= abi::ENTITY_ID_LIMIT {
        panic!(
            "tessera::Replicated::{}: entity id {} is too large (ids must be below 2^53 = 9007199254740992)",
            call, id
        );
    }
}

impl Replicated {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets an entity's position, creating the entity (with no components)
    /// if the id is new. Panics when `id` >= 2^53 or a coordinate is not
    /// finite.
    pub fn set_pos(&mut self, id: u64, x: f64, y: f64, z: f64) {
        check_id(id, "set_pos");
        if !(x.is_finite() && y.is_finite() && z.is_finite()) {
            panic!("tessera::Replicated::set_pos: entity {}: coordinates must be finite", id);
        }
        let e = self.find_or_create(id);
        if e.pos == [x, y, z] {
            return;
        }
        e.pos = [x, y, z];
        Self::touch(&mut self.dirty, id, self.entities.get_mut(&id).unwrap());
    }

    /// Sets a component's bytes, creating the entity (at (0, 0, 0)) if the
    /// id is new. Equal bytes record no change. Panics when `id` >= 2^53 or
    /// the entity would hold more than 255 components.
    pub fn set_component(&mut self, id: u64, component: u8, bytes: &[u8]) {
        check_id(id, "set_component");
        let e = self.find_or_create(id);
        let at = e.components.partition_point(|c| c.id < component);
        if at < e.components.len() && e.components[at].id == component {
            let c = &e.components[at];
            if c.present && c.bytes == bytes {
                return;
            }
            if !c.present {
                Self::count_component(id, e);
            }
            let c = &mut e.components[at];
            c.present = true;
            c.bytes.clear();
            c.bytes.extend_from_slice(bytes);
            c.dirty = true;
        } else {
            Self::count_component(id, e);
            e.components.insert(
                at,
                Component { id: component, present: true, held: false, dirty: true, bytes: bytes.to_vec() },
            );
        }
        Self::touch(&mut self.dirty, id, self.entities.get_mut(&id).unwrap());
    }

    /// [`set_component`](Replicated::set_component) with `value` encoded in
    /// the shard's codec (MessagePack before `tessera_init`).
    pub fn set_component_value<T: Serialize + ?Sized>(&mut self, id: u64, component: u8, value: &T) {
        let bytes = crate::codec::encode(crate::runtime::codec(), value);
        self.set_component(id, component, &bytes);
    }

    /// Removes a component; nothing happens if the entity or component is
    /// not there.
    pub fn remove_component(&mut self, id: u64, component: u8) {
        let e = match self.entities.get_mut(&id) {
            Some(e) => e,
            None => return,
        };
        let at = e.components.partition_point(|c| c.id < component);
        if at >= e.components.len() || e.components[at].id != component || !e.components[at].present {
            return;
        }
        e.present_components -= 1;
        if e.components[at].held {
            // The host has it: keep a tombstone until the next read.
            let c = &mut e.components[at];
            c.present = false;
            c.dirty = true;
            c.bytes.clear();
            Self::touch(&mut self.dirty, id, e);
        } else {
            e.components.remove(at);
        }
    }

    /// Removes an entity; nothing happens if it is not there. Setting the
    /// same id again before the host's next read reuses the id: clients see
    /// the old entity leave and a new one enter.
    pub fn remove(&mut self, id: u64) {
        let e = match self.entities.remove(&id) {
            Some(e) => e,
            None => return,
        };
        let r = self.removed.entry(id).or_insert(Removed { generation: 0, held: false });
        // The host holds the id if it held this incarnation or an earlier
        // one removed since its last read.
        r.held = e.held || r.held;
        r.generation = e.generation;
    }

    /// Whether the store has an entity `id`.
    pub fn contains(&self, id: u64) -> bool {
        self.entities.contains_key(&id)
    }
    /// The number of entities.
    pub fn len(&self) -> usize {
        self.entities.len()
    }
    /// Whether the store has no entities.
    pub fn is_empty(&self) -> bool {
        self.entities.is_empty()
    }
    /// The entity's position, if there is such an entity.
    pub fn pos(&self, id: u64) -> Option<[f64; 3]> {
        self.entities.get(&id).map(|e| e.pos)
    }
    /// A component's bytes, if present.
    pub fn component(&self, id: u64, component: u8) -> Option<&[u8]> {
        let e = self.entities.get(&id)?;
        e.components.iter().find(|c| c.id == component && c.present).map(|c| c.bytes.as_slice())
    }
    /// Every entity's id and position, in ascending id order.
    pub fn iter(&self) -> impl Iterator<Item = (u64, [f64; 3])> + '_ {
        self.entities.iter().map(|(id, e)| (*id, e.pos))
    }

    fn count_component(id: u64, e: &mut Entity) {
        if e.present_components == 255 {
            panic!(
                "tessera::Replicated::set_component: entity {} already holds 255 components, the most one entity can have",
                id
            );
        }
        e.present_components += 1;
    }

    fn find_or_create(&mut self, id: u64) -> &mut Entity {
        if !self.entities.contains_key(&id) {
            let mut e = Entity::default();
            if let Some(r) = self.removed.get(&id) {
                e.generation = r.generation.wrapping_add(1);
            }
            Self::touch(&mut self.dirty, id, &mut e);
            self.entities.insert(id, e);
        }
        self.entities.get_mut(&id).unwrap()
    }

    fn touch(dirty: &mut Vec<u64>, id: u64, e: &mut Entity) {
        if e.listed {
            return;
        }
        e.listed = true;
        dirty.push(id);
    }

    /// Appends every entity's ground-plane position and generation.
    pub(crate) fn entity_positions(&self, y_up: bool, out: &mut Vec<EntityPos>) {
        out.reserve(self.entities.len());
        for (id, e) in &self.entities {
            out.push(EntityPos {
                id: *id,
                x: e.pos[0] as f32,
                y: (if y_up { e.pos[2] } else { e.pos[1] }) as f32,
                generation: e.generation,
            });
        }
    }

    /// Writes the `tessera_replicated` output: the changes since the
    /// previous call (a FULL listing the first time), then forgets them.
    /// Panics when a coordinate is too large for `precision`.
    pub(crate) fn take_changes(&mut self, precision: f64, out: &mut Vec<u8>) {
        let mut w = Writer { out };
        let full = !self.read_once;
        w.u8(if full { abi::REPLICATED_FLAG_FULL } else { 0 });
        let removed_at = w.len();
        w.u32(0);
        let mut removed = 0u32;
        if !full {
            for (id, r) in &self.removed {
                if r.held {
                    w.u64(*id);
                    removed += 1;
                }
            }
        }
        w.patch_u32(removed_at, removed);

        let changed_at = w.len();
        w.u32(0);
        let mut changed = 0u32;
        if full {
            for (id, e) in &self.entities {
                changed += write_entity(&mut w, *id, e, true, precision);
            }
        } else {
            self.dirty.sort_unstable();
            self.dirty.dedup();
            for id in &self.dirty {
                if let Some(e) = self.entities.get(id) {
                    changed += write_entity(&mut w, *id, e, !e.held, precision);
                }
            }
        }
        w.patch_u32(changed_at, changed);

        // The host now has the current state.
        if full {
            for e in self.entities.values_mut() {
                settle(e);
            }
        } else {
            for id in &self.dirty {
                if let Some(e) = self.entities.get_mut(id) {
                    settle(e);
                }
            }
        }
        self.dirty.clear();
        self.removed.clear();
        self.read_once = true;
    }
}

fn sends(c: &Component, is_new: bool) -> bool {
    if is_new {
        c.present
    } else {
        c.dirty && (c.present || c.held)
    }
}

/// Writes one entity's entry if there is anything to say; returns 1 if it
/// wrote one.
fn write_entity(w: &mut Writer<'_>, id: u64, e: &Entity, is_new: bool, precision: f64) -> u32 {
    // A new entity starts at (0, 0, 0) on the host.
    let base = if is_new { [0.0; 3] } else { e.held_pos };
    let pos = e.pos != base;
    let components = e.components.iter().filter(|c| sends(c, is_new)).count();
    if !is_new && !pos && components == 0 {
        return 0;
    }
    if components > 255 {
        panic!("tessera::Replicated: entity {} changed more than 255 components at once", id);
    }
    w.u64(id);
    w.u8((if is_new { abi::REPLICATED_WHAT_NEW } else { 0 }) | (if pos { abi::REPLICATED_WHAT_POS } else { 0 }));
    if pos {
        for v in e.pos {
            if !((v / precision).abs() < 4503599627370496.0) {
                panic!(
                    "tessera::Replicated: entity {}: coordinate {} is too large for precision {} (|coordinate / precision| must stay below 2^52)",
                    id, v, precision
                );
            }
            w.f64(v);
        }
    }
    w.u8(components as u8);
    for c in e.components.iter().filter(|c| sends(c, is_new)) {
        w.u8(c.id);
        if c.present {
            w.u32(c.bytes.len() as u32 + 1);
            w.bytes(&c.bytes);
        } else {
            w.u32(0); // removed
        }
    }
    1
}

fn settle(e: &mut Entity) {
    e.held = true;
    e.listed = false;
    e.held_pos = e.pos;
    e.components.retain(|c| c.present);
    for c in &mut e.components {
        c.held = true;
        c.dirty = false;
    }
}
