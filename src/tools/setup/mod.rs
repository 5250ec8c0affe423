//! Tools layer: the `--config` file: localsqs's TOML (`decl.rs`, with the documented example)
//! or ElasticMQ's `elasticmq.conf` (`elasticmq.rs`, over the HOCON reader of `hocon.rs`), read
//! by `load.rs` and applied by `apply.rs` at start and by every reset.

mod apply;
mod decl;
mod elasticmq;
mod hocon;
mod load;

pub use decl::{ClockDecl, DeadLetter, QueueDecl, RedriveAllow, ServerDefaults, Setup, parse};
pub use load::load;
