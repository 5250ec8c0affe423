//! Engine layer, model: where a queue URL or ARN says a queue lives: its account, region and name.
//!
//! Queues are keyed by (account, region, name) ([`Scope`]). A request's own scope is decided
//! by the caller, usually with `Engine::scope_for` (the region of its SigV4 credential scope,
//! the account of a 12-digit access key id, else the configured ones), and travels in its
//! `RequestContext`. Queue URLs and ARNs then override it: the account (and, for the
//! LocalStack forms, the region) in a queue URL names the queue addressed. Background work
//! (move tasks, the sweeper) addresses queues by id or by ARN and never needs a scope.

use crate::command::Scope;

/// What a `QueueUrl` names: a queue name, and the account and region when the URL carries them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct UrlParts<'a> {
    pub account: Option<&'a str>,
    pub region: Option<&'a str>,
    pub name: &'a str,
}

/// Parses every queue URL form clients hand back (§2.3): AWS's
/// `https://sqs.<region>.amazonaws.com/<account>/<name>` (and the older
/// `<region>.queue.amazonaws.com`), LocalStack's `sqs.<region>.localhost.localstack.cloud`
/// hosts and `/queue/<region>/<account>/<name>` paths, ElasticMQ's `/queue/<name>` and
/// `/<account>/<name>`, a bare path, or a bare name.
pub(crate) fn parse_url(url: &str) -> Option<UrlParts<'_>> {
    let (host, path) = match url.split_once("://") {
        Some((_, rest)) => rest.split_once('/').unwrap_or((rest, "")),
        None => ("", url),
    };
    let path = path.split(['?', '#']).next().unwrap_or("");
    // At most four segments are meaningful; a fifth makes the URL unknown. Collected into an
    // array: this runs for every request that names a queue.
    let mut segs = [""; 5];
    let mut count = 0;
    for seg in path.split('/').filter(|s| !s.is_empty()) {
        if count == segs.len() {
            return None;
        }
        segs[count] = seg;
        count += 1;
    }
    let host_region = region_of_host(host.split(':').next().unwrap_or(""));
    let (account, region, name) = match &segs[..count] {
        ["queue", region, account, name] => (Some(*account), Some(*region), *name),
        ["queue", name] => (None, None, *name),
        [account, name] => (Some(*account), None, *name),
        [name] => (None, None, *name),
        _ => return None,
    };
    Some(UrlParts {
        account,
        region: region.or(host_region),
        name,
    })
}

/// The region an SQS host names: `sqs.<region>.amazonaws.com`, `<region>.queue.amazonaws.com`,
/// `sqs.<region>.localhost.localstack.cloud`.
fn region_of_host(host: &str) -> Option<&str> {
    let mut labels = host.split('.');
    match (labels.next(), labels.next(), labels.next()) {
        (Some("sqs"), Some(region), Some(_)) if looks_like_region(region) => Some(region),
        (Some(region), Some("queue"), Some("amazonaws")) if looks_like_region(region) => {
            Some(region)
        }
        _ => None,
    }
}

/// `xx-name-N` (us-east-1, eu-west-2, ap-southeast-1, us-gov-west-1, …).
fn looks_like_region(s: &str) -> bool {
    let mut count = 0;
    let mut last = "";
    for p in s.split('-') {
        if p.is_empty() || !p.bytes().all(|b| b.is_ascii_alphanumeric()) {
            return false;
        }
        count += 1;
        last = p;
    }
    count >= 3 && last.bytes().all(|b| b.is_ascii_digit())
}

/// The scope and name of a queue ARN (`arn:aws:sqs:<region>:<account>:<name>`).
pub(crate) fn parse_arn(arn: &str) -> Option<(Scope, &str)> {
    let mut p = arn.splitn(6, ':');
    let (Some("arn"), Some(_partition), Some("sqs"), Some(region), Some(account), Some(name)) =
        (p.next(), p.next(), p.next(), p.next(), p.next(), p.next())
    else {
        return None;
    };
    (!name.is_empty()).then(|| {
        (
            Scope {
                account: account.to_owned(),
                region: region.to_owned(),
            },
            name,
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::is_account_id;

    fn parts(url: &str) -> Option<(Option<&str>, Option<&str>, &str)> {
        parse_url(url).map(|p| (p.account, p.region, p.name))
    }

    #[test]
    fn every_queue_url_form() {
        let a = Some("000000000000");
        assert_eq!(
            parts("http://localhost:9324/000000000000/jobs"),
            Some((a, None, "jobs"))
        );
        assert_eq!(
            parts("https://sqs.eu-west-1.amazonaws.com/000000000000/q.fifo"),
            Some((a, Some("eu-west-1"), "q.fifo"))
        );
        assert_eq!(
            parts("http://sqs.us-east-2.localhost.localstack.cloud:4566/000000000000/q"),
            Some((a, Some("us-east-2"), "q"))
        );
        assert_eq!(
            parts("http://localhost:4566/queue/ap-south-1/000000000000/q"),
            Some((a, Some("ap-south-1"), "q"))
        );
        assert_eq!(
            parts("http://localhost:9324/queue/q"),
            Some((None, None, "q"))
        );
        assert_eq!(parts("/000000000000/jobs"), Some((a, None, "jobs")));
        assert_eq!(parts("jobs"), Some((None, None, "jobs")));
        assert_eq!(
            parts("https://us-west-2.queue.amazonaws.com/000000000000/q"),
            Some((a, Some("us-west-2"), "q"))
        );
        assert_eq!(parts("http://whatever-incorrect-queue-address"), None);
        assert_eq!(parts(""), None);
        assert_eq!(parts("http://h/a/b/c"), None);
        assert_eq!(parts("http://h/queue/r/a/q/extra"), None, "five segments");
        assert_eq!(parts("http://h/a/b/c/d/e/f"), None);
        assert_eq!(
            parts("https://sqs.eu-west.amazonaws.com/000000000000/q"),
            Some((a, None, "q")),
            "a two-part region is not a region"
        );
        assert_eq!(
            parts("https://sqs.eu--1.amazonaws.com/000000000000/q"),
            Some((a, None, "q"))
        );
        assert_eq!(
            parts("https://sqs.eu-west-x.amazonaws.com/000000000000/q"),
            Some((a, None, "q"))
        );
    }

    #[test]
    fn arns_carry_region_and_account() {
        let (s, n) = parse_arn("arn:aws:sqs:eu-west-1:123456789012:dlq").expect("an ARN");
        assert_eq!(
            (s.region.as_str(), s.account.as_str(), n),
            ("eu-west-1", "123456789012", "dlq")
        );
        assert_eq!(s.arn(n), "arn:aws:sqs:eu-west-1:123456789012:dlq");
        assert!(parse_arn("arn:aws:sns:us-east-1:000000000000:t").is_none());
        assert!(parse_arn("dlq").is_none());
        assert!(is_account_id("123456789012"));
        assert!(!is_account_id("test"));
    }
}
