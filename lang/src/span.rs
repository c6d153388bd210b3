//! Source positions. Every datum read from source keeps the byte range it came from.

/// Index of a source file in a [`crate::diagnostic::SourceMap`].
pub type FileId = u32;

/// A byte range `start..end` in one source file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Span {
    pub file: FileId,
    pub start: usize,
    pub end: usize,
}

impl Span {
    pub fn new(file: FileId, start: usize, end: usize) -> Self {
        Span { file, start, end }
    }

    /// The smallest span covering both (same file assumed).
    pub fn to(self, other: Span) -> Span {
        Span {
            file: self.file,
            start: self.start.min(other.start),
            end: self.end.max(other.end),
        }
    }
}

/// A value with the span it came from (chumsky's `Spanned<T>` convention).
pub type Spanned<T> = (T, Span);
