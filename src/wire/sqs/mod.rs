//! Wire layer, SQS: Amazon SQS over AWS Query and AWS JSON 1.0: the API's entry points
//! (`codec.rs`), one decoder per action (`decode.rs`), one encoder per result (`encode.rs`) and
//! the Query name table (`names.rs`). A second service's module sits beside this one and uses
//! the same service-neutral readers and writers.

mod codec;
mod decode;
mod encode;
mod names;

pub use codec::{
    Decoded, HINT_HEADER, decode, encode, encode_xml_names, encode_xmltodict, error_response,
    form_fields,
};
