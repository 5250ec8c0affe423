//! The moto comparison: `moto_server` (when installed) started next to localsqs and driven by
//! the same load generator inside W1, W2, W3 and W5, with a small fixed count because moto is
//! O(backlog) per send. This module starts it and lists the localsqs / moto rows.

use std::time::Duration;

use super::{Workload, w01_send, w02_pipeline, w03_batch};
use crate::check::{Check, Unit};
use crate::cli::Params;
use crate::driver;
use crate::harness::{Bench, R_LOCALSTACK};
use crate::http::Proto;
use crate::procfs::{Kind, Server};

pub const WORKLOAD: Workload = Workload {
    id: "moto",
    name: "the same workloads against moto_server",
    measures: "localsqs / moto msgs/s (and moto / localsqs server CPU per message) for W1, W2 \
               and W3; moto's W5 wake latency",
    runs: "inside W1, W2 and W3 of every repeat at 8 connections (moto's best case), capped \
           at 1,000 messages and 30 s; W5 once with 40 samples",
};

/// Starts moto_server when it is installed and wanted; a failure is a note, not an error.
pub async fn start(b: &mut Bench) -> Option<Server> {
    let m = b.moto_bin.clone().filter(|_| b.want(WORKLOAD.id))?;
    let res = match Server::spawn(Kind::Moto, &m, &[], b.log("moto")) {
        Ok(s) => driver::wait_ready(&s, Proto::Query, Duration::from_secs(30))
            .await
            .map(|t| (s, t)),
        Err(e) => Err(e),
    };
    match res {
        Ok((s, t)) => {
            b.notes.push(format!(
                "moto_server answered its first ListQueues {:.0} ms after exec; moto runs use 8 connections (its best case) and are capped at {} messages and {} s",
                t.as_secs_f64() * 1000.0,
                b.p.moto_n,
                b.p.moto_cap.as_secs()
            ));
            Some(s)
        }
        Err(e) => {
            b.notes.push(format!("moto skipped: {e}"));
            None
        }
    }
}

/// The rows "Against moto: W1/W2/W3", then "Against LocalStack: …" (context: measured only
/// with `--localstack`).
pub fn checks(p: &Params) -> Vec<Check> {
    let moto = [
        w01_send::moto_check(p),
        w02_pipeline::moto_check(p),
        w03_batch::moto_check(p),
    ];
    let localstack: Vec<Check> = moto
        .iter()
        .map(|c| {
            let mut l = Check::new(
                c.workload.replace("moto", "LocalStack"),
                "localsqs / LocalStack msgs/s",
                c.cell.clone(),
                Unit::Ratio,
            );
            l.cell.target = R_LOCALSTACK;
            l
        })
        .collect();
    [moto.to_vec(), localstack].concat()
}
