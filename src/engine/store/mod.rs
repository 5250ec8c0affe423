//! Engine layer, store: everything that touches redb.

pub(crate) mod cache;
pub(crate) mod disk;
pub(crate) mod handle;
pub(crate) mod packed;
pub(crate) mod record;
pub(crate) mod scan;
pub(crate) mod writer;
