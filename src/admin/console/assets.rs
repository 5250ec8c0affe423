//! Admin layer: the web console's page and assets (HTML, CSS, JavaScript modules, an SVG icon),
//! embedded in the binary and served at `/_localsqs/ui/`. The page arrives with the first page
//! of queues inlined, so it shows them as soon as its script runs, before any fetch.

use serde_json::{Value, json};

use super::queues;
use crate::admin::routes::UI_PATH;
use crate::admin::state::{Admin, AdminError, Answer, Req};
use crate::wire::WireResponse;

/// Content type of the JavaScript modules.
pub(super) const JS: &str = "text/javascript; charset=utf-8";

/// Every embedded file: path below `UI_PATH/`, content type, contents.
pub(super) const ASSETS: &[(&str, &str, &str)] = &[
    ("", "text/html; charset=utf-8", include_str!("index.html")),
    (
        "style.css",
        "text/css; charset=utf-8",
        include_str!("style.css"),
    ),
    ("favicon.svg", "image/svg+xml", include_str!("favicon.svg")),
    ("js/theme.js", JS, include_str!("js/theme.js")),
    ("js/main.js", JS, include_str!("js/main.js")),
    ("js/api.js", JS, include_str!("js/api.js")),
    ("js/dom.js", JS, include_str!("js/dom.js")),
    ("js/spark.js", JS, include_str!("js/spark.js")),
    ("js/queues.js", JS, include_str!("js/queues.js")),
    ("js/queue.js", JS, include_str!("js/queue.js")),
    ("js/messages.js", JS, include_str!("js/messages.js")),
    ("js/bulk.js", JS, include_str!("js/bulk.js")),
    ("js/actions.js", JS, include_str!("js/actions.js")),
    ("js/tools.js", JS, include_str!("js/tools.js")),
    ("js/topics.js", JS, include_str!("js/topics.js")),
];

/// The marker in `index.html` replaced by the first page of queues, so the page shows them
/// as soon as its script runs, before any fetch.
pub(super) const INITIAL_MARKER: &str = "{\"initial\":null}";

/// `GET /_localsqs/ui[/…]`: the page, its assets, or the redirect to the page.
pub async fn asset(admin: &Admin, r: &Req<'_>) -> Answer {
    let req = r.wire;
    let Some(rest) = req.path.strip_prefix(UI_PATH) else {
        return Err(AdminError::not_found("not a console path"));
    };
    let resp = if rest.is_empty() {
        let mut r = WireResponse::new(308, "text/plain; charset=utf-8", format!("{UI_PATH}/"));
        r.headers.push(("location", format!("{UI_PATH}/")));
        r
    } else {
        let file = rest.trim_start_matches('/');
        match ASSETS.iter().find(|(p, _, _)| *p == file) {
            None => WireResponse::new(
                404,
                "text/plain; charset=utf-8",
                format!("no console file {file}"),
            ),
            // Data only for a caller who proved who it is; the page then asks for the token.
            Some((_, ctype, body)) if file.is_empty() && r.authorized => {
                let first = queues::first_page(admin, &req.base_url).await;
                WireResponse::new(200, ctype, index_with(body, &first))
            }
            Some((_, ctype, body)) => WireResponse::new(200, ctype, (*body).to_owned()),
        }
    };
    Ok(resp)
}

/// `GET /_localsqs[/]`, or `GET /` from a browser: 302 to the console. Temporary, so that no
/// browser remembers it for the server's root.
pub fn home(_admin: &Admin, _r: &Req<'_>) -> Answer {
    let target = format!("{UI_PATH}/");
    let mut resp = WireResponse::new(302, "text/plain; charset=utf-8", target.clone());
    resp.headers.push(("location", target));
    Ok(resp)
}

/// The page with the first page of queues in its data block. `<` is escaped so no queue
/// name or URL can close the `<script type="application/json">` element.
pub(super) fn index_with(html: &str, first: &Value) -> String {
    let data = json!({ "initial": first })
        .to_string()
        .replace('<', "\\u003c");
    html.replacen(INITIAL_MARKER, &data, 1)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::admin::console::test_support::{admin, call, create, get};
    use crate::admin::routes::Route;

    #[tokio::test]
    async fn the_page_and_its_assets_are_embedded_with_strict_headers() {
        let s = admin();
        create(&s, "orders", &[]).await;
        let page = call(&s, Route::Console, &get("/_localsqs/ui/", None)).await;
        assert_eq!(page.status, 200);
        assert_eq!(page.content_type, "text/html; charset=utf-8");
        assert!(
            page.body.contains("\"name\":\"orders\""),
            "first page inlined"
        );
        assert!(!page.body.contains(INITIAL_MARKER));
        let header = |r: &WireResponse, n: &str| {
            r.headers
                .iter()
                .find(|(k, _)| *k == n)
                .map(|(_, v)| v.clone())
        };
        assert_eq!(header(&page, "cache-control").as_deref(), Some("no-cache"));
        assert!(
            header(&page, "content-security-policy")
                .is_some_and(|v| v.starts_with("default-src 'self'"))
        );
        for (path, ctype) in [
            ("/_localsqs/ui/style.css", "text/css; charset=utf-8"),
            ("/_localsqs/ui/js/main.js", JS),
            ("/_localsqs/ui/favicon.svg", "image/svg+xml"),
        ] {
            let r = call(&s, Route::Console, &get(path, None)).await;
            assert_eq!((r.status, r.content_type), (200, ctype), "{path}");
            assert!(!r.body.is_empty());
        }
        let redirect = call(&s, Route::Console, &get(UI_PATH, None)).await;
        assert_eq!(redirect.status, 308);
        assert_eq!(
            header(&redirect, "location").as_deref(),
            Some("/_localsqs/ui/")
        );
        assert_eq!(
            call(&s, Route::Console, &get("/_localsqs/ui/nope.js", None))
                .await
                .status,
            404
        );
        assert_eq!(
            call(
                &s,
                Route::Console,
                &get("/_localsqs/ui/../Cargo.toml", None)
            )
            .await
            .status,
            404
        );
        s.engine.close().await;
    }

    #[tokio::test]
    async fn the_admin_prefix_redirects_to_the_console() {
        let s = admin();
        let r = call(&s, Route::ConsoleHome, &get("/_localsqs/", None)).await;
        assert_eq!(r.status, 302);
        let location = r.headers.iter().find(|(k, _)| *k == "location");
        assert_eq!(location.map(|(_, v)| v.as_str()), Some("/_localsqs/ui/"));
        assert!(
            r.headers
                .iter()
                .any(|(k, _)| *k == "content-security-policy")
        );
        s.engine.close().await;
    }

    #[test]
    fn every_module_the_page_imports_is_embedded() {
        for (path, _, body) in ASSETS.iter().filter(|(p, _, _)| p.ends_with(".js")) {
            for line in body.lines().filter(|l| l.starts_with("import ")) {
                let from = line.rsplit(['\'', '"']).nth(1).expect("import path");
                let target = format!("js/{}", from.trim_start_matches("./"));
                assert!(
                    ASSETS.iter().any(|(p, _, _)| *p == target),
                    "{path} imports {from}, which is not embedded"
                );
            }
        }
    }

    #[test]
    fn inlined_data_cannot_close_its_script_element() {
        let html = format!("<script type=\"application/json\">{INITIAL_MARKER}</script>");
        let out = index_with(&html, &json!({ "x": "</script><script>alert(1)" }));
        assert_eq!(out.matches("</script>").count(), 1, "{out}");
    }
}
