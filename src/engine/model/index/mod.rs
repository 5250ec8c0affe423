//! Engine layer, model: the in-memory indexes of one queue's messages (`message_index.rs`),
//! with one message's packed entry (`msg.rs`), the packed map and set of sequence numbers
//! (`seqmap.rs`, `seqset.rs`), for FIFO queues the message groups (`groups.rs`) and the scan
//! window (`window.rs`), and for fair queues (standard, with group ids) the tenants
//! (`tenants.rs`).

pub(crate) mod groups;
pub(crate) mod message_index;
pub(crate) mod msg;
pub(crate) mod seqmap;
pub(crate) mod seqset;
pub(crate) mod tenants;
pub(crate) mod window;
