//! Tools layer: the emulator's extras beside the SQS API: fault injection, the clock users can
//! move, `/metrics` (with its per-queue and error series), push delivery, the `--config` file,
//! LocalStack's init hooks, and SNS's signing and deliveries outside the engine (`sns/`). They
//! use the engine through its public API and plug into the front door as hooks; they never
//! import `http`, `admin` or `wire` (push's URL targets use hyper's client, nothing of the
//! server).

pub mod clock;
pub mod faults;
pub mod init;
pub mod metrics;
pub mod metrics_errors;
pub mod metrics_queues;
pub mod push;
pub mod setup;
pub mod sns;
