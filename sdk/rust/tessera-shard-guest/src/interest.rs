//! Interest management: what a shard tells the host so that each subscriber
//! sees only the entities near it (docs/guest-abi.md, "Interest and
//! replication"). The hooks are methods of [`Shard`](crate::Shard) with
//! defaults that keep interest off.

/// Interest on: the grid the host sorts entities into.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct InterestConfig {
    /// The grid's cell, in world units (> 0).
    pub cell_size: f32,
    /// Hysteresis (>= 0): an entity leaves a view only once it is `margin`
    /// beyond the radius.
    pub margin: f32,
    /// Subscribers with equal visible sets share one `snapshot_visible`
    /// call; valid only when that snapshot depends on the visible set alone.
    pub shared_snapshots: bool,
}

/// One entity on the ground plane.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct EntityPos {
    /// Below 2^53, unique per tick.
    pub id: u64,
    /// Ground-plane x.
    pub x: f32,
    /// Ground-plane y.
    pub y: f32,
    /// Changes when the id is removed and reused, so subscribers who saw it
    /// get it in both `left` and `entered`.
    pub generation: u32,
}

/// A subscriber's interest area: a circle on the ground plane.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct InterestArea {
    /// Centre x.
    pub x: f32,
    /// Centre y.
    pub y: f32,
    /// Radius (>= 0).
    pub radius: f32,
}

/// What one subscriber sees this tick; each list in ascending id order.
#[derive(Clone, Copy, Debug, Default)]
pub struct View<'a> {
    /// Everything in view now.
    pub visible: &'a [u64],
    /// In view now, not last tick.
    pub entered: &'a [u64],
    /// In view last tick, not now.
    pub left: &'a [u64],
}
