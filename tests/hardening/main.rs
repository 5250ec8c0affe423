//! The server against hostile or careless clients: slow and idle connections, and browser
//! pages of other origins. One test binary without the AWS SDK, so it links fast.

#[path = "../common/http.rs"]
mod http;

mod hosts;
mod input;
mod origins;
mod security;
mod slow_clients;
