//! Engine layer, top: the settings an engine opens with ([`EngineOptions`], [`Regions`]), the
//! extension point it asks about a standard receive's order ([`ReceiveOrder`]), and the signer
//! of SNS envelopes.

use std::path::PathBuf;
use std::sync::Arc;

use super::store::disk::DiskFaults;
use crate::command::sns::envelope::SnsSigner;

/// Settings the engine needs.
#[derive(Debug, Clone)]
pub struct EngineOptions {
    /// Account id in queue URLs and ARNs.
    pub account_id: String,
    /// Region in ARNs.
    pub region: String,
    /// `None` keeps state in memory only, for the life of the process.
    pub data_dir: Option<PathBuf>,
    /// redb page-cache size.
    pub cache_bytes: usize,
    /// Durable mode: about how many bytes of message records (bodies, attributes, ids) stay in
    /// memory after their write is committed, newest first; older ones are read back from the
    /// data file when needed (`engine/store/cache.rs`). Memory mode keeps every record.
    pub body_cache_bytes: usize,
    /// Enforce AWS's two 60-second cool-offs: PurgeQueueInProgress and QueueDeletedRecently
    /// (docs/protocol.md §6.13). Off by default, as in LocalStack, because they break test suites that purge
    /// between tests or reuse queue names.
    pub enforce_cooloffs: bool,
    /// For tests: a switch that makes the data file's writes fail as on a full disk.
    pub disk_faults: Option<Arc<DiskFaults>>,
    /// The order a standard queue's receive takes messages in, when not oldest first (the
    /// server installs its fault rules here, for `reorder`). `None`: always oldest first.
    pub receive_order: Option<Arc<dyn ReceiveOrder>>,
    /// Most messages in flight per queue, AWS's 120,000 by default (docs/protocol.md §6.8):
    /// past it a short-poll receive on a standard queue fails with OverLimit and a FIFO receive
    /// returns nothing more; FIFO receives also look for available groups only among a queue's
    /// first this-many messages (§6.9). `None` lifts both.
    pub max_inflight: Option<usize>,
    /// Most queues the server holds, across accounts and regions (100,000 by default, about
    /// 6 KiB of memory each when empty): past it CreateQueue fails with OverLimit. AWS sets no
    /// such limit; an emulator must not let clients grow its memory without bound. `None`
    /// lifts it.
    pub max_queues: Option<usize>,
    /// Signs SNS envelopes (the server installs its key, `tools/sns/signing.rs`). `None`: the
    /// signature fields of standard topics' envelopes are empty.
    pub sns_signer: Option<Arc<dyn SnsSigner>>,
    /// Whether the region a request signs for scopes its queues (AWS's way, the default) or
    /// is ignored, as ElasticMQ ignores it (`--regions any`).
    pub regions: Regions,
}

/// How regions scope queues (`--regions`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Regions {
    /// As in AWS: a request acts in the region it signs for (or its queue URL names), and a
    /// queue lives in one region.
    #[default]
    Scoped,
    /// As in ElasticMQ: the region a request signs for is ignored. New queues go to the
    /// configured region, and a queue URL finds its queue by account and name in whatever
    /// region holds it (the region it names, else the configured one, else the first other
    /// region in name order).
    Any,
}

impl Default for EngineOptions {
    fn default() -> Self {
        Self {
            account_id: "000000000000".into(),
            region: "us-east-1".into(),
            data_dir: None,
            cache_bytes: 16 << 20,
            body_cache_bytes: 32 << 20,
            enforce_cooloffs: false,
            disk_faults: None,
            receive_order: None,
            max_inflight: Some(120_000),
            max_queues: Some(100_000),
            sns_signer: None,
            regions: Regions::Scoped,
        }
    }
}

/// An extension point for the order in which a ReceiveMessage on a standard queue takes the
/// messages it may receive: oldest first unless [`ReceiveOrder::seed`] gives a seed, from
/// which the order is then drawn. Installed with [`EngineOptions::receive_order`].
pub trait ReceiveOrder: Send + Sync + std::fmt::Debug {
    /// For one ReceiveMessage on the standard queue named `queue_name` (the name its queue
    /// URL gives): a seed to take receivable messages in random order from, or `None` for
    /// oldest first. Asked once per request, before the request is checked; never for FIFO
    /// queues, whose order is their guarantee.
    fn seed(&self, queue_name: &str) -> Option<u64>;
}
