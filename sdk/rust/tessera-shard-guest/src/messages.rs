//! Messages between shards (docs/guest-abi.md, "Transfers and messages"):
//! a shard is in the groups [`Shard::groups`](crate::Shard::groups) names,
//! queues messages during its tick and hands them over in
//! [`Shard::outbox`](crate::Shard::outbox); each target gets them in
//! [`Shard::on_message`](crate::Shard::on_message) before its next tick, in
//! the order each sender sent them.
//!
//! Limits (the host refuses, counts and logs what exceeds them; see
//! [`abi`](crate::abi)): 64 messages sent per tick, topic 1 to 128 bytes,
//! data up to 64 KiB, 64 groups of 1 to 128 bytes, 1,024 messages queued per
//! target, 64 delivered per tick.

/// Where a message goes.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Target {
    /// One shard, by id.
    Shard(String),
    /// Every running shard whose latest [`groups`](crate::Shard::groups)
    /// contain this name, except the sender.
    Group(String),
    /// Every running shard that takes messages, except the sender.
    All,
}

impl Target {
    /// The ABI's target kind ([`abi::TARGET_SHARD`](crate::abi::TARGET_SHARD), ...).
    pub fn kind(&self) -> u8 {
        match self {
            Target::Shard(_) => crate::abi::TARGET_SHARD,
            Target::Group(_) => crate::abi::TARGET_GROUP,
            Target::All => crate::abi::TARGET_ALL,
        }
    }

    /// The shard id or group name; empty for [`Target::All`].
    pub fn name(&self) -> &str {
        match self {
            Target::Shard(name) | Target::Group(name) => name,
            Target::All => "",
        }
    }
}

/// One message a shard sends.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outgoing {
    /// Where it goes.
    pub to: Target,
    /// What it is about (1 to 128 bytes); the receiver's `on_message` gets it.
    pub topic: String,
    /// Its contents (up to 64 KiB), opaque to the host.
    pub data: Vec<u8>,
}

impl Outgoing {
    /// A message to `to` about `topic` carrying `data`.
    pub fn new(to: Target, topic: impl Into<String>, data: impl Into<Vec<u8>>) -> Outgoing {
        Outgoing { to, topic: topic.into(), data: data.into() }
    }
}
