//! The renderings of a plan (SPEC §4): the JSON document, streamed; the text summary `ttdl
//! run` prints; the HTML report. The plan is data the pipeline makes; what it looks like is
//! decided here, so the pipeline never imports the reports.

use crate::pipeline::{PipelineError, Plan};

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
            s.insert_after("placement cost", "placed by", c.describe());
        }
        if let Some(by) = &self.ordered_by {
            s.insert_after("schedule", "order", by.clone());
        }
        if let Some(p) = &self.periodic {
            if !p.whole {
                p.whole_program(&mut s, &self.traffic, report);
            }
            s.push("periodic", p.describe());
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
