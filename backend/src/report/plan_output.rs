//! The renderings of a plan (SPEC §4): the JSON document, streamed; the text summary `ttdl
//! run` prints; the HTML report. The plan is data the pipeline makes; what it looks like is
//! decided here, so the pipeline never imports the reports.

use super::text::Summary;
use crate::pipeline::{Periodic, PipelineError, PlaceChoice, Plan};
use crate::traffic::Traffic;

impl Plan {
    /// The SPEC §4 JSON document of the plan ([`super::json::document`]), whole.
    pub fn to_json(&self) -> Result<String, PipelineError> {
        let mut out = Vec::new();
        self.write_json(&mut out)?;
        String::from_utf8(out).map_err(|e| PipelineError::Internal(e.to_string()))
    }

    /// Writes the SPEC §4 JSON document into `w` as it is walked, never built whole (a plan of
    /// 100,000 messages has millions of schedule rows).
    pub fn write_json(&self, w: impl std::io::Write) -> Result<(), PipelineError> {
        self.with_report(|report| self.write_json_of(report, w))?
    }

    /// [`Plan::write_json`] from the plan's report view, made once ([`Plan::with_report`]).
    pub fn write_json_of(
        &self,
        report: &super::Plan,
        w: impl std::io::Write,
    ) -> Result<(), PipelineError> {
        super::json::document(self, report)?
            .write(w)
            .map_err(|e| PipelineError::Input(format!("cannot write the plan document: {e}")))
    }

    /// Calls `f` with the view every report takes of the plan (its bounds, period, contention and
    /// buffers, computed once: for a large plan, seconds of work), so the summary and the
    /// document can share it.
    pub fn with_report<R>(&self, f: impl FnOnce(&super::Plan) -> R) -> Result<R, PipelineError> {
        let problem = self.problem()?;
        // Report the contention the router optimized: with throughput, the pipelined windows.
        let windows = self.routed_as.as_ref().unwrap_or(&self.traffic);
        let report = super::Plan::new(&problem, &self.schedule, windows);
        Ok(f(&report))
    }

    /// The self-contained HTML report of the plan (`ttdl run --html`), titled `title`.
    pub fn to_html(&self, title: &str) -> Result<String, PipelineError> {
        let problem = self.problem()?;
        let windows = self.routed_as.as_ref().unwrap_or(&self.traffic);
        let report = super::Plan::new(&problem, &self.schedule, windows);
        let summary = self.summary()?;
        Ok(super::html::plan(title, &report, &summary))
    }

    /// The text summary `ttdl run` prints (SPEC §4), ending with the replay's line.
    pub fn summary(&self) -> Result<String, PipelineError> {
        self.with_report(|report| self.summary_of(report))
    }

    /// [`Plan::summary`] from the plan's report view ([`Plan::with_report`]).
    pub fn summary_of(&self, report: &super::Plan) -> String {
        let mut s = super::text::summary(report);
        if let Some(c) = &self.placed_by {
            // Beside the placement's cost, before what the schedule made of it.
            s.insert_after("placement cost", "placed by", describe_placement(c));
        }
        if let Some(by) = &self.ordered_by {
            s.insert_after("schedule", "order", by.clone());
        }
        if let Some(p) = &self.periodic {
            if !p.whole {
                whole_program(p, &mut s, &self.traffic, report);
            }
            s.push("periodic", describe_periodic(p));
        }
        let mut s = s.to_string();
        if self.routed_as.is_some() {
            s.push_str("throughput:       routed with every deadline at least release + period (Minsky §5.2); the contention line uses those windows\n");
        }
        if let Some(p) = self.periodic.as_ref().filter(|p| !p.whole) {
            s.push_str(&format!(
                "replay:           the sample of {} iterations and the checked run of {} delivered as planned; the sample done at cycle {}, mean latency {:.1} cycles\n",
                p.sample.count,
                p.checked,
                self.replay.completion,
                self.replay.mean_latency()
            ));
            return s;
        }
        s.push_str(&format!(
            "replay:           every message delivered as planned; program done at cycle {}, mean latency {:.1} cycles, at most {} words waiting at one switch input\n",
            self.replay.completion,
            self.replay.mean_latency(),
            self.replay.max_buffered
        ));
        s
    }
}

/// The summary's `placed by` line, e.g. `anneal (makespans, scheduled exact: identity 58,
/// anneal 42; …)`.
fn describe_placement(c: &PlaceChoice) -> String {
    let tried: Vec<String> = c
        .tried
        .iter()
        .map(|t| match t.same_as {
            Some(m) => format!("{} = {}", t.method.name(), m.name()),
            None => format!("{} {}", t.method.name(), t.makespan),
        })
        .collect();
    format!(
        "{} (makespans, scheduled exact: {}; the smallest kept; on a tie, the fewest relaxed deadlines, then the first)",
        c.chosen.name(),
        tried.join(", ")
    )
}

/// The summary's `periodic` line: what repeats, how often, and what the extrapolation was
/// checked on.
fn describe_periodic(p: &Periodic) -> String {
    let k = &p.kernel;
    let copies = k.copies(p.count).unwrap_or(0);
    let held = if p.whole {
        format!("and on the whole program of {} iterations", p.count)
    } else {
        "(the rest repeats the checked kernel)".to_string()
    };
    let loops = match &p.loops {
        Some(l) => format!(
            "; switch programs loop {} times over a {}-cycle kernel",
            l.nodes.iter().map(|n| n.count).max().unwrap_or(0),
            l.period
        ),
        None => String::new(),
    };
    format!(
        "kernel of {} iteration(s) every {} cycles, repeated {} more times; scheduled on a sample of {} iterations, verified and replayed on {} {held}{loops}",
        k.q,
        k.period,
        copies,
        p.sample.count,
        p.checked,
    )
}

/// The sample's summary turned into the whole program's: its figures in place of the
/// sample's (the schedule of the whole program is not written out: it has more than
/// [`Periodic::ROWS`] rows); lines that describe the sample say so.
fn whole_program(p: &Periodic, summary: &mut Summary, sample: &Traffic, report: &super::Plan) {
    let words: u64 = {
        let per: u64 = (0..p.sample.per)
            .map(|slot| sample.messages[p.sample.prefix + slot].size)
            .sum();
        let all: u64 = sample.messages.iter().map(|m| m.size).sum();
        all + per * (p.count - p.sample.count)
    };
    let n = p.sample.count;
    summary.set("messages", format!("{} ({words} words)", p.messages));
    summary.set(
        "critical path",
        format!(
            "{} cycles over the sample of {n} iterations",
            report.traffic.critical_path
        ),
    );
    if let Some(pr) = &report.period {
        summary.set(
            "period",
            format!(
                "{} cycles over {} iterations (lower bound {}: {})",
                p.kernel.period / p.kernel.q,
                p.count,
                pr.lower_bound,
                pr.bound_by
            ),
        );
    }
    summary.set("makespan", format!("{} cycles", p.makespan));
    let (bound, by) = &p.busiest;
    summary.set(
        "lower bound",
        format!("{bound} cycles ({by} over all {} iterations)", p.count),
    );
    for key in [
        "schedule",
        "placement cost",
        "peak link use",
        "contention",
        "linear programs",
    ] {
        if let Some(v) = summary.value(key) {
            let v = format!("{v} (the sample of {n} iterations)");
            summary.set(key, v);
        }
    }
    if p.checked_relaxed > 0 {
        summary.set(
            "deadlines",
            format!(
                "{} relaxed in the checked run of {} iterations; every kernel repetition relaxes its share",
                p.checked_relaxed, p.checked
            ),
        );
    }
}
