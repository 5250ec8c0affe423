//! Wire layer, SNS: Amazon SNS over AWS Query (docs/sns.md §1): the entry points (`codec.rs`:
//! decode, encode, SNS's error envelope), one decoder per action (`decode.rs`), one encoder per
//! result (`encode.rs`) and the Query name table (`names.rs`: lists `Name.member.N`, maps
//! `Name.entry.N.key`). Built on the same service-neutral readers and writers as `sqs/`.

mod codec;
mod decode;
mod encode;
mod names;

pub use codec::{SnsDecoded, decode, encode, error_response};
