//! Routing: a path for every message (Minsky §4.2.2–4.2.3).
