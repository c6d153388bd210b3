//! Progress of the long loops (scheduler, verifier, replay), and a way to stop them.
//!
//! A front end makes a [`Progress`] with a sink that draws (a terminal bar) and hands clones to
//! the pipeline; the loops name their stage, say how far they got and poll
//! [`Progress::is_cancelled`], returning an "interrupted" error rather than finishing. The
//! default handle draws nothing and is never cancelled, so library callers pay one branch.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Where progress goes: a stage begins with its total amount of work, then work is done.
pub trait Sink: Send + Sync {
    fn stage(&self, name: &str, total: u64);
    fn advance(&self, n: u64);
}

/// A cloneable progress handle; see the module documentation.
#[derive(Clone, Default)]
pub struct Progress {
    sink: Option<Arc<dyn Sink>>,
    cancel: Option<Arc<AtomicBool>>,
}

impl std::fmt::Debug for Progress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Progress")
            .field("drawn", &self.sink.is_some())
            .field("cancelled", &self.is_cancelled())
            .finish()
    }
}

impl Progress {
    /// Draws nothing, never cancelled.
    pub fn none() -> Self {
        Progress::default()
    }

    /// Reports to `sink`; cancelled once `cancel` is set (by a Ctrl-C handler, say).
    pub fn new(sink: Option<Arc<dyn Sink>>, cancel: Arc<AtomicBool>) -> Self {
        Progress {
            sink,
            cancel: Some(cancel),
        }
    }

    /// A new stage, `name`, of `total` units of work.
    pub fn stage(&self, name: &str, total: u64) {
        if let Some(s) = &self.sink {
            s.stage(name, total);
        }
    }

    /// `n` more units done.
    pub fn advance(&self, n: u64) {
        if let (Some(s), true) = (&self.sink, n > 0) {
            s.advance(n);
        }
    }

    /// True once the front end asked to stop.
    pub fn is_cancelled(&self) -> bool {
        self.cancel
            .as_ref()
            .is_some_and(|c| c.load(Ordering::Relaxed))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[derive(Default)]
    struct Log(Mutex<Vec<(String, u64)>>);

    impl Sink for Log {
        fn stage(&self, name: &str, total: u64) {
            self.0.lock().unwrap().push((name.into(), total));
        }
        fn advance(&self, n: u64) {
            self.0.lock().unwrap().push(("+".into(), n));
        }
    }

    #[test]
    fn reports_and_cancels() {
        let log = Arc::new(Log::default());
        let flag = Arc::new(AtomicBool::new(false));
        let p = Progress::new(Some(log.clone()), flag.clone());
        let q = p.clone();
        q.stage("replay", 10);
        q.advance(0);
        q.advance(4);
        assert!(!p.is_cancelled());
        flag.store(true, Ordering::Relaxed);
        assert!(q.is_cancelled());
        assert_eq!(
            *log.0.lock().unwrap(),
            vec![("replay".to_string(), 10), ("+".to_string(), 4)]
        );
        assert!(!Progress::none().is_cancelled());
    }
}
