//! aws-sdk-sqs against the real server, started in-process on `127.0.0.1:0`: one test binary
//! (one link on small machines), one module per area, one harness.
//!
//! Time is a [`ManualClock`](localsqs::engine::ManualClock): visibility timeouts, delays,
//! retention and long-poll expiry move only when a test advances it (and wakes parked polls),
//! so nothing here sleeps for seconds. Expected texts and codes come from `docs/protocol.md`
//! (section numbers in the comments).

mod harness;
#[path = "../common/http.rs"]
mod http;

mod auth;
mod body_cache;
mod clock;
mod compat;
mod disk;
mod fair;
mod faults;
mod fifo;
mod hygiene;
mod inflight;
mod localstack;
mod long_polling;
mod messages;
mod migrate;
mod move_tasks;
mod observability;
mod operations;
mod permissions;
mod push;
mod queues;
mod redrive;
mod redrive_arn;
mod scopes;
mod settled;
mod sigv4_rules;
mod sns;
mod validation;
mod visibility;
mod wakeups;
