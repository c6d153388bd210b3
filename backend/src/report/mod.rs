//! Outputs for people and scripts: text summary, JSON (SPEC §4), SVG pictures.
