//! `diff`'s output, stack by stack: each stack is printed and flushed as soon as it is computed,
//! so a large account shows its first stacks at once instead of after minutes of silence. The
//! bytes are those of the whole [`Report`](super::Report) printed at the end: the text line for
//! line, the JSON as `serde_json`'s pretty printer writes the report. Stacks come in the order
//! they are computed, one kind after the other, each kind in its sorted order.

use std::io::{self, Write};

use serde::Serialize;

use super::progress::Progress;
use super::StackDiff;

/// What the exit status is computed from: the whole report's counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Totals {
    pub pending_writes: usize,
    pub errors: usize,
}

/// Where each computed stack goes: stdout (text or JSON), and the progress line.
pub struct Sink<'a> {
    out: &'a mut dyn Write,
    json: bool,
    progress: Progress<'a>,
    /// Stacks printed so far.
    stacks: usize,
    totals: Totals,
    /// JSON only: the report's last field, kept until the end.
    notes: Vec<String>,
}

/// The JSON report's fields after `stacks`, in the report's order.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Tail {
    pending_writes: usize,
    errors: usize,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    notes: Vec<String>,
}

impl<'a> Sink<'a> {
    /// `json`: `-o json`; otherwise text.
    pub fn new(out: &'a mut dyn Write, json: bool, progress: Progress<'a>) -> Sink<'a> {
        Sink {
            out,
            json,
            progress,
            stacks: 0,
            totals: Totals::default(),
            notes: Vec::new(),
        }
    }

    /// Before the first stack: the notes, and how many stacks of each kind follow (for the
    /// progress line), in the order they come.
    pub fn begin(
        &mut self,
        notes: Vec<String>,
        counts: &[(&'static str, usize)],
    ) -> io::Result<()> {
        if self.json {
            self.notes = notes;
            self.write(b"{\n  \"stacks\": [")?;
        } else {
            let mut text: Vec<u8> = Vec::new();
            for n in &notes {
                writeln!(text, "note: {n}")?;
            }
            self.write(&text)?;
        }
        self.progress.plan(counts);
        Ok(())
    }

    /// One computed stack: printed and flushed now.
    pub fn stack(&mut self, s: StackDiff) -> io::Result<()> {
        self.totals.pending_writes += s.writes.len();
        self.totals.errors += usize::from(s.error.is_some());
        let mut text: Vec<u8> = Vec::new();
        if self.json {
            json_element(&s, self.stacks == 0, &mut text)?;
        } else {
            text_of(&s, &mut text)?;
        }
        self.stacks += 1;
        // Off the screen while stdout is written: on a shared terminal the stack's lines would
        // otherwise start after the progress text.
        self.progress.clear();
        self.write(&text)?;
        self.progress.done(s.kind);
        Ok(())
    }

    /// After the last stack: the progress line goes, the report ends; its counts are returned.
    pub fn finish(mut self) -> io::Result<Totals> {
        self.progress.clear();
        let mut text: Vec<u8> = Vec::new();
        if self.json {
            let close: &[u8] = if self.stacks == 0 { b"]" } else { b"\n  ]" };
            text.extend_from_slice(close);
            let tail = serde_json::to_string_pretty(&Tail {
                pending_writes: self.totals.pending_writes,
                errors: self.totals.errors,
                notes: std::mem::take(&mut self.notes),
            })?;
            // `{` opened the report already: the tail's fields follow `stacks`.
            text.push(b',');
            text.extend_from_slice(&tail.as_bytes()[1..]);
            text.push(b'\n');
        } else if self.stacks == 0 {
            writeln!(text, "no stacks: no changes")?;
        }
        self.write(&text)?;
        Ok(self.totals)
    }

    /// As `plan`'s: a reader that stops early (`diff | head`) ends the output quietly; the run
    /// goes on, as the exit status is still the whole report's.
    fn write(&mut self, bytes: &[u8]) -> io::Result<()> {
        crate::plan::write_report(&mut *self.out, bytes)
    }
}

/// One stack as an element of the report's `stacks` array, as the pretty printer nests it:
/// after `[` or the previous element, each line two levels in.
fn json_element(s: &StackDiff, first: bool, out: &mut Vec<u8>) -> io::Result<()> {
    // Strings are escaped in JSON, so every line break is the printer's own.
    let pretty = serde_json::to_string_pretty(s)?;
    let separator: &[u8] = if first { b"\n" } else { b",\n" };
    out.extend_from_slice(separator);
    for (i, line) in pretty.lines().enumerate() {
        if i > 0 {
            out.push(b'\n');
        }
        write!(out, "    {line}")?;
    }
    Ok(())
}

/// One stack as text: its name and count, each write with its changes, its error.
fn text_of(s: &StackDiff, out: &mut Vec<u8>) -> io::Result<()> {
    match (s.writes.len(), &s.error) {
        (0, None) => writeln!(out, "{} {}: no changes", s.kind, s.stack)?,
        (n, _) => writeln!(out, "{} {}: {n} write(s)", s.kind, s.stack)?,
    }
    for w in &s.writes {
        writeln!(out, "  {} {}", w.call, w.resource)?;
        for c in &w.changes {
            let v = |x: &Option<String>| x.clone().unwrap_or_else(|| "(none)".into());
            writeln!(out, "      {}: {} → {}", c.field, v(&c.before), v(&c.after))?;
        }
    }
    if let Some(e) = &s.error {
        writeln!(out, "  error: {e}")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::{Change, Report, Write as DiffWrite};
    use super::*;
    use std::sync::{Arc, Mutex};

    fn stack(
        kind: &'static str,
        id: &str,
        writes: Vec<DiffWrite>,
        error: Option<&str>,
    ) -> StackDiff {
        StackDiff {
            kind,
            stack: id.into(),
            writes,
            error: error.map(Into::into),
        }
    }

    fn write() -> DiffWrite {
        DiffWrite {
            call: "elasticloadbalancing:ModifyTargetGroup".into(),
            resource: "arn:tg".into(),
            changes: vec![Change {
                field: "healthCheckIntervalSeconds".into(),
                before: Some("42".into()),
                after: Some("15".into()),
            }],
        }
    }

    /// The report streamed through a [`Sink`], as `diff` prints it.
    fn streamed(notes: &[&str], stacks: &[StackDiff], json: bool) -> (String, Totals) {
        let mut out: Vec<u8> = Vec::new();
        let mut sink = Sink::new(&mut out, json, Progress::off());
        let notes = notes.iter().map(|n| n.to_string()).collect();
        sink.begin(notes, &[("ingress", stacks.len())]).unwrap();
        for s in stacks {
            sink.stack(s.clone()).unwrap();
        }
        let totals = sink.finish().unwrap();
        (String::from_utf8(out).unwrap(), totals)
    }

    fn reports() -> Vec<(Vec<&'static str>, Vec<StackDiff>)> {
        let with_writes = stack("ingress", "web/app", vec![write(), write()], None);
        let error = Some("Failed deploy model due to \"boom\"\nnext");
        let failed = stack("service", "web/nlb", vec![write()], error);
        vec![
            (vec![], vec![]),
            (vec!["a note", "another \"quoted\" note"], vec![]),
            (vec![], vec![stack("ingress", "shop", vec![], None)]),
            (
                vec!["objects read from manifests"],
                vec![stack("ingress", "shop", vec![], None), with_writes, failed],
            ),
        ]
    }

    #[test]
    fn streamed_json_is_byte_for_byte_the_whole_reports_pretty_json() {
        for (notes, stacks) in reports() {
            let report = Report {
                pending_writes: stacks.iter().map(|s| s.writes.len()).sum(),
                errors: stacks.iter().filter(|s| s.error.is_some()).count(),
                stacks: stacks.clone(),
                notes: notes.iter().map(|n| n.to_string()).collect(),
            };
            let mut whole = serde_json::to_vec_pretty(&report).unwrap();
            whole.push(b'\n');
            let (text, totals) = streamed(&notes, &stacks, true);
            assert_eq!(text, String::from_utf8(whole).unwrap());
            assert_eq!(
                totals,
                Totals {
                    pending_writes: report.pending_writes,
                    errors: report.errors
                }
            );
        }
    }

    #[test]
    fn text_shows_notes_then_each_stack_and_says_so_when_there_is_none() {
        let (_, stacks) = reports().pop().unwrap();
        let (text, totals) = streamed(&["from manifests"], &stacks, false);
        assert_eq!(
            text,
            "note: from manifests\n\
             ingress shop: no changes\n\
             ingress web/app: 2 write(s)\n\
             \x20 elasticloadbalancing:ModifyTargetGroup arn:tg\n\
             \x20     healthCheckIntervalSeconds: 42 → 15\n\
             \x20 elasticloadbalancing:ModifyTargetGroup arn:tg\n\
             \x20     healthCheckIntervalSeconds: 42 → 15\n\
             service web/nlb: 1 write(s)\n\
             \x20 elasticloadbalancing:ModifyTargetGroup arn:tg\n\
             \x20     healthCheckIntervalSeconds: 42 → 15\n\
             \x20 error: Failed deploy model due to \"boom\"\nnext\n"
        );
        assert_eq!(
            totals,
            Totals {
                pending_writes: 3,
                errors: 1
            }
        );
        assert_eq!(streamed(&[], &[], false).0, "no stacks: no changes\n");
    }

    /// What a writer was handed, and what had been flushed at each point.
    #[derive(Clone, Default)]
    struct Recorder {
        /// ("out" or "progress", the text flushed).
        flushed: Arc<Mutex<Vec<(&'static str, String)>>>,
        pending: Arc<Mutex<Vec<u8>>>,
        name: &'static str,
    }

    impl std::io::Write for Recorder {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.pending.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            let bytes = std::mem::take(&mut *self.pending.lock().unwrap());
            let text = String::from_utf8(bytes).unwrap();
            self.flushed.lock().unwrap().push((self.name, text));
            Ok(())
        }
    }

    #[test]
    fn each_stack_is_flushed_when_handed_over_with_the_progress_line_off_the_screen_meanwhile() {
        let log = Arc::new(Mutex::new(Vec::new()));
        let mut out = Recorder {
            flushed: log.clone(),
            name: "out",
            ..Default::default()
        };
        let err = Recorder {
            flushed: log.clone(),
            name: "progress",
            ..Default::default()
        };
        let mut sink = Sink::new(&mut out, false, Progress::to(err));
        sink.begin(vec![], &[("ingress", 2)]).unwrap();
        sink.stack(stack("ingress", "a", vec![], None)).unwrap();
        // Flushed before the next stack is even handed over (computed).
        let so_far = log.lock().unwrap().clone();
        assert_eq!(
            so_far.last().cloned(),
            Some((
                "progress",
                "\r\x1b[2Kdiff: 1/2 stacks (ingress groups 1/2)".to_string()
            ))
        );
        assert!(
            so_far.contains(&("out", "ingress a: no changes\n".to_string())),
            "{so_far:?}"
        );
        sink.stack(stack("ingress", "b", vec![write()], None))
            .unwrap();
        let totals = sink.finish().unwrap();
        assert_eq!(totals.pending_writes, 1);
        let flushed: Vec<(&str, String)> = log
            .lock()
            .unwrap()
            .iter()
            .filter(|(_, t)| !t.is_empty())
            .cloned()
            .collect();
        let erase = "\r\x1b[2K".to_string();
        let b_text = "ingress b: 1 write(s)\n\
                      \x20 elasticloadbalancing:ModifyTargetGroup arn:tg\n\
                      \x20     healthCheckIntervalSeconds: 42 → 15\n";
        assert_eq!(
            flushed,
            vec![
                (
                    "progress",
                    "\r\x1b[2Kdiff: 0/2 stacks (ingress groups 0/2)".to_string()
                ),
                ("progress", erase.clone()),
                ("out", "ingress a: no changes\n".into()),
                (
                    "progress",
                    "\r\x1b[2Kdiff: 1/2 stacks (ingress groups 1/2)".into()
                ),
                ("progress", erase.clone()),
                ("out", b_text.into()),
                (
                    "progress",
                    "\r\x1b[2Kdiff: 2/2 stacks (ingress groups 2/2)".into()
                ),
                ("progress", erase),
            ]
        );
    }
}
