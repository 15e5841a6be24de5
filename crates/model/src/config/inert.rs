//! Flags this build accepts but does not act on, in one table ([`INERT_FLAGS`]): `--help` marks
//! them from it ([`mark_help`]), and at start a value other than the default is refused or
//! warned about from it ([`check`]), so neither can drift from the other.
//!
//! Such a flag parses into an [`Inert`], whose text only this module can read: no layer can act
//! on it by mistake, and a flag some layer reads cannot be [`Inert`] (a test checks that the
//! table and the parsed types agree, flag for flag).

// No import of the flags (`crate::args`): they import this table to mark `--help`, so the
// parsed values come in from `config` (`inert_values` there), and this module stays below them.
use super::ConfigError;

/// The value of a flag nothing acts on. Its text is private to this module, where [`check`]
/// judges it against the table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Inert(String);

impl Inert {
    /// clap's value parser: any text is taken; [`check`] validates it, naming the flag.
    pub fn parse(raw: &str) -> Result<Inert, String> {
        Ok(Inert(raw.to_string()))
    }
}

/// What a value other than the default does at start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WhenSet {
    /// The process refuses to start: the user asks for something this build cannot do, and
    /// running without it would be accepting and ignoring it.
    Refuse,
    /// A warning is logged at start (upstream ignores the flag too, or what it tunes is not in
    /// this build and cannot be turned on).
    Warn,
}

/// One flag this build does not act on.
#[derive(Clone, Copy)]
pub struct InertFlag {
    /// The long name, without `--`.
    pub long: &'static str,
    /// The default, as clap has it (a test keeps the two equal).
    pub default: &'static str,
    /// Upstream's meaning of the flag and why this build does not act on it.
    pub why: &'static str,
    pub when_set: WhenSet,
    /// The value's syntax, checked at start as upstream's flag parsing does (`Err`: the reason).
    pub syntax: fn(&str) -> Result<(), String>,
}

fn any_text(_: &str) -> Result<(), String> {
    Ok(())
}

/// Every flag this build accepts without acting on it. Nothing else is marked in `--help`.
pub const INERT_FLAGS: &[InertFlag] = &[InertFlag {
    long: "aws-vpc-tag-key",
    default: "Name",
    why: "deprecated upstream, where it no longer has an effect either: every tag of \
              --aws-vpc-tags is used for the VPC lookup",
    when_set: WhenSet::Warn,
    syntax: any_text,
}];

/// The start of the mark `--help` appends to an inert flag's help.
pub const MARK: &str = "[not acted on by this build:";

/// The whole mark of `flag`.
pub fn mark(flag: &InertFlag) -> String {
    let set = if flag.default.is_empty() {
        "a value".to_string()
    } else {
        format!("a value other than {:?}", flag.default)
    };
    let consequence = match flag.when_set {
        WhenSet::Refuse => format!("{set} is refused at start"),
        WhenSet::Warn => format!("{set} is logged as a warning at start"),
    };
    format!("{MARK} {}; {consequence}]", flag.why)
}

/// The table's entry of `long`, if it is inert.
pub fn inert_flag(long: &str) -> Option<&'static InertFlag> {
    INERT_FLAGS.iter().find(|f| f.long == long)
}

/// For clap (`Command::mut_args`): appends the mark to the help of each flag of the table.
pub fn mark_help(arg: clap::Arg) -> clap::Arg {
    let Some(flag) = arg.get_long().and_then(inert_flag) else {
        return arg;
    };
    let suffix = mark(flag);
    let with = |help: Option<&clap::builder::StyledStr>| -> Option<String> {
        let text = help?.to_string();
        // Idempotent: a command built twice from the same args is marked once.
        Some(if text.contains(MARK) {
            text
        } else {
            format!("{} {suffix}", text.trim_end())
        })
    };
    let help = with(arg.get_help()).unwrap_or_else(|| suffix.clone());
    let long_help = with(arg.get_long_help());
    let arg = arg.help(help);
    match long_help {
        Some(long) => arg.long_help(long),
        None => arg,
    }
}

/// A flag set to a value this build warns about (logged by the binary once logging is set up).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InertWarning {
    pub flag: &'static str,
    pub value: String,
    pub message: String,
}

/// Judges the inert flags, each given as its long name and parsed value: a malformed value or
/// one the table refuses fails the start; the others set to something but their default are
/// returned, for the binary to warn about.
pub(super) fn check(values: &[(&'static str, &Inert)]) -> Result<Vec<InertWarning>, ConfigError> {
    let mut warnings = Vec::new();
    for (long, Inert(raw)) in values.iter().copied() {
        let Some(flag) = inert_flag(long) else {
            // A value without an entry would be neither marked nor judged.
            unreachable!("--{long} is not in INERT_FLAGS")
        };
        (flag.syntax)(raw).map_err(|reason| super::invalid(flag.long, raw, reason))?;
        if raw.trim() == flag.default {
            continue;
        }
        match flag.when_set {
            WhenSet::Refuse => {
                return Err(ConfigError::Refused {
                    flag: flag.long,
                    value: raw.clone(),
                    why: flag.why,
                })
            }
            WhenSet::Warn => warnings.push(InertWarning {
                flag: flag.long,
                value: raw.clone(),
                message: format!(
                    "--{} is not acted on by this build: {}",
                    flag.long, flag.why
                ),
            }),
        }
    }
    Ok(warnings)
}
