//! `ttdl::Session`: an interpreter with the standard library loaded, and the way from a script to
//! the backend's `Traffic`.
