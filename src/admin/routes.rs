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
    /// `GET /_localstack/init`: where LocalStack-style init hooks stand, in LocalStack's shape.
    LocalStackInit,
    /// `GET /_localstack/init/<stage>`: one stage of the init hooks.
    LocalStackInitStage,
    /// `GET /_localstack/info`: LocalStack's instance information.
    LocalStackInfo,
    /// `GET /_localsqs/about`: which server this is, its version and where its state lives.
    About,
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
    /// `GET /_localsqs/topics`: every SNS topic with its counters and subscriptions.
    ConsoleTopics,
    /// `GET /SimpleNotificationService-<hex>.pem`: the certificate SNS envelopes are signed
    /// with (their `SigningCertURL`).
    SnsCertificate,
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
    /// A path that starts with this and has no further `/`.
    Starting(&'static str),
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
            PathMatch::Starting(p) => path.strip_prefix(p).is_some_and(|rest| !rest.contains('/')),
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
    (
        "GET",
        PathMatch::Exact(LOCALSTACK_INIT_PATH),
        Route::LocalStackInit,
    ),
    (
        "GET",
        PathMatch::Under(LOCALSTACK_INIT_PATH),
        Route::LocalStackInitStage,
    ),
    (
        "GET",
        PathMatch::Exact("/_localstack/info"),
        Route::LocalStackInfo,
    ),
    ("GET", PathMatch::Exact(ABOUT_PATH), Route::About),
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
    ("GET", PathMatch::Exact(TOPICS_PATH), Route::ConsoleTopics),
    (
        "GET",
        PathMatch::Starting(SNS_CERT_PREFIX),
        Route::SnsCertificate,
    ),
    ("POST", PathMatch::Below(QUEUES_PATH), Route::ConsoleBulk),
];

/// The console's JSON list of SNS topics.
pub const TOPICS_PATH: &str = "/_localsqs/topics";
/// Where SNS's signing certificate is served: this, hex, `.pem`.
pub const SNS_CERT_PREFIX: &str = "/SimpleNotificationService-";

/// Path of LocalStack's init-hook status; `/<stage>` below it gives one stage.
pub const LOCALSTACK_INIT_PATH: &str = "/_localstack/init";
/// Path of the server's identity (`localsqs clock|faults` ask it first).
pub const ABOUT_PATH: &str = "/_localsqs/about";
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

/// [`localstack_route`] when the server follows LocalStack's conventions, else [`route`].
#[must_use]
pub fn route_in(localstack: bool, method: &str, path: &str, has_target: bool) -> Option<Route> {
    if localstack {
        localstack_route(method, path, has_target)
    } else {
        route(method, path, has_target)
    }
}

/// [`route`] with LocalStack's conventions (`--compat localstack`): its developer endpoint,
/// `/_aws/sqs/messages`, also takes SDK calls, by any method and with `X-Amz-Target`, so that
/// it can serve as an SDK's endpoint URL.
#[must_use]
pub fn localstack_route(method: &str, path: &str, has_target: bool) -> Option<Route> {
    // SDKs append the operation's path, `/`, to the endpoint URL's.
    if path.strip_suffix('/').unwrap_or(path) == PEEK_PATH {
        return Some(Route::Peek);
    }
    route(method, path, has_target)
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
            // The init status is a readiness check: wait scripts poll `/_localstack/init/ready`.
            Route::Health
            | Route::LocalStackHealth
            | Route::LocalStackInit
            | Route::LocalStackInitStage => Access::Open,
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
                | Route::ConsoleTopics
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
            route("GET", "/SimpleNotificationService-abc.pem", false),
            Some(Route::SnsCertificate)
        );
        assert_eq!(route("GET", "/SimpleNotificationService-a/b", false), None);
        assert_eq!(
            route("GET", "/_localsqs/topics", false),
            Some(Route::ConsoleTopics)
        );
        assert_eq!(
            route("GET", "/_localstack/init", false),
            Some(Route::LocalStackInit)
        );
        assert_eq!(
            route("GET", "/_localstack/init/ready", false),
            Some(Route::LocalStackInitStage)
        );
        assert_eq!(route("GET", "/_localstack/init/ready/x", false), None);
        assert_eq!(
            route("GET", "/_localstack/info", false),
            Some(Route::LocalStackInfo)
        );
        assert_eq!(route("GET", "/_localsqs/about", false), Some(Route::About));
        assert_eq!(route("GET", "/_localsqs/aboutx", false), None);
        // LocalStack's developer endpoint takes SDK calls with --compat localstack only.
        assert_eq!(route("POST", PEEK_PATH, true), None);
        assert_eq!(localstack_route("POST", PEEK_PATH, true), Some(Route::Peek));
        assert_eq!(
            localstack_route("POST", PEEK_PATH, false),
            Some(Route::Peek)
        );
        assert_eq!(localstack_route("POST", "/", true), None);
        assert_eq!(
            localstack_route("GET", "/health", false),
            Some(Route::Health)
        );
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
