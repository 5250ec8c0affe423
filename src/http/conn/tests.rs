//! HTTP layer: tests of the connection watchdog's deadlines and activity tracking.

use super::*;

fn limits() -> ConnectionLimits {
    ConnectionLimits {
        header_timeout: Duration::from_secs(10),
        body_timeout: Duration::from_secs(30),
        idle_timeout: Duration::from_secs(60),
        max_connections: 4,
    }
}

#[tokio::test(start_paused = true)]
async fn idle_then_header_then_busy() {
    let a = Activity::new(limits());
    let idle = a.deadline(false).expect("idle has a deadline");
    assert_eq!(idle - a.origin, Duration::from_secs(60));
    tokio::time::advance(Duration::from_secs(5)).await;
    a.bytes_read();
    let header = a.deadline(false).expect("header has a deadline");
    assert_eq!(header - a.origin, Duration::from_secs(15));
    a.request_started();
    assert_eq!(a.deadline(false), None, "a busy connection never expires");
    tokio::time::advance(Duration::from_secs(100)).await;
    a.request_finished();
    let idle = a.deadline(false).expect("idle again");
    assert_eq!(idle - a.origin, Duration::from_secs(165));
    assert_eq!(
        a.deadline(true).expect("pressured") - a.origin,
        Duration::from_secs(106)
    );
}

#[tokio::test(start_paused = true)]
async fn expired_fires_for_a_slow_header_but_not_while_busy() {
    let a = Activity::new(limits());
    let (_p, pressure) = watch::channel(false);
    let (_s, stop) = watch::channel(false);
    a.request_started();
    let waited = tokio::time::timeout(
        Duration::from_secs(3600),
        a.expired(pressure.clone(), stop.clone()),
    )
    .await;
    assert!(waited.is_err(), "busy connections are left alone");
    a.request_finished();
    a.bytes_read();
    let started = Instant::now();
    a.expired(pressure, stop).await;
    assert_eq!(started.elapsed(), Duration::from_secs(10));
}

#[tokio::test(start_paused = true)]
async fn stop_closes_idle_connections_at_once() {
    let a = Activity::new(limits());
    let (_p, pressure) = watch::channel(false);
    let (s, stop) = watch::channel(false);
    let started = Instant::now();
    let task = tokio::spawn({
        let a = Arc::clone(&a);
        async move { a.expired(pressure, stop).await }
    });
    tokio::task::yield_now().await;
    s.send(true).expect("send");
    task.await.expect("joins");
    assert_eq!(started.elapsed(), Duration::ZERO);
}

/// Whether the watchdog has a wake-up waiting for it.
async fn woken(a: &Activity) -> bool {
    tokio::time::timeout(Duration::ZERO, a.changed.notified())
        .await
        .is_ok()
}

#[tokio::test(start_paused = true)]
async fn requests_wake_the_watchdog_only_when_its_deadline_comes_sooner() {
    let a = Activity::new(limits());
    // The watchdog sleeps until the first header's deadline, 10 s.
    a.sleeping_until.store(10_000, Ordering::SeqCst);
    for _ in 0..100 {
        a.bytes_read();
        a.request_started();
        a.request_finished();
    }
    assert!(!woken(&a).await, "keep-alive traffic left it asleep");
    // Planned while busy, for the soonest deadline there could be: 10 s from then.
    a.request_started();
    a.sleeping_until
        .store(a.elapsed_ms() + 10_000, Ordering::SeqCst);
    a.request_finished();
    a.bytes_read();
    assert!(
        !woken(&a).await,
        "neither the idle nor the header deadline is sooner"
    );
    // While the server stops, finishing a request always wakes it.
    a.request_started();
    a.stopping.store(true, Ordering::SeqCst);
    a.request_finished();
    assert!(woken(&a).await);
    a.stopping.store(false, Ordering::SeqCst);
    // Asleep until an idle deadline: a header's sooner deadline wakes it.
    a.sleeping_until.store(60_000, Ordering::SeqCst);
    a.bytes_read();
    assert!(woken(&a).await);
}

#[tokio::test(start_paused = true)]
async fn a_keep_alive_connection_under_load_is_looked_at_every_few_seconds_not_per_request() {
    let a = Activity::new(limits());
    let (_p, pressure) = watch::channel(false);
    let (_s, stop) = watch::channel(false);
    let task = tokio::spawn({
        let a = Arc::clone(&a);
        async move { OnWake::new(a.expired(pressure, stop)).await }
    });
    // 20 s of back-to-back requests, each read, run and answered at once (as in memory).
    for _ in 0..20_000 {
        a.bytes_read();
        a.request_started();
        a.request_finished();
        tokio::time::advance(Duration::from_millis(1)).await;
    }
    let looks = a.looks.load(Ordering::SeqCst);
    assert!(looks <= 4, "{looks} looks");
    assert!(!task.is_finished());
    task.abort();
}

#[tokio::test(start_paused = true)]
async fn a_slow_header_after_unwatched_requests_still_closes_on_time() {
    let a = Activity::new(limits());
    let (_p, pressure) = watch::channel(false);
    let (_s, stop) = watch::channel(false);
    let started = Instant::now();
    let task = tokio::spawn({
        let a = Arc::clone(&a);
        async move { a.expired(pressure, stop).await }
    });
    tokio::task::yield_now().await;
    a.bytes_read();
    tokio::task::yield_now().await;
    for _ in 0..2 {
        tokio::time::advance(Duration::from_secs(1)).await;
        a.request_started();
        a.request_finished();
        a.bytes_read();
    }
    // The last header began at 2 s and never ends: 12 s, not the first header's 10 s.
    task.await.expect("joins");
    assert_eq!(started.elapsed(), Duration::from_secs(12));
}

#[tokio::test(start_paused = true)]
async fn a_busy_connection_closes_as_soon_as_its_request_ends_once_the_server_stops() {
    let a = Activity::new(limits());
    let (_p, pressure) = watch::channel(false);
    let (s, stop) = watch::channel(false);
    a.bytes_read();
    a.request_started();
    let task = tokio::spawn({
        let a = Arc::clone(&a);
        async move { OnWake::new(a.expired(pressure, stop)).await }
    });
    tokio::time::advance(Duration::from_secs(3)).await;
    s.send(true).expect("send");
    tokio::time::advance(Duration::from_secs(2)).await;
    assert!(!task.is_finished(), "busy: left alone");
    let started = Instant::now();
    a.request_finished();
    task.await.expect("joins");
    assert_eq!(started.elapsed(), Duration::ZERO);
}

#[test]
fn on_wake_polls_its_future_only_after_its_own_wakers_fire() {
    let polls = Arc::new(AtomicUsize::new(0));
    let registered: Arc<std::sync::Mutex<Option<Waker>>> = Arc::default();
    let inner = std::future::poll_fn({
        let (polls, registered) = (Arc::clone(&polls), Arc::clone(&registered));
        move |cx| {
            polls.fetch_add(1, Ordering::SeqCst);
            *registered.lock().expect("lock") = Some(cx.waker().clone());
            Poll::<()>::Pending
        }
    });
    let mut f = std::pin::pin!(OnWake::new(inner));
    let mut cx = Context::from_waker(Waker::noop());
    for _ in 0..3 {
        assert!(f.as_mut().poll(&mut cx).is_pending());
    }
    assert_eq!(
        polls.load(Ordering::SeqCst),
        1,
        "only the first poll reaches it"
    );
    let waker = registered.lock().expect("lock").take().expect("registered");
    waker.wake();
    assert!(f.as_mut().poll(&mut cx).is_pending());
    assert!(f.as_mut().poll(&mut cx).is_pending());
    assert_eq!(
        polls.load(Ordering::SeqCst),
        2,
        "woken once, polled once more"
    );
}

#[test]
fn pressure_above_three_quarters_of_the_cap() {
    let g = Gauge::new(limits());
    let p = g.pressure();
    for _ in 0..3 {
        g.opened();
    }
    assert!(!*p.borrow());
    g.opened();
    assert!(*p.borrow());
    g.closed();
    assert!(!*p.borrow());
}
