//! HTTP layer: the front door. Everything between a socket and the engine on the request path:
//! accepting connections and bounding what each may hold (`listen.rs`, `conn.rs`, `slots.rs`,
//! `body.rs`), what a request must pass before its body is read (`guard/`: the gate, browser
//! hosts and origins, SigV4, the admin token), queue-URL bases
//! (`base_url.rs`), and one request's journey (`dispatch.rs`; an SNS request's in `sns.rs`). Everything the emulator adds
//! beside SQS plugs in as a [`crate::command::hooks::Hook`] (`front.rs` holds them) or an admin
//! route; this layer never names a tool.

pub mod base_url;
pub mod body;
pub mod conn;
pub mod dispatch;
pub mod front;
pub mod guard;
pub mod listen;
pub mod options;
pub mod slots;
pub mod sns;
