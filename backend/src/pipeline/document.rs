//! A plan document (`ttdl run --format json`) read back as its program and settings, to plan it
//! again.

use super::{PipelineError, Settings};
use crate::topology::{Network, NetworkSpec};
use crate::traffic::Traffic;

/// A document `ttdl run --format json` wrote, read back: its program placed where the plan placed
/// it (each task mapped to its node's coordinates), and the plan's settings as the base the
/// command line overrides. `Ok(None)` when `text` is not a plan document (a bare Traffic IR).
pub fn read_plan_document(text: &str) -> Result<Option<(Traffic, Settings)>, PipelineError> {
    let bad = |e: String| PipelineError::Input(format!("not a plan document: {e}"));
    let doc: serde_json::Value = serde_json::from_str(text).map_err(|e| bad(e.to_string()))?;
    let (Some(program), Some(config)) = (doc.get("program"), doc.get("config")) else {
        return Ok(None);
    };
    let mut traffic: Traffic =
        serde_json::from_value(program.clone()).map_err(|e| bad(format!("program: {e}")))?;
    let config = config
        .as_object()
        .ok_or_else(|| bad("config is not an object".into()))?;
    // Every setting the plan was made with; what else `config` records (how the placement was
    // chosen) is not a setting.
    let mut settings =
        Settings::from_json(config, false).map_err(|e| bad(format!("config: {e}")))?;
    let network: NetworkSpec = settings
        .word("network")
        .ok_or_else(|| bad("config.network is missing".into()))?
        .parse()
        .map_err(|e: crate::topology::TopologyError| bad(format!("config.network: {e}")))?;
    let net = Network::build(&network).map_err(|e| bad(e.to_string()))?;
    let tasks = doc
        .get("tasks")
        .and_then(|t| t.as_array())
        .ok_or_else(|| bad("tasks are missing".into()))?;
    if tasks.len() != traffic.tasks.len() {
        return Err(bad(format!(
            "{} tasks placed, {} in the program",
            tasks.len(),
            traffic.tasks.len()
        )));
    }
    for (task, t) in traffic.tasks.iter_mut().zip(tasks) {
        let node = t
            .get("node")
            .and_then(|n| n.as_u64())
            .filter(|&n| (n as usize) < net.nodes())
            .ok_or_else(|| bad(format!("task {} has no node of {network}", task.id)))?;
        task.mapped = net.coords.get(node as usize).cloned();
    }
    // A document written before the buffer setting existed was planned with unbounded buffers.
    if !config.contains_key("buffer") {
        settings
            .set("buffer", "unbounded")
            .map_err(|e| bad(e.to_string()))?;
    }
    // The document's placement is kept: each task is mapped to its node.
    settings
        .set("place", "mapping")
        .map_err(|e| bad(e.to_string()))?;
    Ok(Some((traffic, settings)))
}
