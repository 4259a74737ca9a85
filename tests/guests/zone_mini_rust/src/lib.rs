//! Test guest "zone_mini_rust": tests/guests/zone_mini/zone_mini.cc in Rust,
//! with the same params, inputs, rejections, snapshots and hooks (see that
//! file's comment). tests/rust/rust_guest_test.cc runs both with the same
//! inputs and compares every export's bytes.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use tessera_shard_guest::{
    export_shard, restore_value, save_value, EntityPos, InterestArea, InterestConfig, Replicated, ReplicationConfig,
    Shard, View,
};

#[derive(Deserialize)]
#[serde(default)]
struct Params {
    mode: String,
    budget: u32,
    shared: bool,
    radius: f32,
    movers: u32,
}

impl Default for Params {
    fn default() -> Self {
        Params { mode: "interest".into(), budget: 0, shared: false, radius: 200.0, movers: 0 }
    }
}

fn default_kind() -> String {
    "thing".into()
}

#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum Input {
    Join {},
    MoveTo {
        #[serde(default)]
        x: f64,
        #[serde(default)]
        y: f64,
    },
    Spawn {
        #[serde(default)]
        id: u64,
        #[serde(default)]
        x: f64,
        #[serde(default)]
        y: f64,
        #[serde(default = "default_kind")]
        kind: String,
    },
    Remove {
        #[serde(default)]
        id: u64,
    },
    Reuse {
        #[serde(default)]
        id: u64,
        #[serde(default)]
        x: f64,
        #[serde(default)]
        y: f64,
    },
    SetComponent {
        #[serde(default)]
        id: u64,
        #[serde(default)]
        component: u32,
        #[serde(default)]
        value: String,
    },
    RemoveComponent {
        #[serde(default)]
        id: u64,
        #[serde(default)]
        component: u32,
    },
}

#[derive(Serialize, Deserialize, Clone)]
struct Component {
    id: u32,
    value: String,
}

#[derive(Serialize, Deserialize, Clone)]
struct Entity {
    id: u64,
    kind: String,
    x: f64,
    y: f64,
    generation: u32,
    components: Vec<Component>, // besides the kind
}

#[derive(Serialize, Deserialize, Clone)]
struct Player {
    sid: String,
    id: u64,
}

#[derive(Serialize, Deserialize, Clone)]
struct World {
    entities: Vec<Entity>, // ascending ids
    players: Vec<Player>,
    next_player_id: u64,
}

#[derive(Serialize)]
struct Snapshot {
    entities: u64,
    players: u64,
}

// What snapshot_visible returns: the C++ guest's VisibleSnapshot, and the
// broadcast Snapshot, are both possible as the one Snapshot type.
#[derive(Serialize)]
#[serde(untagged)]
enum Snap {
    Counts(Snapshot),
    Visible { visible: Vec<u64>, entered: Vec<u64>, left: Vec<u64> },
}

const ID_LIMIT: u64 = 1 << 53;
const ZONE_LIMIT: f64 = 10000.0;

struct ZoneMini {
    params: Params,
    world: World,
    store: Replicated,
}

fn no_entity(id: u64) -> Result<(), String> {
    Err(format!("no entity {}", id))
}

fn check_component(component: u32) -> Result<(), String> {
    if component == 1 {
        return Err("component 1 is the kind".into());
    }
    if component == 0 || component > 255 {
        return Err(format!("component {} out of range (2..255)", component));
    }
    Ok(())
}

fn in_zone(x: f64, y: f64) -> bool {
    (-ZONE_LIMIT..=ZONE_LIMIT).contains(&x) && (-ZONE_LIMIT..=ZONE_LIMIT).contains(&y)
}

impl ZoneMini {
    fn replicating(&self) -> bool {
        self.params.mode == "replicate" || self.params.mode == "replicate_all"
    }
    fn index(&self, id: u64) -> Option<usize> {
        self.world.entities.binary_search_by_key(&id, |e| e.id).ok()
    }
    fn find(&self, id: u64) -> Option<&Entity> {
        self.index(id).map(|i| &self.world.entities[i])
    }
    fn player_entity(&self, sid: &str) -> Option<&Entity> {
        let p = self.world.players.iter().find(|p| p.sid == sid)?;
        self.find(p.id)
    }
    fn place_player(&mut self, sid: &str, x: f64, y: f64) {
        let id = match self.world.players.iter().find(|p| p.sid == sid) {
            Some(p) => p.id,
            None => {
                while self.find(self.world.next_player_id).is_some() {
                    self.world.next_player_id += 1;
                }
                let id = self.world.next_player_id;
                self.world.players.push(Player { sid: sid.to_string(), id });
                self.world.next_player_id += 1;
                id
            }
        };
        match self.index(id) {
            Some(i) => self.move_to(i, x, y),
            None => self.spawn(id, "player", x, y),
        }
    }
    fn spawn(&mut self, id: u64, kind: &str, x: f64, y: f64) {
        self.add(Entity { id, kind: kind.to_string(), x, y, generation: 0, components: Vec::new() });
    }
    // Adds to the world and the store (the store's own generation counter
    // follows the same reuses as Entity::generation).
    fn add(&mut self, e: Entity) {
        if self.replicating() {
            self.store.set_pos(e.id, e.x, e.y, 0.0);
            self.store.set_component(e.id, 1, e.kind.as_bytes());
            for c in &e.components {
                self.store.set_component(e.id, c.id as u8, c.value.as_bytes());
            }
        }
        let at = self.world.entities.partition_point(|a| a.id < e.id);
        self.world.entities.insert(at, e);
    }
    fn erase(&mut self, id: u64) {
        self.world.entities.retain(|e| e.id != id);
        if self.replicating() {
            self.store.remove(id);
        }
    }
    fn move_to(&mut self, i: usize, x: f64, y: f64) {
        let e = &mut self.world.entities[i];
        e.x = x;
        e.y = y;
        let id = e.id;
        if self.replicating() {
            self.store.set_pos(id, x, y, 0.0);
        }
    }
}

impl Shard for ZoneMini {
    type Params = Params;
    type Input = Input;
    type Snapshot = Snap;

    fn init(_shard_id: &str, params: Params) -> Result<Self, String> {
        if !["interest", "replicate", "replicate_all", "none"].contains(&params.mode.as_str()) {
            return Err(format!("unknown mode \"{}\"", params.mode));
        }
        let movers = params.movers;
        let mut zone = ZoneMini {
            params,
            world: World { entities: Vec::new(), players: Vec::new(), next_player_id: 1000 },
            store: Replicated::new(),
        };
        zone.spawn(1, "rock", 0.0, 0.0);
        zone.spawn(2, "tree", 100.0, 0.0);
        zone.spawn(3, "stealth", 50.0, 50.0);
        zone.spawn(4, "far", 1000.0, 1000.0);
        for i in 0..movers {
            zone.spawn(10 + i as u64, "mover", 0.0, 20.0 * (i as f64 + 1.0));
        }
        Ok(zone)
    }

    fn apply_input(&mut self, sid: &str, input: Input) -> Result<(), String> {
        match input {
            Input::Join {} => {
                if self.player_entity(sid).is_none() {
                    self.place_player(sid, 0.0, 0.0);
                }
                Ok(())
            }
            Input::MoveTo { x, y } => {
                if !in_zone(x, y) {
                    return Err("outside the zone".into());
                }
                self.place_player(sid, x, y);
                Ok(())
            }
            Input::Spawn { id, x, y, kind } => {
                if id == 0 || id >= ID_LIMIT {
                    return Err(format!("id {} out of range", id));
                }
                if self.find(id).is_some() {
                    return Err(format!("entity {} exists", id));
                }
                if !in_zone(x, y) {
                    return Err("outside the zone".into());
                }
                self.spawn(id, &kind, x, y);
                Ok(())
            }
            Input::Remove { id } => {
                if self.find(id).is_none() {
                    return no_entity(id);
                }
                self.erase(id);
                Ok(())
            }
            Input::Reuse { id, x, y } => {
                let old = match self.find(id) {
                    Some(e) => e,
                    None => return no_entity(id),
                };
                if !in_zone(x, y) {
                    return Err("outside the zone".into());
                }
                let again = Entity {
                    id,
                    kind: old.kind.clone(),
                    x,
                    y,
                    generation: old.generation + 1,
                    components: Vec::new(),
                };
                self.erase(id);
                self.add(again);
                Ok(())
            }
            Input::SetComponent { id, component, value } => {
                let i = match self.index(id) {
                    Some(i) => i,
                    None => return no_entity(id),
                };
                check_component(component)?;
                let components = &mut self.world.entities[i].components;
                match components.iter_mut().find(|c| c.id == component) {
                    Some(c) => c.value = value.clone(),
                    None => components.push(Component { id: component, value: value.clone() }),
                }
                if self.replicating() {
                    self.store.set_component(id, component as u8, value.as_bytes());
                }
                Ok(())
            }
            Input::RemoveComponent { id, component } => {
                let i = match self.index(id) {
                    Some(i) => i,
                    None => return no_entity(id),
                };
                check_component(component)?;
                self.world.entities[i].components.retain(|c| c.id != component);
                if self.replicating() {
                    self.store.remove_component(id, component as u8);
                }
                Ok(())
            }
        }
    }

    fn tick(&mut self, _dt: Duration) {
        for i in 0..self.world.entities.len() {
            if self.world.entities[i].kind == "mover" {
                let (x, y) = (self.world.entities[i].x + 1.0, self.world.entities[i].y);
                self.move_to(i, x, y);
            }
        }
    }

    fn snapshot(&self) -> Snap {
        Snap::Counts(Snapshot { entities: self.world.entities.len() as u64, players: self.world.players.len() as u64 })
    }

    fn save(&self) -> Result<Option<Vec<u8>>, String> {
        Ok(Some(save_value(&self.world)))
    }

    fn restore(shard_id: &str, params: Params, state: &[u8]) -> Result<Self, String> {
        let world: World = restore_value(state)?;
        let mut zone = Self::init(shard_id, params)?;
        zone.world = World { entities: Vec::new(), players: Vec::new(), next_player_id: 1000 };
        zone.store = Replicated::new();
        for e in world.entities {
            zone.add(e);
        }
        zone.world.players = world.players;
        zone.world.next_player_id = world.next_player_id;
        Ok(zone)
    }

    fn interest(&self) -> Option<InterestConfig> {
        if self.params.mode != "interest" && self.params.mode != "replicate" {
            return None;
        }
        Some(InterestConfig { cell_size: 100.0, margin: 10.0, shared_snapshots: self.params.shared })
    }

    fn entities(&self, out: &mut Vec<EntityPos>) -> bool {
        for e in &self.world.entities {
            out.push(EntityPos { id: e.id, x: e.x as f32, y: e.y as f32, generation: e.generation });
        }
        true
    }

    fn interest_area(&self, sid: &str) -> Option<InterestArea> {
        let e = self.player_entity(sid)?;
        Some(InterestArea { x: e.x as f32, y: e.y as f32, radius: self.params.radius })
    }

    fn can_see(&self, sid: &str, id: u64) -> bool {
        match self.find(id) {
            Some(e) => e.kind != "stealth" || sid.starts_with("scout"),
            None => true,
        }
    }

    fn snapshot_visible(&self, _sid: &str, view: &View<'_>) -> Snap {
        let shared = self.params.shared;
        Snap::Visible {
            visible: view.visible.to_vec(),
            entered: if shared { Vec::new() } else { view.entered.to_vec() },
            left: if shared { Vec::new() } else { view.left.to_vec() },
        }
    }

    fn replicated(&mut self) -> Option<&mut Replicated> {
        if self.replicating() {
            Some(&mut self.store)
        } else {
            None
        }
    }

    fn replication_config(&self) -> ReplicationConfig {
        ReplicationConfig { precision: 0.01, max_bytes_per_tick: self.params.budget, y_up: false }
    }
}

export_shard!(ZoneMini, save, can_see, snapshot_visible);
