//! Arbitrary bytes as the body and query string of a request in every protocol, with real and
//! random `X-Amz-Target`s and paths: `wire::decode` never panics, and whatever it refuses gets a
//! well-formed AWS error; whatever it accepts runs and is answered without a 5xx.

use localsqs::wire::Protocol;
use proptest::prelude::*;
use proptest::sample::select;

use super::config;
use super::pipeline::Pipeline;
use super::strategies::{action_name, envelope, request, target_for};

/// Bytes: random, mostly printable, or a valid-looking prefix followed by random bytes.
fn body() -> BoxedStrategy<Vec<u8>> {
    let prefix = select(vec![
        "",
        "{",
        "{\"QueueUrl\":",
        "{\"QueueName\":\"",
        "Action=SendMessage&",
        "Action=CreateQueue&QueueName=",
        "[",
        "\"",
        "{\"a\":\"\\ud800",
        "\u{feff}{}",
    ]);
    prop_oneof![
        2 => proptest::collection::vec(any::<u8>(), 0..200),
        2 => proptest::collection::vec(prop_oneof![0x20u8..0x7f, Just(b'%'), Just(b'&')], 0..200),
        2 => (prefix, proptest::collection::vec(any::<u8>(), 0..64)).prop_map(|(p, rest)| {
            let mut b = p.as_bytes().to_vec();
            b.extend(rest);
            b
        }),
    ]
    .boxed()
}

fn protocol() -> impl Strategy<Value = Protocol> {
    select(vec![Protocol::Json, Protocol::Query, Protocol::QueryJson])
}

proptest! {
    #![proptest_config(config(super::DEFAULT_CASES))]

    #[test]
    fn arbitrary_bytes_decode_or_are_refused_well(
        proto in protocol(),
        target in action_name().prop_flat_map(target_for),
        query in proptest::option::of(proptest::collection::vec(any::<u8>(), 0..80)),
        body in body(),
        env in envelope(),
    ) {
        let pipeline = Pipeline::new();
        // A query string reaches the wire layer as text; hyper hands it over as such.
        let query = query.map(|q| String::from_utf8_lossy(&q).into_owned());
        let req = request(proto, &env, target, query, body);
        pipeline.run(&req.wire());
    }
}
