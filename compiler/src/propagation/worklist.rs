//! The worklist of MLIR's greedy pattern driver, which Shardy's propagation
//! runs on: a LIFO stack with set semantics. An op pushed while already
//! waiting keeps its place; the last op notified is processed next.

use crate::ir::OpId;

#[derive(Debug, Clone, Default)]
pub struct Worklist {
    stack: Vec<OpId>,
    queued: Vec<bool>,
}

impl Worklist {
    pub fn new(num_ops: usize) -> Worklist {
        Worklist {
            stack: Vec::new(),
            queued: vec![false; num_ops],
        }
    }

    /// Queue every op of `body` so that they are popped in program order.
    pub fn fill(&mut self, body: &[OpId]) {
        for &op in body.iter().rev() {
            self.push(op);
        }
    }

    /// Queue `op` unless it is already waiting.
    pub fn push(&mut self, op: OpId) {
        if let Some(q) = self.queued.get_mut(op.index()) {
            if !*q {
                *q = true;
                self.stack.push(op);
            }
        }
    }

    pub fn pop(&mut self) -> Option<OpId> {
        let op = self.stack.pop()?;
        if let Some(q) = self.queued.get_mut(op.index()) {
            *q = false;
        }
        Some(op)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lifo_with_set_semantics() {
        let mut w = Worklist::new(4);
        w.fill(&[OpId(0), OpId(1), OpId(2)]);
        assert_eq!(w.pop(), Some(OpId(0)));
        w.push(OpId(2)); // already waiting: keeps its place
        w.push(OpId(3));
        assert_eq!(w.pop(), Some(OpId(3)));
        assert_eq!(w.pop(), Some(OpId(1)));
        assert_eq!(w.pop(), Some(OpId(2)));
        assert_eq!(w.pop(), None);
    }
}
