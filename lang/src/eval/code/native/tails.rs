//! The procedures whose calls in tail position are made directly by the machine code.
//!
//! A call in tail position gives its frame to the callee: a loop of procedures that call each
//! other so runs in constant space, and the depth of nesting is not counted. Made through Rust,
//! the caller returns the call to the loop of the procedure that called it (`run_tail`), which
//! makes it: the eight queens' `queens` handing its board to `try-rows` spent 6 % of its time
//! there, in the trip out of the code and back in.
//!
//! Made directly, the call keeps the caller's frame on the stack until the callee returns, and
//! the callee's value, error or own call in tail position is the caller's (an error gets its
//! call site from the call that made the caller, as through Rust). That is sound as long as the
//! frames kept so stay few between two calls that count a level of depth (each of which looks
//! at the stack pointer, and leaves a red zone of room below): a *leaf* — a procedure whose
//! body calls, in tail position,
//! only itself by its name and builtins — makes every call in tail position of another
//! procedure the general way, and only a procedure that is not a leaf calls a leaf directly in
//! tail position. So at most one frame is kept per level, however the names are bound when the
//! code runs (a name may come to hold another procedure than its own): the rule looks at the
//! bodies alone.

use super::super::super::ast::{Lambda, Node, NodeKind};
use super::super::super::env::Globals;

/// Whether `l` is a leaf: every call in tail position in its body by a name is of its own name
/// or of a builtin the name is fixed to.
pub(super) fn leaf(globals: &Globals, l: &Lambda) -> bool {
    l.body
        .forms
        .last()
        .is_none_or(|last| leaf_at(globals, l, last))
}

/// Whether the calls of `n`, in tail position, by a name are of `l`'s own or a builtin's.
fn leaf_at(globals: &Globals, l: &Lambda, n: &Node) -> bool {
    let last = |forms: &[Node]| forms.last().is_none_or(|f| leaf_at(globals, l, f));
    match &n.kind {
        NodeKind::Call { func, .. } => match func.kind {
            NodeKind::Global(sym) => l.name == Some(sym) || globals.fixed_builtin(sym).is_some(),
            _ => true,
        },
        NodeKind::If { then, other, .. } => {
            leaf_at(globals, l, then) && other.as_deref().is_none_or(|o| leaf_at(globals, l, o))
        }
        NodeKind::Begin(forms) | NodeKind::And(forms) | NodeKind::Or(forms) => last(forms),
        NodeKind::Cond(clauses) => clauses.iter().all(|c| last(&c.body)),
        NodeKind::Let { body, .. } => last(&body.forms),
        _ => true,
    }
}
