//! HTTP layer: what a request must pass before its body is read: `gate.rs` judges a request's
//! head; `hosts.rs` and `origin.rs` judge browsers (DNS rebinding, origins, CORS); `sigv4.rs`
//! checks AWS Signature Version 4 (the head first, the body once it is in).

pub mod gate;
pub mod hosts;
pub mod origin;
pub mod sigv4;
