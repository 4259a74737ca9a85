//! The world itself, without host calls: seasons, weather and fields.
use serde::{Deserialize, Serialize};

/// Ticks per season: 30 s at the manifest's 2 Hz, so a year is 2 minutes.
pub const SEASON_TICKS: u32 = 60;

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Season {
    Spring,
    Summer,
    Autumn,
    Winter,
}

impl Season {
    pub fn next(self) -> Season {
        match self {
            Season::Spring => Season::Summer,
            Season::Summer => Season::Autumn,
            Season::Autumn => Season::Winter,
            Season::Winter => Season::Spring,
        }
    }

    /// What the fields are sown with when this season starts.
    pub fn sown(self) -> Option<&'static str> {
        match self {
            Season::Spring => Some("wheat"),
            Season::Summer => Some("corn"),
            Season::Autumn => Some("pumpkin"),
            Season::Winter => None,
        }
    }

    /// The weather for a random number, weighted by season.
    fn weather(self, r: u32) -> Weather {
        let table: [Weather; 5] = match self {
            Season::Spring => [Weather::Sunny, Weather::Rain, Weather::Rain, Weather::Sunny, Weather::Storm],
            Season::Summer => [Weather::Sunny, Weather::Sunny, Weather::Heat, Weather::Rain, Weather::Storm],
            Season::Autumn => [Weather::Rain, Weather::Rain, Weather::Sunny, Weather::Storm, Weather::Frost],
            Season::Winter => [Weather::Frost, Weather::Frost, Weather::Snow, Weather::Snow, Weather::Sunny],
        };
        table[(r % 5) as usize]
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Weather {
    Sunny,
    Rain,
    Storm,
    Heat,
    Frost,
    Snow,
}

impl Weather {
    /// Growth points per tick (100 = ripe).
    fn growth(self) -> f64 {
        match self {
            Weather::Rain => 3.0,
            Weather::Sunny => 2.0,
            Weather::Storm | Weather::Heat => 0.5,
            Weather::Frost | Weather::Snow => 0.0,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Field {
    pub crop: String,
    pub growth: f64,
}

/// Everything the module keeps in its state blob.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct World {
    pub ticks: u64,
    pub year: u32,
    pub season: Season,
    pub season_ticks_left: u32,
    pub weather: Weather,
    pub weather_ticks_left: u32,
    pub fields: Vec<Field>,
    /// Crops harvested so far, by crop, in harvest order.
    pub harvested: Vec<(String, u32)>,
}

/// What a tick changed, for the module to announce.
#[derive(Debug, Default, PartialEq)]
pub struct Changes {
    pub weather: bool,
    pub season: bool,
}

impl World {
    pub fn new() -> World {
        World {
            ticks: 0,
            year: 1,
            season: Season::Spring,
            season_ticks_left: SEASON_TICKS,
            weather: Weather::Sunny,
            weather_ticks_left: 10,
            fields: sow(Season::Spring),
            harvested: Vec::new(),
        }
    }

    /// One tick: crops grow by the weather, the weather may turn, the season
    /// may end. `random` draws weather and its duration.
    pub fn tick(&mut self, mut random: impl FnMut() -> u32) -> Changes {
        let mut changes = Changes::default();
        self.ticks += 1;
        let growth = self.weather.growth();
        for f in &mut self.fields {
            f.growth = (f.growth + growth).min(100.0);
        }
        self.weather_ticks_left = self.weather_ticks_left.saturating_sub(1);
        if self.weather_ticks_left == 0 {
            let next = self.season.weather(random());
            self.weather_ticks_left = 6 + random() % 15;
            changes.weather = next != self.weather;
            self.weather = next;
        }
        self.season_ticks_left = self.season_ticks_left.saturating_sub(1);
        if self.season_ticks_left == 0 {
            self.season = self.season.next();
            if self.season == Season::Spring {
                self.year += 1;
            }
            self.season_ticks_left = SEASON_TICKS;
            changes.season = true;
        }
        changes
    }

    /// The season-changed handler's work: harvest what is ripe (growth 100)
    /// and sow the season's crop. Returns the crops harvested.
    pub fn turn_fields(&mut self) -> u32 {
        let ripe = self.fields.iter().filter(|f| f.growth >= 100.0).count() as u32;
        for f in self.fields.iter().filter(|f| f.growth >= 100.0) {
            match self.harvested.iter_mut().find(|(c, _)| *c == f.crop) {
                Some((_, n)) => *n += 1,
                None => self.harvested.push((f.crop.clone(), 1)),
            }
        }
        self.fields = sow(self.season);
        ripe
    }
}

fn sow(season: Season) -> Vec<Field> {
    match season.sown() {
        Some(crop) => (0..4).map(|_| Field { crop: crop.to_string(), growth: 0.0 }).collect(),
        None => Vec::new(),
    }
}
