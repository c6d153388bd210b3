//! Placement: which node each task runs on (Minsky §4.2.1).
