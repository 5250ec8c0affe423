//! Browser origin protection: a page of another origin cannot drive the server; the server's
//! own pages and `--cors-origin` origins can, with CORS headers and preflights; SDKs, which
//! send no Origin, are never affected.

use localsqs::CorsOrigins;

use super::http::{Response, exchange};

const JSON: &str = "application/x-amz-json-1.0";

async fn start(origins: &[&str]) -> localsqs::RunningServer {
    localsqs::Server::builder()
        .cors_origins(CorsOrigins::new(origins.iter().map(|o| (*o).to_owned())))
        .start()
        .await
        .expect("server starts")
}

async fn create_queue(server: &localsqs::RunningServer, extra: &[(&str, &str)]) -> Response {
    let mut headers = vec![
        ("Content-Type", JSON),
        ("X-Amz-Target", "AmazonSQS.CreateQueue"),
    ];
    headers.extend_from_slice(extra);
    exchange(
        server.local_addr(),
        "POST",
        "/",
        &headers,
        r#"{"QueueName":"q"}"#,
    )
    .await
    .expect("answered")
}

async fn queue_count(server: &localsqs::RunningServer) -> usize {
    server.engine().queue_counts().len()
}

#[tokio::test]
async fn a_cross_origin_form_post_is_refused_and_changes_nothing() {
    let server = start(&[]).await;
    let form = exchange(
        server.local_addr(),
        "POST",
        "/",
        &[
            ("Content-Type", "application/x-www-form-urlencoded"),
            ("Origin", "http://evil.example"),
            ("Sec-Fetch-Site", "cross-site"),
        ],
        "Action=CreateQueue&QueueName=q",
    )
    .await
    .expect("answered");
    assert_eq!(form.status, 403, "{}", form.body);
    assert!(
        form.body.contains("<Code>AccessDenied</Code>"),
        "{}",
        form.body
    );
    assert!(form.body.contains("http://evil.example"), "{}", form.body);
    let json = create_queue(&server, &[("Origin", "http://evil.example")]).await;
    assert_eq!(json.status, 403);
    assert_eq!(
        json.header("x-amzn-query-error"),
        Some("AccessDenied;Sender")
    );
    assert_eq!(queue_count(&server).await, 0);
    server.shutdown().await;
}

#[tokio::test]
async fn a_cross_origin_reset_is_refused() {
    let server = start(&[]).await;
    assert_eq!(create_queue(&server, &[]).await.status, 200);
    let reset = exchange(
        server.local_addr(),
        "POST",
        "/_localsqs/reset",
        &[("Origin", "http://evil.example")],
        "",
    )
    .await
    .expect("answered");
    assert_eq!(reset.status, 403);
    assert_eq!(queue_count(&server).await, 1, "nothing was wiped");
    server.shutdown().await;
}

#[tokio::test]
async fn an_image_get_from_another_site_is_refused() {
    let server = start(&[]).await;
    let get = exchange(
        server.local_addr(),
        "GET",
        "/?Action=CreateQueue&QueueName=q",
        &[("Sec-Fetch-Site", "cross-site")],
        "",
    )
    .await
    .expect("answered");
    assert_eq!(get.status, 403);
    assert_eq!(queue_count(&server).await, 0);
    server.shutdown().await;
}

#[tokio::test]
async fn the_servers_own_pages_and_sdks_are_served() {
    let server = start(&[]).await;
    let own = format!("http://{}", server.local_addr());
    let console = create_queue(
        &server,
        &[("Origin", own.as_str()), ("Sec-Fetch-Site", "same-origin")],
    )
    .await;
    assert_eq!(console.status, 200, "{}", console.body);
    assert_eq!(console.header("access-control-allow-origin"), None);
    assert_eq!(create_queue(&server, &[]).await.status, 200, "an SDK");
    server.shutdown().await;
}

#[tokio::test]
async fn an_allowed_origin_gets_cors_headers_and_preflights() {
    let server = start(&["http://localhost:3000"]).await;
    let preflight = exchange(
        server.local_addr(),
        "OPTIONS",
        "/",
        &[
            ("Origin", "http://localhost:3000"),
            ("Access-Control-Request-Method", "POST"),
            (
                "Access-Control-Request-Headers",
                "content-type,x-amz-target",
            ),
        ],
        "",
    )
    .await
    .expect("answered");
    assert_eq!(preflight.status, 204);
    assert_eq!(
        preflight.header("access-control-allow-origin"),
        Some("http://localhost:3000")
    );
    assert_eq!(
        preflight.header("access-control-allow-headers"),
        Some("content-type,x-amz-target")
    );
    let call = create_queue(&server, &[("Origin", "http://localhost:3000")]).await;
    assert_eq!(call.status, 200, "{}", call.body);
    assert_eq!(
        call.header("access-control-allow-origin"),
        Some("http://localhost:3000")
    );
    let other = create_queue(&server, &[("Origin", "http://localhost:4000")]).await;
    assert_eq!(other.status, 403);
    server.shutdown().await;
}
