//! HTTP layer: the front door. Everything between a socket and the engine on the request path:
//! accepting connections and bounding what each may hold (`listen.rs`, `conn.rs`), browser
//! origins (`origin.rs`), SigV4 (`sigv4.rs`), queue-URL bases (`base_url.rs`), and one request's
//! journey (`dispatch.rs`; an SNS request's in `sns.rs`). Everything the emulator adds beside SQS plugs in as a
//! [`crate::command::hooks::Hook`] (`front.rs` holds them) or an admin route; this layer never
//! names a tool.

pub mod base_url;
pub mod conn;
pub mod dispatch;
pub mod front;
pub mod listen;
pub mod options;
pub mod origin;
pub mod sigv4;
pub mod sns;
