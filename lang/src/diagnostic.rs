//! Diagnostics: what went wrong, where, and what to do — rendered like `rustc` with ariadne.

use crate::span::{FileId, Span};

/// A labelled span inside a diagnostic. The first label of a diagnostic is the primary one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Label {
    pub span: Span,
    pub message: String,
}

/// One error (TTDL has no warnings that stop a run).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// Short stable code, e.g. `syntax`, `unbound`, `arity`, `type`, `unmatched-read`, `deadlock`.
    pub code: String,
    pub message: String,
    pub labels: Vec<Label>,
    pub notes: Vec<String>,
    /// What the user can do about it.
    pub help: Option<String>,
}

impl Diagnostic {
    pub fn new(code: &str, message: impl Into<String>) -> Self {
        Diagnostic {
            code: code.to_string(),
            message: message.into(),
            labels: Vec::new(),
            notes: Vec::new(),
            help: None,
        }
    }

    pub fn with_label(mut self, span: Span, message: impl Into<String>) -> Self {
        self.labels.push(Label {
            span,
            message: message.into(),
        });
        self
    }

    pub fn with_note(mut self, note: impl Into<String>) -> Self {
        self.notes.push(note.into());
        self
    }

    pub fn with_help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }
}

/// The source files a session has read, so spans can be shown.
#[derive(Clone, Debug, Default)]
pub struct SourceMap {
    pub files: Vec<SourceFile>,
}

#[derive(Clone, Debug)]
pub struct SourceFile {
    pub name: String,
    pub text: String,
}

impl SourceMap {
    pub fn add(&mut self, name: impl Into<String>, text: impl Into<String>) -> FileId {
        self.files.push(SourceFile {
            name: name.into(),
            text: text.into(),
        });
        (self.files.len() - 1) as FileId
    }

    pub fn get(&self, id: FileId) -> Option<&SourceFile> {
        self.files.get(id as usize)
    }
}
