//! Engine layer, ops: the actions, as `impl Engine` blocks that take the lock, change the
//! model and hand the store its ops. `execute.rs` holds the one match over `Command`; then
//! queue actions (`queue.rs`), single messages (`message.rs`), ReceiveMessage and long polling
//! (`poll.rs`), batches (`batch.rs`), tags and permissions (`metadata.rs`), dead-letter queues
//! (`redrive.rs`), move tasks (`movetask.rs`), the peek, console and reset (`peek.rs`), the
//! console's deletes and moves of many messages by id (`console/`), the part
//! of a send done before the lock (`prepare.rs`), and reading records that are not in memory
//! (`cold.rs`).

pub(crate) mod batch;
pub(crate) mod cold;
pub(crate) mod console;
pub(crate) mod execute;
pub(crate) mod message;
pub(crate) mod metadata;
pub(crate) mod movetask;
pub(crate) mod peek;
pub(crate) mod poll;
pub(crate) mod prepare;
pub(crate) mod queue;
pub(crate) mod redrive;
pub(crate) mod sns;
