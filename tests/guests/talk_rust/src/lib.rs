//! Test guest "talk_rust": tests/guests/talk/talk.cc in Rust, with the same
//! params, inputs, rejections, snapshots, transfer state and saves (see that
//! file's comment). tests/rust/talk_rust_test.cc drives both through the
//! same GuestShard calls and compares every result byte for byte.
//!
//! One difference: a message's `from`, `topic` or `data` that is not UTF-8
//! is kept with replacement characters (the C++ guest keeps the bytes).

use std::collections::{BTreeMap, VecDeque};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tessera_shard_guest::transfer::{decode_state, encode_state};
use tessera_shard_guest::{export_shard, restore_value, save_value, Auth, Outgoing, Shard, Target};

#[derive(Deserialize, Default)]
#[serde(default)]
struct Params {
    groups: Vec<String>,
    refuse: Option<String>,
    require_claim: Option<String>,
    refuse_return: bool,
}

#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum Input {
    Join {},
    Step {},
    Go {
        #[serde(default)]
        to: String,
    },
    Send {
        #[serde(default)]
        kind: String,
        #[serde(default)]
        to: String,
        #[serde(default)]
        topic: String,
        #[serde(default)]
        data: String,
    },
    Burst {
        #[serde(default)]
        kind: String,
        #[serde(default)]
        to: String,
        #[serde(default)]
        count: u32,
        #[serde(default)]
        bytes: u32,
    },
}

#[derive(Serialize, Deserialize, Clone, Default)]
struct Player {
    n: i64,
    from: String,
}

/// The transfer state.
#[derive(Serialize, Deserialize)]
struct Moving {
    n: i64,
}

#[derive(Serialize, Deserialize, Clone, Default)]
struct Snapshot {
    players: BTreeMap<String, Player>,
    inbox: Vec<Vec<String>>,
    received: u64,
    ticks: u64,
}

/// Saved: the snapshot's state and where each player that left came from
/// (restored to it if it comes back).
#[derive(Serialize, Deserialize)]
struct Saved {
    state: Snapshot,
    left_from: BTreeMap<String, String>,
}

const INBOX_KEPT: usize = 256;

fn target_of(kind: &str, to: &str) -> Option<Target> {
    match kind {
        "shard" => Some(Target::Shard(to.to_string())),
        "group" => Some(Target::Group(to.to_string())),
        "all" => Some(Target::All),
        _ => None,
    }
}

struct Talk {
    params: Params,
    state: Snapshot, // without the inbox, kept in `inbox`
    inbox: VecDeque<Vec<String>>,
    left_from: BTreeMap<String, String>,
    requests: Vec<(String, String)>,
    outbox: Vec<Outgoing>,
}

impl Shard for Talk {
    type Params = Params;
    type Input = Input;
    type Snapshot = Snapshot;

    fn init(_shard_id: &str, params: Params) -> Result<Self, String> {
        Ok(Talk {
            params,
            state: Snapshot::default(),
            inbox: VecDeque::new(),
            left_from: BTreeMap::new(),
            requests: Vec::new(),
            outbox: Vec::new(),
        })
    }

    fn restore(shard_id: &str, params: Params, state: &[u8]) -> Result<Self, String> {
        let mut saved: Saved = restore_value(state)?;
        let mut talk = Self::init(shard_id, params)?;
        talk.inbox = std::mem::take(&mut saved.state.inbox).into();
        talk.state = saved.state;
        talk.left_from = saved.left_from;
        Ok(talk)
    }

    fn apply_input(&mut self, sid: &str, input: Input) -> Result<(), String> {
        match input {
            Input::Join {} => {
                self.state.players.entry(sid.to_string()).or_default();
                return Ok(());
            }
            Input::Send { kind, to, topic, data } => {
                let to = target_of(&kind, &to).ok_or_else(|| format!("unknown kind {}", kind))?;
                self.outbox.push(Outgoing::new(to, topic, data));
                return Ok(());
            }
            Input::Burst { kind, to, count, bytes } => {
                let to = target_of(&kind, &to).ok_or_else(|| format!("unknown kind {}", kind))?;
                for i in 0..count {
                    let mut data = format!("i:{}", i).into_bytes();
                    data.resize(bytes as usize, b'.');
                    self.outbox.push(Outgoing::new(to.clone(), "b", data));
                }
                return Ok(());
            }
            Input::Step {} | Input::Go { .. } => {}
        }
        let player = self.state.players.get_mut(sid).ok_or_else(|| "not here".to_string())?;
        match input {
            Input::Go { to } => self.requests.push((sid.to_string(), to)),
            _ => player.n += 1,
        }
        Ok(())
    }

    fn tick(&mut self, _dt: Duration) {
        self.state.ticks += 1;
    }

    fn snapshot(&self) -> Snapshot {
        let mut snap = self.state.clone();
        snap.inbox = self.inbox.iter().cloned().collect();
        snap
    }

    fn save(&self) -> Result<Option<Vec<u8>>, String> {
        Ok(Some(save_value(&Saved { state: self.snapshot(), left_from: self.left_from.clone() })))
    }

    fn transfer_out(&mut self, sid: &str) -> Result<Option<Vec<u8>>, String> {
        let player = match self.state.players.remove(sid) {
            Some(p) => p,
            None => return Ok(None),
        };
        self.left_from.insert(sid.to_string(), player.from);
        Ok(Some(encode_state(&Moving { n: player.n })))
    }

    fn transfer_in(&mut self, sid: &str, state: &[u8], auth: &Auth, returning: bool) -> Result<(), String> {
        let moving: Moving = decode_state(state)?;
        if returning && self.params.refuse_return {
            return Err("refusing the return".into());
        }
        if !returning {
            if let Some(text) = &self.params.refuse {
                return Err(text.clone());
            }
            if let Some(name) = &self.params.require_claim {
                if auth.claim(name).is_none() {
                    return Err(format!("missing claim {}", name));
                }
            }
        }
        let from = if returning {
            self.left_from.remove(sid).unwrap_or_default()
        } else {
            auth.from_shard().to_string()
        };
        self.state.players.insert(sid.to_string(), Player { n: moving.n, from });
        Ok(())
    }

    fn transfer_requests(&mut self) -> Vec<(String, String)> {
        std::mem::take(&mut self.requests)
    }

    fn groups(&self) -> Vec<String> {
        self.params.groups.clone()
    }

    fn outbox(&mut self) -> Vec<Outgoing> {
        std::mem::take(&mut self.outbox)
    }

    fn on_message(&mut self, from: &str, topic: &str, data: &[u8]) {
        self.state.received += 1;
        if self.inbox.len() == INBOX_KEPT {
            self.inbox.pop_front();
        }
        self.inbox.push_back(vec![from.to_string(), topic.to_string(), String::from_utf8_lossy(data).into_owned()]);
    }
}

export_shard!(Talk, save, transfers, transfer_requests, groups, outbox, on_message);
