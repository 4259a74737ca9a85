//! world-sim: the example app's world simulation (Rust, tessera-compute-sdk).
//!
//! Ticks at 2 Hz (the tick trigger in examples/compute/tessera.json). Each
//! tick grows the fields by the weather; when the weather turns the module
//! notifies every player on channel `all`; when a season ends it raises the
//! compute event `season-changed`, which its own event trigger delivers
//! back to it (an event cascade): the handler harvests the ripe fields,
//! sows the new season's crop and announces the season on `all`.
//!
//! The whole world is JSON in the state blob, written on every change, so a
//! fresh instance (redeploy, idle unload, failure) carries on.
//!
//! Invoke export `forecast` returns the season, the weather, the ticks left
//! in the season and the fields.
use std::cell::RefCell;

use serde::{Deserialize, Serialize};
use tessera_compute_sdk::json::{self, json, EventInput, InvokeInput, Value};
use tessera_compute_sdk::{log, random_bytes};

mod world;

use world::{Season, World};

thread_local! {
    static WORLD: RefCell<World> = RefCell::new(World::new());
}

/// The payload of `season-changed`.
#[derive(Serialize, Deserialize)]
struct SeasonChanged {
    season: Season,
    year: u32,
}

fn random_u32() -> u32 {
    let b = random_bytes(4);
    u32::from_le_bytes([b[0], b[1], b[2], b[3]])
}

fn save(world: &World) -> Result<(), String> {
    json::state_set_json(world).map_err(|e| format!("state_set: {}", e))
}

/// A NOTIFY to every player; over the egress budget it is logged, not
/// retried (the next change sends a fresh one).
fn announce(payload: Value) {
    if let Err(e) = json::emit_channel_json("all", &payload) {
        log(2, &format!("notice not sent: {}", e));
    }
}

fn on_init() -> Result<(), String> {
    let world = json::state_get_json::<World>()?.unwrap_or_else(World::new);
    log(1, &format!("world-sim init: year {}, {:?}, tick {}", world.year, world.season, world.ticks));
    WORLD.with(|w| *w.borrow_mut() = world);
    Ok(())
}

fn on_tick(_dt_ms: u32) -> Result<(), String> {
    WORLD.with(|w| {
        let mut world = w.borrow_mut();
        let changes = world.tick(random_u32);
        if changes.weather {
            announce(json!({"type": "weather", "weather": world.weather, "season": world.season}));
        }
        if changes.season {
            let event = SeasonChanged { season: world.season, year: world.year };
            if let Err(e) = json::emit_event_json("season-changed", &event) {
                log(3, &format!("season-changed not raised: {}", e));
            }
        }
        save(&world)
    })
}

fn on_event(input: &[u8]) -> Result<(), String> {
    let event = EventInput::parse(input)?;
    if event.name != "season-changed" {
        return Ok(());
    }
    let changed: SeasonChanged = event.payload_as()?;
    WORLD.with(|w| {
        let mut world = w.borrow_mut();
        if world.season != changed.season {
            // A stale event (the world moved on since): nothing to do.
            return Ok(());
        }
        let harvested = world.turn_fields();
        log(1, &format!("{:?} of year {}: harvested {} field(s)", changed.season, changed.year, harvested));
        announce(json!({"type": "season", "season": changed.season, "year": changed.year, "harvested": harvested}));
        save(&world)
    })
}

fn on_invoke(input: &[u8]) -> Result<Vec<u8>, String> {
    let call: InvokeInput = InvokeInput::parse(input)?;
    if call.export != "forecast" {
        return Err(format!("unknown export {:?} (forecast)", call.export));
    }
    WORLD.with(|w| {
        let world = w.borrow();
        let forecast = json!({
            "year": world.year,
            "season": world.season,
            "weather": world.weather,
            "ticksToNextSeason": world.season_ticks_left,
            "fields": world.fields,
            "harvested": world.harvested,
        });
        json::to_bytes(&forecast).map_err(|e| e.to_string())
    })
}

tessera_compute_sdk::register_module!(init: on_init, tick: on_tick, invoke: on_invoke, event: on_event);
