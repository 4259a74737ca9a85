//! The arena in Rust: players move to points inside a rectangle. Each
//! subscriber's first accepted `move_to` adds their player. The same
//! simulation as the C++ arena (examples/arena/shards/arena/arena.cc), and
//! the same bytes on the wire.
//!
//! Two ways to send the players, chosen by the create params:
//! - by default the snapshot lists every player, every tick;
//! - with `"replicate": true` the players are replicated entities instead:
//!   entity id = join order from 1, position (x, y, 0) to `precision` units
//!   (default 0.1), and component 1 = the subscriber id (a string in the
//!   codec). The snapshot is then an empty player list.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tessera_shard_guest::{export_shard, restore_value, save_value, Replicated, ReplicationConfig, Shard};

/// The replicated component holding the player's subscriber id.
const ID_COMPONENT: u8 = 1;

#[derive(Deserialize)]
struct Params {
    #[serde(default = "default_width")]
    width: f32,
    #[serde(default = "default_height")]
    height: f32,
    #[serde(default)]
    replicate: bool,
    #[serde(default = "default_precision")]
    precision: f64,
}

fn default_width() -> f32 {
    800.0
}
fn default_height() -> f32 {
    500.0
}
fn default_precision() -> f64 {
    0.1
}

#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum Input {
    MoveTo {
        #[serde(default)]
        x: f32,
        #[serde(default)]
        y: f32,
    },
}

#[derive(Serialize, Deserialize, Clone)]
struct Player {
    id: String,
    x: f32,
    y: f32,
}

#[derive(Serialize)]
struct Snapshot {
    players: Vec<Player>,
}

struct Arena {
    width: f32,
    height: f32,
    replicate: bool,
    precision: f64,
    players: Vec<Player>,
    index: BTreeMap<String, usize>, // id -> players
    store: Replicated,
}

impl Arena {
    /// Copies player `index` into the store; its id component only when the
    /// player was just `added` (it never changes).
    fn replicate(&mut self, index: usize, added: bool) {
        if !self.replicate {
            return;
        }
        let p = &self.players[index];
        let id = index as u64 + 1;
        self.store.set_pos(id, p.x as f64, p.y as f64, 0.0);
        if added {
            self.store.set_component_value(id, ID_COMPONENT, &p.id);
        }
    }
}

impl Shard for Arena {
    type Params = Params;
    type Input = Input;
    type Snapshot = Snapshot;

    fn init(_shard_id: &str, params: Params) -> Result<Self, String> {
        if !(params.width > 0.0 && params.height > 0.0) {
            return Err("width and height must be positive".into());
        }
        if !(params.precision > 0.0 && params.precision <= 1.0) {
            return Err("precision must be in (0, 1]".into());
        }
        Ok(Arena {
            width: params.width,
            height: params.height,
            replicate: params.replicate,
            precision: params.precision,
            players: Vec::new(),
            index: BTreeMap::new(),
            store: Replicated::new(),
        })
    }

    fn apply_input(&mut self, sid: &str, input: Input) -> Result<(), String> {
        let Input::MoveTo { x, y } = input;
        if x < 0.0 || x > self.width || y < 0.0 || y > self.height {
            return Err("outside the arena".into());
        }
        let (index, added) = match self.index.get(sid) {
            Some(&i) => {
                self.players[i].x = x;
                self.players[i].y = y;
                (i, false)
            }
            None => {
                let i = self.players.len();
                self.index.insert(sid.to_string(), i);
                self.players.push(Player { id: sid.to_string(), x, y });
                (i, true)
            }
        };
        self.replicate(index, added);
        Ok(())
    }

    fn tick(&mut self, _dt: Duration) {}

    fn snapshot(&self) -> Snapshot {
        if self.replicate {
            return Snapshot { players: Vec::new() };
        }
        Snapshot { players: self.players.clone() }
    }

    // The players are the whole state worth keeping across a restart.
    fn save(&self) -> Result<Option<Vec<u8>>, String> {
        Ok(Some(save_value(&self.players)))
    }

    fn restore(shard_id: &str, params: Params, state: &[u8]) -> Result<Self, String> {
        let mut arena = Self::init(shard_id, params)?;
        let players: Vec<Player> = restore_value(state)?;
        for p in players {
            if arena.index.contains_key(&p.id) {
                return Err(format!("player {} saved twice", p.id));
            }
            let i = arena.players.len();
            arena.index.insert(p.id.clone(), i);
            arena.players.push(p);
            arena.replicate(i, true);
        }
        Ok(arena)
    }

    // Replication on with the "replicate" param; None turns it off.
    fn replicated(&mut self) -> Option<&mut Replicated> {
        if self.replicate {
            Some(&mut self.store)
        } else {
            None
        }
    }

    fn replication_config(&self) -> ReplicationConfig {
        ReplicationConfig { precision: self.precision, max_bytes_per_tick: 0, y_up: false }
    }
}

export_shard!(Arena, save);
