//! Crop growth and weather: a small world simulation.
//!
//! Each tick the crops grow at the rate the weather allows (rain helps,
//! drought and frost hurt); a ripe crop is harvested and replanted. The
//! weather holds for 20 to 60 s of simulated time, then changes at random:
//! the module raises a `weather-changed` compute event (for other modules'
//! event triggers) and notifies the players on channel `all`. The whole
//! world is JSON in the state blob, written every tick, so a fresh instance
//! continues where the last one stopped.
//!
//! Invoke exports: `status` returns the world; `plant` with params
//! `{"crop": "name"}` plants another crop (16 at most).
use std::cell::RefCell;

use serde::{Deserialize, Serialize};
use tessera_compute_sdk::json::{self, InvokeInput, Value};
use tessera_compute_sdk::{log, random_bytes};

mod sim;

use sim::{Weather, World};

thread_local! {
    static WORLD: RefCell<World> = RefCell::new(World::new());
}

#[derive(Deserialize)]
struct PlantParams {
    crop: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct WeatherChanged {
    from: Weather,
    to: Weather,
    duration_ms: u64,
}

fn random_u32() -> u32 {
    let b = random_bytes(4);
    u32::from_le_bytes([b[0], b[1], b[2], b[3]])
}

fn on_init() -> Result<(), String> {
    let world = json::state_get_json::<World>()?.unwrap_or_else(World::new);
    log(1, &format!("crop-weather init: {} crops, weather {:?}", world.crops.len(), world.weather));
    WORLD.with(|w| *w.borrow_mut() = world);
    Ok(())
}

fn on_tick(dt_ms: u32) -> Result<(), String> {
    WORLD.with(|w| {
        let mut world = w.borrow_mut();
        let before = world.weather;
        let harvested = world.advance(dt_ms, random_u32);
        if harvested > 0 {
            log(1, &format!("harvested {} crop(s); {} in total", harvested, world.harvests));
        }
        if world.weather != before {
            let change = WeatherChanged { from: before, to: world.weather, duration_ms: world.weather_ms_left };
            if let Err(e) = json::emit_event_json("weather-changed", &change) {
                log(2, &format!("weather-changed event not raised: {}", e));
            }
            let notice = json::json!({"type": "weather", "weather": world.weather});
            if let Err(e) = json::emit_channel_json("all", &notice) {
                // egress_budget: nothing was sent; the next change tries again.
                log(2, &format!("weather notice not sent: {}", e));
            }
        }
        json::state_set_json(&*world).map_err(|e| format!("state_set: {}", e))
    })
}

fn on_invoke(input: &[u8]) -> Result<Vec<u8>, String> {
    let call: InvokeInput<Value> = InvokeInput::parse(input)?;
    WORLD.with(|w| {
        let mut world = w.borrow_mut();
        match call.export.as_str() {
            "status" => {}
            "plant" => {
                let params: PlantParams = call.params_as()?;
                world.plant(&params.crop)?;
                json::state_set_json(&*world).map_err(|e| format!("state_set: {}", e))?;
            }
            other => return Err(format!("unknown export {:?} (status, plant)", other)),
        }
        json::to_bytes(&*world).map_err(|e| e.to_string())
    })
}

tessera_compute_sdk::register_module!(init: on_init, tick: on_tick, invoke: on_invoke);
