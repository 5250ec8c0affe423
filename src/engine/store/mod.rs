//! Engine layer, store: everything that touches redb. The schema and the types the store's
//! files share (`schema.rs`), the `Store` handle (`handle.rs`), the group-commit writer thread
//! (`writer.rs`), the start-up scan (`scan.rs`), the stored records (`record.rs`, and
//! `packed.rs` for a message record as memory holds it), SNS's tables (`sns.rs`) and records (`sns_record.rs`),
//! the body cache (`cache.rs`) and the
//! storage backend with its full-disk switch (`disk.rs`).
//!
//! Imports nothing of the engine's `model` or `ops`: the rest of the engine hands it [`Op`]s
//! and reads [`Row`]s back.

pub(crate) mod cache;
pub(crate) mod disk;
pub(crate) mod handle;
pub(crate) mod health;
pub(crate) mod packed;
pub(crate) mod purge;
pub(crate) mod record;
pub(crate) mod scan;
pub(crate) mod schema;
pub(crate) mod sns;
pub(crate) mod sns_record;
pub(crate) mod writer;
