//! `diff`'s progress line: on a terminal, one line on stderr (`diff: 12/40 stacks (ingress
//! groups 12/30)`) redrawn in place after each stack and erased at the end; piped or in CI,
//! nothing at all, so captured stderr stays what it was.

use std::io::{IsTerminal, Write};

/// Returns to the line's start and erases it (ANSI `EL 2`).
const ERASE: &str = "\r\x1b[2K";

/// The progress line, or nothing when it has nowhere to go.
pub struct Progress<'a> {
    /// None: stderr is not a terminal.
    out: Option<Box<dyn Write + 'a>>,
    /// Each kind's label, stacks done and stacks planned, in the order they are computed.
    kinds: Vec<(&'static str, usize, usize)>,
    /// A line is on the screen (to erase before stdout writes, and at the end).
    shown: bool,
}

impl<'a> Progress<'a> {
    /// No progress line.
    pub fn off() -> Progress<'a> {
        Progress {
            out: None,
            kinds: Vec::new(),
            shown: false,
        }
    }

    /// The progress line drawn to `out`, whatever it is (a terminal, or a test's recorder).
    pub fn to(out: impl Write + 'a) -> Progress<'a> {
        Progress {
            out: Some(Box::new(out)),
            kinds: Vec::new(),
            shown: false,
        }
    }

    /// The progress line on stderr when stderr is a terminal; nothing otherwise.
    pub fn stderr() -> Progress<'static> {
        let stderr = std::io::stderr();
        if stderr.is_terminal() {
            Progress::to(stderr)
        } else {
            Progress::off()
        }
    }

    /// The stacks about to be computed, per kind (`ingress`, `service`...), in order; draws
    /// the first line.
    pub fn plan(&mut self, counts: &[(&'static str, usize)]) {
        self.kinds = counts
            .iter()
            .map(|&(kind, total)| (label(kind), 0, total))
            .collect();
        self.draw();
    }

    /// One stack of `kind` is done (and printed): the line counts it.
    pub fn done(&mut self, kind: &str) {
        let label = label(kind);
        if let Some(k) = self.kinds.iter_mut().find(|k| k.0 == label && k.1 < k.2) {
            k.1 += 1;
        }
        self.draw();
    }

    /// Erases the line, if one is shown (before stdout is written, and at the end).
    pub fn clear(&mut self) {
        if self.shown {
            self.shown = false;
            self.emit(ERASE.to_string());
        }
    }

    /// The line as it reads now; None when nothing is planned.
    fn line(&self) -> Option<String> {
        let done: usize = self.kinds.iter().map(|k| k.1).sum();
        let total: usize = self.kinds.iter().map(|k| k.2).sum();
        if total == 0 {
            return None;
        }
        // The kind being computed: the first with stacks left (the last one once all are done).
        let current = self
            .kinds
            .iter()
            .find(|k| k.1 < k.2)
            .or_else(|| self.kinds.iter().rev().find(|k| k.2 > 0))?;
        Some(format!(
            "diff: {done}/{total} stacks ({} {}/{})",
            current.0, current.1, current.2
        ))
    }

    fn draw(&mut self) {
        if self.out.is_none() {
            return;
        }
        if let Some(line) = self.line() {
            self.shown = true;
            self.emit(format!("{ERASE}{line}"));
        }
    }

    fn emit(&mut self, text: String) {
        let Some(out) = self.out.as_mut() else {
            return;
        };
        // The line is a courtesy: a terminal that went away must not fail the diff, so the
        // line just stops.
        if out
            .write_all(text.as_bytes())
            .and_then(|()| out.flush())
            .is_err()
        {
            self.out = None;
            self.shown = false;
        }
    }
}

impl Drop for Progress<'_> {
    /// A run that ends early (an error) leaves no half line before its `error:` message.
    fn drop(&mut self) {
        self.clear();
    }
}

/// How the line names a kind.
fn label(kind: &str) -> &'static str {
    match kind {
        "ingress" => "ingress groups",
        "service" => "services",
        "gateway" => "gateways",
        "globalaccelerator" => "globalaccelerators",
        "targetgroupbinding" => "targetgroupbindings",
        _ => "stacks",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// A writer keeping each flushed piece apart.
    #[derive(Clone, Default)]
    struct Pieces(Arc<Mutex<Vec<String>>>, Arc<Mutex<Vec<u8>>>);

    impl Write for Pieces {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.1.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            let bytes = std::mem::take(&mut *self.1.lock().unwrap());
            self.0
                .lock()
                .unwrap()
                .push(String::from_utf8(bytes).unwrap());
            Ok(())
        }
    }

    #[test]
    fn the_line_counts_every_stack_and_the_current_kind_then_is_erased() {
        let pieces = Pieces::default();
        let mut p = Progress::to(pieces.clone());
        p.plan(&[("ingress", 2), ("service", 0), ("gateway", 1)]);
        p.done("ingress");
        p.clear();
        p.done("ingress");
        p.done("gateway");
        drop(p);
        assert_eq!(
            *pieces.0.lock().unwrap(),
            vec![
                "\r\x1b[2Kdiff: 0/3 stacks (ingress groups 0/2)".to_string(),
                "\r\x1b[2Kdiff: 1/3 stacks (ingress groups 1/2)".into(),
                "\r\x1b[2K".into(),
                "\r\x1b[2Kdiff: 2/3 stacks (gateways 0/1)".into(),
                "\r\x1b[2Kdiff: 3/3 stacks (gateways 1/1)".into(),
                // Dropped: the line goes.
                "\r\x1b[2K".into(),
            ]
        );
    }

    #[test]
    fn nothing_is_drawn_when_nothing_is_planned() {
        let pieces = Pieces::default();
        let mut p = Progress::to(pieces.clone());
        p.plan(&[("ingress", 0), ("targetgroupbinding", 0)]);
        p.clear();
        drop(p);
        assert!(pieces.0.lock().unwrap().is_empty());
    }
}
