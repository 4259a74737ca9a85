//! The simulation itself: no host calls, so it is easy to follow.
use serde::{Deserialize, Serialize};

/// The weather, which sets how fast crops grow and how much they suffer.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Weather {
    Sunny,
    Rain,
    Drought,
    Frost,
}

impl Weather {
    /// Growth points per second at full health (100 points = ripe).
    fn growth_per_s(self) -> f64 {
        match self {
            Weather::Sunny => 1.0,
            Weather::Rain => 1.5,
            Weather::Drought => 0.25,
            Weather::Frost => 0.0,
        }
    }

    /// Health points lost per second.
    fn damage_per_s(self) -> f64 {
        match self {
            Weather::Drought => 0.5,
            Weather::Frost => 1.0,
            _ => 0.0,
        }
    }

    /// The weather after this one for a random number: mostly fair,
    /// sometimes harsh, never the same again.
    fn next(self, r: u32) -> Weather {
        let next = match r % 10 {
            0..=3 => Weather::Sunny,
            4..=6 => Weather::Rain,
            7..=8 => Weather::Drought,
            _ => Weather::Frost,
        };
        match (next == self, self) {
            (true, Weather::Rain) => Weather::Sunny,
            (true, _) => Weather::Rain,
            (false, _) => next,
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Crop {
    pub name: String,
    /// 0 to 100; harvested at 100.
    pub growth: f64,
    /// 0 to 100; scales growth; a crop at 0 dies and is replanted.
    pub health: f64,
}

impl Crop {
    fn new(name: &str) -> Crop {
        Crop { name: name.to_string(), growth: 0.0, health: 100.0 }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct World {
    pub weather: Weather,
    pub weather_ms_left: u64,
    pub elapsed_ms: u64,
    pub harvests: u32,
    pub crops: Vec<Crop>,
}

/// Crops a world may hold.
pub const MAX_CROPS: usize = 16;
/// A tick after a long pause advances at most this much.
const MAX_STEP_MS: u32 = 10_000;

impl World {
    pub fn new() -> World {
        World {
            weather: Weather::Sunny,
            weather_ms_left: 30_000,
            elapsed_ms: 0,
            harvests: 0,
            crops: ["wheat", "corn", "pumpkin"].iter().map(|n| Crop::new(n)).collect(),
        }
    }

    pub fn plant(&mut self, name: &str) -> Result<(), String> {
        if name.is_empty() || name.len() > 32 {
            return Err("a crop name is 1 to 32 bytes".to_string());
        }
        if self.crops.len() >= MAX_CROPS {
            return Err(format!("the field is full ({} crops)", MAX_CROPS));
        }
        self.crops.push(Crop::new(name));
        Ok(())
    }

    /// Advances the world by `dt_ms`; `random` draws the next weather and
    /// its duration. Returns the crops harvested.
    pub fn advance(&mut self, dt_ms: u32, mut random: impl FnMut() -> u32) -> u32 {
        let dt_ms = dt_ms.min(MAX_STEP_MS);
        let dt_s = f64::from(dt_ms) / 1000.0;
        self.elapsed_ms += u64::from(dt_ms);
        let mut harvested = 0;
        for crop in &mut self.crops {
            crop.health = (crop.health - self.weather.damage_per_s() * dt_s).max(0.0);
            crop.growth += self.weather.growth_per_s() * dt_s * crop.health / 100.0;
            if crop.growth >= 100.0 {
                harvested += 1;
                *crop = Crop::new(&crop.name);
            } else if crop.health <= 0.0 {
                *crop = Crop::new(&crop.name);
            }
        }
        self.harvests += harvested;
        if self.weather_ms_left <= u64::from(dt_ms) {
            self.weather = self.weather.next(random());
            self.weather_ms_left = 20_000 + u64::from(random() % 40_001);
        } else {
            self.weather_ms_left -= u64::from(dt_ms);
        }
        harvested
    }
}
