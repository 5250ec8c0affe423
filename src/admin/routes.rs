//! Admin layer: the route table of every endpoint that is not the SQS API, and every path they
//! answer on. The handlers are in the files named after them; `handle.rs` matches a route to
//! its handler.
//!
//! To add an endpoint: a [`Route`] variant, a row in [`ROUTES`], a handler, an arm in
//! `Admin::handle` (docs/adding-an-action.md, "Adding an admin endpoint").

/// A non-SQS endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// `GET /health`: liveness and readiness as JSON.
    Health,
    /// `GET /metrics`: Prometheus text format.
    Metrics,
    /// `GET /_aws/sqs/messages[/<region>/<account>/<queue>]`: LocalStack-compatible peek.
    Peek,
    /// `POST /_localsqs/reset`: drops every queue and message, then restores the starting
    /// state: the declared queues, fault rules and clock.
    Reset,
    /// `GET /_localstack/health`: LocalStack's health check, answering that SQS is running.
    LocalStackHealth,
    /// `GET /_localsqs/clock`: the server's time, offset and whether it is frozen.
    ShowClock,
    /// `POST /_localsqs/clock`: advance, freeze, resume or reset the clock.
    SetClock,
    /// `GET /_localsqs/faults`: the fault-injection rules.
    ListFaults,
    /// `POST /_localsqs/faults`: adds a rule, answers its id.
    AddFault,
    /// `DELETE /_localsqs/faults`: removes every rule.
    ClearFaults,
    /// `DELETE /_localsqs/faults/<id>`: removes one rule.
    RemoveFault,
    /// `GET /_localsqs/push`: push targets with their last invocations.
    ListPush,
    /// `POST /_localsqs/push`: adds a push target, answers its id.
    AddPush,
    /// `DELETE /_localsqs/push`: removes every push target.
    ClearPush,
    /// `DELETE /_localsqs/push/<id>`: removes one push target.
    RemovePush,
    /// `GET /_localsqs/ui[/<file>]`: the web console and its embedded assets.
    Console,
    /// `GET /_localsqs[/]`, and `GET /` from a browser ([`browser_home`]): a redirect to the
    /// console.
    ConsoleHome,
    /// `GET /_localsqs/queues?prefix=&contains=&offset=&limit=`: a page of queues with counts.
    ConsoleQueues,
    /// `GET /_localsqs/queues/<name>[/messages?state=&offset=&limit=]`: a queue's counts, or a
    /// page of its messages with their state, without receiving them.
    ConsoleMessages,
    /// `DELETE /_localsqs/queues/<name>/messages/<id>`: deletes one message by id, whatever its
    /// state, without receiving it.
    ConsoleDeleteMessage,
    /// `POST /_localsqs/queues/<name>/messages/delete` and `…/messages/move`: deletes, or moves
    /// to another queue, the messages with the ids given.
    ConsoleBulk,
}

/// How a route's path matches.
#[derive(Debug, Clone, Copy)]
enum PathMatch {
    /// Exactly this path.
    Exact(&'static str),
    /// This path, or this path followed by `/` and more segments.
    Tree(&'static str),
    /// This path followed by `/` and one more non-empty segment.
    Under(&'static str),
    /// This path followed by `/` and one or more segments.
    Below(&'static str),
}

impl PathMatch {
    fn matches(self, path: &str) -> bool {
        match self {
            PathMatch::Exact(p) => path == p,
            PathMatch::Tree(p) => path
                .strip_prefix(p)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('/')),
            PathMatch::Under(p) => path
                .strip_prefix(p)
                .and_then(|rest| rest.strip_prefix('/'))
                .is_some_and(|seg| !seg.is_empty() && !seg.contains('/')),
            PathMatch::Below(p) => path
                .strip_prefix(p)
                .and_then(|rest| rest.strip_prefix('/'))
                .is_some_and(|rest| !rest.is_empty()),
        }
    }
}

/// Path of the LocalStack-compatible peek endpoint.
pub const PEEK_PATH: &str = "/_aws/sqs/messages";
/// The response header carrying the NextToken of the next peek page.
pub const PEEK_NEXT_HEADER: &str = "x-localsqs-next-token";

/// Every admin endpoint: method, path, route.
const ROUTES: &[(&str, PathMatch, Route)] = &[
    ("GET", PathMatch::Exact("/health"), Route::Health),
    ("GET", PathMatch::Exact("/metrics"), Route::Metrics),
    (
        "GET",
        PathMatch::Exact("/_localstack/health"),
        Route::LocalStackHealth,
    ),
    (
        "HEAD",
        PathMatch::Exact("/_localstack/health"),
        Route::LocalStackHealth,
    ),
    ("GET", PathMatch::Tree(PEEK_PATH), Route::Peek),
    ("POST", PathMatch::Exact(RESET_PATH), Route::Reset),
    ("GET", PathMatch::Exact(CLOCK_PATH), Route::ShowClock),
    ("POST", PathMatch::Exact(CLOCK_PATH), Route::SetClock),
    ("GET", PathMatch::Exact(FAULTS_PATH), Route::ListFaults),
    ("POST", PathMatch::Exact(FAULTS_PATH), Route::AddFault),
    ("DELETE", PathMatch::Exact(FAULTS_PATH), Route::ClearFaults),
    ("DELETE", PathMatch::Under(FAULTS_PATH), Route::RemoveFault),
    ("GET", PathMatch::Exact(PUSH_PATH), Route::ListPush),
    ("POST", PathMatch::Exact(PUSH_PATH), Route::AddPush),
    ("DELETE", PathMatch::Exact(PUSH_PATH), Route::ClearPush),
    ("DELETE", PathMatch::Under(PUSH_PATH), Route::RemovePush),
    ("GET", PathMatch::Tree(UI_PATH), Route::Console),
    ("GET", PathMatch::Exact(HOME_PATH), Route::ConsoleHome),
    ("GET", PathMatch::Exact("/_localsqs/"), Route::ConsoleHome),
    ("GET", PathMatch::Exact(QUEUES_PATH), Route::ConsoleQueues),
    ("GET", PathMatch::Tree(QUEUES_PATH), Route::ConsoleMessages),
    (
        "DELETE",
        PathMatch::Tree(QUEUES_PATH),
        Route::ConsoleDeleteMessage,
    ),
    ("POST", PathMatch::Below(QUEUES_PATH), Route::ConsoleBulk),
];

/// Path of the clock control.
pub const CLOCK_PATH: &str = "/_localsqs/clock";
/// Path of the fault-injection rules.
pub const FAULTS_PATH: &str = "/_localsqs/faults";
/// Path of the push-target endpoints.
pub const PUSH_PATH: &str = "/_localsqs/push";
/// Path of the reset.
pub const RESET_PATH: &str = "/_localsqs/reset";
/// The admin endpoints' common prefix; a browser opening it is sent to the console.
pub const HOME_PATH: &str = "/_localsqs";
/// Where the console is served; `UI_PATH` without the slash redirects here.
pub const UI_PATH: &str = "/_localsqs/ui";
/// The console's JSON list of queues; `/<name>/messages` below it lists messages.
pub const QUEUES_PATH: &str = "/_localsqs/queues";

/// The admin route a request addresses, if any. A request naming an SQS operation in
/// `X-Amz-Target` is always the SQS API's.
#[must_use]
pub fn route(method: &str, path: &str, has_target: bool) -> Option<Route> {
    if has_target {
        return None;
    }
    ROUTES
        .iter()
        .find(|(m, p, _)| *m == method && p.matches(path))
        .map(|(_, _, r)| *r)
}

/// Whether a request is a browser opening the server's root: `GET /` accepting `text/html`, with
/// no `Action` in its query string and no `X-Amz-Target` (the SQS API's requests have one of
/// them). It is sent to the console; an SDK's `GET /` keeps the SQS API's answer.
#[must_use]
pub fn browser_home(
    method: &str,
    path: &str,
    query: Option<&str>,
    accept: Option<&str>,
    has_target: bool,
) -> bool {
    method == "GET"
        && path == "/"
        && !has_target
        && accept.is_some_and(|a| a.contains("text/html"))
        && !query
            .unwrap_or_default()
            .split('&')
            .any(|field| field == "Action" || field.starts_with("Action="))
}

/// Who may call a route when the server requires authentication (`--auth sigv4` or
/// `--admin-token`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Anyone: health checks, which orchestrators and wait scripts poll unsigned.
    Open,
    /// Anyone with `--metrics-open`, else only authenticated callers.
    Metrics,
    /// Anyone may fetch the console's page and assets (they hold no data); the page shows data
    /// only once the browser presents the admin token.
    Page,
    /// Only authenticated callers: everything that reads or changes state.
    Guarded,
}

impl Route {
    /// Who may call this route when authentication is required.
    #[must_use]
    pub fn access(self) -> Access {
        match self {
            Route::Health | Route::LocalStackHealth => Access::Open,
            Route::Metrics => Access::Metrics,
            // The redirect holds no data either; a browser follows it to the page.
            Route::Console | Route::ConsoleHome => Access::Page,
            _ => Access::Guarded,
        }
    }

    /// Whether the route belongs to the web console (its answers carry the console's headers).
    #[must_use]
    pub fn is_console(self) -> bool {
        matches!(
            self,
            Route::Console
                | Route::ConsoleHome
                | Route::ConsoleQueues
                | Route::ConsoleMessages
                | Route::ConsoleDeleteMessage
                | Route::ConsoleBulk
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_match_whole_segments() {
        assert_eq!(route("GET", "/health", false), Some(Route::Health));
        assert_eq!(route("GET", "/metrics", false), Some(Route::Metrics));
        assert_eq!(route("POST", "/_localsqs/reset", false), Some(Route::Reset));
        assert_eq!(route("GET", PEEK_PATH, false), Some(Route::Peek));
        assert_eq!(
            route("GET", "/_aws/sqs/messages/us-east-1/000000000000/q", false),
            Some(Route::Peek)
        );
        assert_eq!(route("GET", "/_aws/sqs/messagesxq", false), None);
        assert_eq!(route("GET", "/_localsqs/reset", false), None);
        assert_eq!(route("POST", "/health", false), None);
        assert_eq!(route("GET", "/health", true), None);
        assert_eq!(route("POST", FAULTS_PATH, false), Some(Route::AddFault));
        assert_eq!(
            route("DELETE", "/_localsqs/faults/fault-1", false),
            Some(Route::RemoveFault)
        );
        assert_eq!(route("DELETE", "/_localsqs/faults/a/b", false), None);
        assert_eq!(
            route("DELETE", FAULTS_PATH, false),
            Some(Route::ClearFaults)
        );
        assert_eq!(route("POST", PUSH_PATH, false), Some(Route::AddPush));
        assert_eq!(
            route("DELETE", "/_localsqs/push/push-1", false),
            Some(Route::RemovePush)
        );
        assert_eq!(route("GET", "/_localsqs/ui", false), Some(Route::Console));
        assert_eq!(
            route("GET", "/_localsqs/ui/js/main.js", false),
            Some(Route::Console)
        );
        assert_eq!(route("GET", "/_localsqs/uix", false), None);
        assert_eq!(
            route("GET", "/_localsqs/queues", false),
            Some(Route::ConsoleQueues)
        );
        assert_eq!(
            route("GET", "/_localsqs/queues/q/messages", false),
            Some(Route::ConsoleMessages)
        );
        assert_eq!(
            route("DELETE", "/_localsqs/queues/q/messages/id", false),
            Some(Route::ConsoleDeleteMessage)
        );
        assert_eq!(route("POST", "/_localsqs/queues", false), None);
        assert_eq!(
            route("POST", "/_localsqs/queues/q/messages/move", false),
            Some(Route::ConsoleBulk)
        );
        assert_eq!(route("GET", "/_localsqs", false), Some(Route::ConsoleHome));
        assert_eq!(route("GET", "/_localsqs/", false), Some(Route::ConsoleHome));
        assert_eq!(route("GET", "/_localsqs/", true), None);
        assert_eq!(route("GET", "/", false), None, "the SQS API's");
    }

    #[test]
    fn only_a_browser_opening_the_root_is_sent_to_the_console() {
        let html = Some("text/html,application/xhtml+xml,*/*;q=0.8");
        assert!(browser_home("GET", "/", None, html, false));
        assert!(browser_home("GET", "/", Some("x=1"), html, false));
        // An SDK, curl, or anything naming an SQS action keeps the SQS API's answer.
        assert!(!browser_home("GET", "/", None, Some("*/*"), false));
        assert!(!browser_home("GET", "/", None, None, false));
        assert!(!browser_home(
            "GET",
            "/",
            Some("Action=ListQueues"),
            html,
            false
        ));
        assert!(!browser_home(
            "GET",
            "/",
            Some("Version=2012-11-05&Action=ListQueues"),
            html,
            false
        ));
        assert!(!browser_home("GET", "/", None, html, true));
        assert!(!browser_home("POST", "/", None, html, false));
        assert!(!browser_home("GET", "/000000000000/q", None, html, false));
    }
}
