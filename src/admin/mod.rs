//! Admin layer: every endpoint that is not the SQS API: health checks, `/metrics`, the
//! LocalStack-compatible peek and status endpoints, the reset, the clock, fault rules, push
//! targets, SNS's signing certificate and the web console. `routes.rs` holds the table of every
//! route and path, `state.rs` the shared state
//! and the one handler shape, `handle.rs` the match from route to handler; each handler lives
//! in the file of its feature. The admin layer drives the engine through its public API and
//! the tools; it never touches the request path (`http`), which calls it.

pub mod clock;
pub mod console;
pub mod faults;
pub mod handle;
pub mod health;
pub mod localstack;
pub mod peek;
pub mod peek_localstack;
pub mod push;
pub mod routes;
pub mod sns;
pub mod state;
