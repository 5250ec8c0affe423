//! The built `localsqs` binary as a child process: crash safety of `--data-dir` (SIGKILLed
//! under load and restarted on the same directory, nothing it acknowledged may be lost or
//! undone), and data directories it must refuse at start-up (`datadir`).
//!
//! The promise under test (src/engine/store.rs): a reply is sent only after the redb commit that
//! holds its effect, and with `--data-dir` commits are `Durability::Immediate`. So after any
//! kill:
//! - every acknowledged send is present, unless a delete of it was attempted;
//! - no acknowledged delete comes back;
//! - nothing is present that was never sent, and nothing twice;
//! - FIFO order within each group is intact: the group's messages present are in send order,
//!   and their sequence numbers grow with it;
//! - queue attributes are as they were created.
//!
//! A request that was in flight at the kill may or may not have taken effect; the checks allow
//! both. Messages received but not deleted stay in flight across the restart (their visibility
//! deadline is on the real clock), so the checks read state through the LocalStack-compatible
//! peek endpoint with `ShowInvisible` and `ShowDelayed` rather than by receiving.
//!
//! Two narrower tests pin down holes the load can only hit by luck: a retried request (a FIFO
//! send deduplicated against its in-flight original, a second delete of one message) must not
//! be acknowledged before the original's commit, and a receipt handle of a deleted message must
//! not delete a message sent after a restart.
//!
//! Nothing here sleeps for seconds: load phases last 200 ms to 1 s, and every wait is bounded.
//!
//! The modules: `under_load` (the kill -9 test), `retries` (the two narrower tests), `full_disk`
//! (a real full disk, and a restart on it), `datadir`
//! (`--data-dir` refused at start-up, and a clean restart), with `process` (the child process),
//! `ledger` and `load` (what the load did and was told) and `verify` (the checks after a
//! restart), and `sns` (SNS fan-out under kill -9).

#[path = "../common/http.rs"]
mod http;
mod process;

mod cli;
mod datadir;
mod full_disk;
mod ledger;
mod load;
mod retries;
mod sns;
mod under_load;
mod urls;
mod verify;

use std::time::Duration;

/// The standard queue under load.
const STD: &str = "crash-std";
/// The FIFO queue under load.
const FIFO: &str = "crash-fifo.fifo";
/// Receive-time visibility: far beyond the test, so no handle expires while it runs.
const LONG_VISIBILITY: i32 = 600;
/// Hang guard for stopping the load tasks once the server is gone.
const LOAD_STOP_WAIT: Duration = Duration::from_secs(30);
