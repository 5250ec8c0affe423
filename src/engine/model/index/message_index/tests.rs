//! Engine layer, model: tests of the message index: phases and counters, and the FIFO rules of
//! `groups.rs` and `window.rs` seen through the index (docs/protocol.md §6.9).

use super::*;

fn rec(group: Option<&str>) -> MessageRecord {
    let mut r = MessageRecord {
        id: uuid::Uuid::nil(),
        body: "b".into(),
        sent_ms: 0,
        delay_s: 0,
        md5_of_body: [0; 16],
        extra: None,
    };
    r.extra_mut().group_id = group.map(str::to_owned);
    r.compact();
    r
}

impl MessageIndex {
    /// Inserts a message with record `rec` in memory.
    fn put(&mut self, seq: u64, rec: MessageRecord, state: StateRecord, now: u64) {
        let packed = PackedRecord::pack(&rec);
        self.insert(seq, &rec, packed, state, now);
    }
}

fn counts(ix: &MessageIndex) -> (usize, usize, usize) {
    (ix.ready_count(), ix.delayed_count(), ix.inflight_count())
}

#[test]
fn phases_and_counters() {
    let mut ix = MessageIndex::new(false);
    ix.put(1, rec(None), StateRecord::default(), 0);
    let delayed = StateRecord {
        visible_at_ms: 500,
        ..Default::default()
    };
    ix.put(2, rec(None), delayed, 0);
    assert_eq!(counts(&ix), (1, 1, 0));
    assert!(ix.hide(1, 1000, |_| {}).is_some());
    assert_eq!(counts(&ix), (0, 1, 1));
    ix.promote(600);
    assert_eq!(counts(&ix), (1, 0, 1));
    ix.promote(1000);
    assert_eq!(counts(&ix), (2, 0, 0));
    assert!(ix.remove(1).is_some());
    assert!(ix.remove(1).is_none());
    assert_eq!((ix.ready_count(), ix.next_seq()), (1, 3));
}

#[test]
fn fifo_head_in_flight_blocks_its_group() {
    let mut ix = MessageIndex::new(true);
    for (seq, g) in [(1, "a"), (2, "a"), (3, "b")] {
        ix.put(seq, rec(Some(g)), StateRecord::default(), 0);
    }
    assert_eq!(ix.pick(10), vec![1, 2, 3]);
    assert_eq!(ix.pick(1), vec![1]);
    ix.hide(1, 1000, |_| {});
    assert_eq!(ix.pick(10), vec![3]);
    // Freed by the delete, group a goes behind b.
    ix.remove(1);
    assert_eq!(ix.pick(10), vec![3, 2]);
}

/// Only the head matters: a head visible again is served even while later messages of its
/// group are in flight, and a run stops at the first invisible message.
#[test]
fn fifo_only_the_head_decides() {
    let mut ix = MessageIndex::new(true);
    for seq in 1..=4 {
        ix.put(seq, rec(Some("a")), StateRecord::default(), 0);
    }
    for seq in 1..=3 {
        ix.hide(seq, 1000, |_| {});
    }
    assert_eq!(
        ix.pick(10),
        Vec::<u64>::new(),
        "4 is behind an invisible head"
    );
    ix.hide(1, 0, |_| {});
    ix.promote(0);
    assert_eq!(ix.pick(10), vec![1], "the run stops at 2, in flight");
    ix.hide(2, 0, |_| {});
    ix.promote(0);
    assert_eq!(ix.pick(10), vec![1, 2]);
}

/// The example of the issue: g1-m1, g2-m1, g2-m2, g3-m1, g1-m2; a receive of 3 with
/// VisibilityTimeout=0 serves g1-m1, g1-m2, g2-m1 and sends g1 then g2 to the back.
#[test]
fn fifo_groups_served_go_to_the_back() {
    let mut ix = MessageIndex::new(true);
    for (seq, g) in [(1, "g1"), (2, "g2"), (3, "g2"), (4, "g3"), (5, "g1")] {
        ix.put(seq, rec(Some(g)), StateRecord::default(), 0);
    }
    let first = ix.pick(3);
    assert_eq!(first, vec![1, 5, 2]);
    for &seq in &first {
        ix.hide(seq, 0, |_| {});
    }
    ix.reveal(&first, 0);
    assert_eq!(ix.pick(10), vec![4, 1, 5, 2, 3]);
}

/// Places follow the moment a group became available, even when the engine notices a
/// visibility expiry late.
#[test]
fn fifo_late_promotion_keeps_the_moment() {
    let mut ix = MessageIndex::new(true);
    ix.put(1, rec(Some("a")), StateRecord::default(), 0);
    ix.hide(1, 20, |_| {});
    ix.put(2, rec(Some("b")), StateRecord::default(), 10);
    ix.put(3, rec(Some("c")), StateRecord::default(), 10);
    ix.hide(3, 30, |_| {});
    ix.promote(50);
    // b since 10, a since 20, c since 30.
    assert_eq!(ix.pick(10), vec![2, 1, 3]);
}

#[test]
fn fifo_scan_window() {
    let mut ix = MessageIndex::new(true);
    for (seq, g) in [(1, "a"), (2, "a"), (3, "a"), (4, "b")] {
        ix.put(seq, rec(Some(g)), StateRecord::default(), 0);
    }
    ix.set_window(Some(3));
    assert_eq!(ix.pick(10), vec![1, 2, 3]);
    ix.hide(1, 1000, |_| {});
    assert!(ix.pick(10).is_empty(), "b's message is the fourth");
    ix.remove(1);
    assert_eq!(ix.pick(10), vec![4, 2, 3]);
    ix.set_window(None);
    assert_eq!(ix.pick(10), vec![4, 2, 3]);
}

#[test]
fn wake_up_events() {
    let mut ix = MessageIndex::new(true);
    ix.put(1, rec(Some("a")), StateRecord::default(), 0);
    let e = ix.events();
    ix.hide(1, 1000, |_| {});
    assert_ne!(ix.events(), e, "the first pending time is new");
    let e = ix.events();
    ix.put(2, rec(Some("a")), StateRecord::default(), 0);
    assert_eq!(
        ix.events(),
        e,
        "behind an in-flight head: nothing to receive"
    );
    ix.hide(1, 2000, |_| {});
    assert_eq!(ix.events(), e, "a later visibility wakes nobody");
    ix.remove(1);
    assert_ne!(ix.events(), e, "the delete frees the group");
}

/// A group of 100k messages whose head is in flight costs a receive nothing: the group is
/// not among the available ones, so picking never walks it (the p99 < 1 ms).
#[test]
fn fifo_blocked_backlog_is_not_scanned() {
    let mut ix = MessageIndex::new(true);
    let r = rec(Some("big"));
    let packed = PackedRecord::pack(&r);
    for seq in 1..=100_000 {
        ix.insert(seq, &r, packed.clone(), StateRecord::default(), 0);
    }
    ix.put(100_001, rec(Some("small")), StateRecord::default(), 0);
    ix.set_window(Some(120_000));
    ix.hide(1, 1000, |_| {});
    let mut times: Vec<std::time::Duration> = (0..1000)
        .map(|_| {
            let t = std::time::Instant::now();
            assert_eq!(ix.pick(10), vec![100_001]);
            t.elapsed()
        })
        .collect();
    times.sort_unstable();
    assert!(
        times[989] < std::time::Duration::from_millis(1),
        "p99 {:?}",
        times[989]
    );
}

/// Random picks (the reorder fault): distinct ready messages only, as many as asked and
/// available, and every ready message about equally likely over many seeds.
#[test]
fn random_picks_are_distinct_ready_and_uniform() {
    let mut ix = MessageIndex::new(false);
    for seq in 0..200 {
        ix.put(seq, rec(None), StateRecord::default(), 0);
    }
    let in_flight = StateRecord {
        visible_at_ms: 1_000,
        receive_count: 1,
        ..Default::default()
    };
    for seq in 200..210 {
        ix.put(seq, rec(None), in_flight, 0);
    }
    let mut seen = vec![0u32; 200];
    for seed in 0..4_000 {
        let picks = ix.pick_random(10, seed);
        assert_eq!(picks.len(), 10);
        let mut sorted = picks.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), 10, "distinct: {picks:?}");
        for s in picks {
            assert!(s < 200, "{s} is in flight");
            seen[usize::try_from(s).expect("small")] += 1;
        }
    }
    // 40,000 picks over 200 messages: 200 each on average.
    let (lo, hi) = (seen.iter().min(), seen.iter().max());
    assert!(lo >= Some(&140) && hi <= Some(&260), "{lo:?}..{hi:?}");
    assert_eq!(
        ix.pick_random(500, 1).len(),
        200,
        "all when fewer than asked"
    );
    assert!(MessageIndex::new(false).pick_random(10, 1).is_empty());
}

/// A fair queue (§6.17): a flood of one tenant with 30 in flight is served after the other
/// tenants and the messages without a group id, which keep their order; a queue without group
/// ids keeps no tenants at all.
#[test]
fn fair_queue_serves_quiet_tenants_first() {
    let mut ix = MessageIndex::new(false);
    for seq in 1..=3 {
        ix.put(seq, rec(None), StateRecord::default(), 0);
    }
    assert!(ix.tenants.is_none(), "no group id, no tenants");
    let a = rec(Some("a"));
    let packed = PackedRecord::pack(&a);
    for seq in 4..10_004 {
        ix.insert(seq, &a, packed.clone(), StateRecord::default(), 0);
    }
    for seq in 10_004..10_014 {
        ix.put(seq, rec(Some("b")), StateRecord::default(), 0);
    }
    ix.put(10_014, rec(None), StateRecord::default(), 0);
    assert!(ix.noisy().is_none(), "nothing in flight");
    assert_eq!(ix.pick(5), vec![1, 2, 3, 4, 5]);
    // Consumers hold 30 of a's messages (and the three loose ones).
    for seq in 1..34 {
        ix.hide(seq, 60_000, |s| s.receive_count = 1);
    }
    let noisy = ix.noisy().expect("a has 30 of 33 in flight");
    let b: Vec<u64> = (10_004..10_014).collect();
    assert_eq!(ix.pick_fair(10, &noisy), b);
    let mut rest = b.clone();
    rest.extend([10_014, 34, 35]);
    assert_eq!(ix.pick_fair(13, &noisy), rest, "then the loose one, then a");
    // b's and the loose message in flight too: a, 30 of 44, is still noisy, and all that is
    // ready.
    for &seq in &rest[..11] {
        ix.hide(seq, 60_000, |s| s.receive_count = 1);
    }
    let noisy = ix.noisy().expect("30 of 44 is more than a tenth");
    assert_eq!(ix.pick_fair(2, &noisy), vec![34, 35], "only a is ready");
    // Visible again, in flight no more: the oldest first, as without group ids.
    ix.promote(60_000);
    assert!(ix.noisy().is_none());
    assert_eq!(ix.pick(3), vec![1, 2, 3]);
    // The last message with a group id leaves: no tenants are kept.
    for seq in 4..10_014 {
        ix.remove(seq);
    }
    assert!(ix.tenants.is_none());
    assert_eq!(ix.pick(10), vec![1, 2, 3, 10_014]);
}
