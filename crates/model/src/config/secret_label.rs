//! `--required-secrets-label`: the one label (`key=value`) a Secret must carry for the controller
//! to read it. Upstream watches Secrets with it as a label selector and treats a Secret read
//! without it as unusable; every reader of Secrets here asks [`RequiredLabel::admits`].

use std::collections::BTreeMap;

use super::{invalid, ConfigError};

/// A required label, `key=value`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RequiredLabel {
    pub key: String,
    pub value: String,
}

impl RequiredLabel {
    /// The flag's value: empty for none; otherwise both sides of `=` non-empty, with upstream's
    /// message.
    pub fn from_flag(raw: &str) -> Result<Option<RequiredLabel>, ConfigError> {
        if raw.is_empty() {
            return Ok(None);
        }
        match raw.split_once('=') {
            Some((key, value)) if !key.is_empty() && !value.is_empty() => Ok(Some(RequiredLabel {
                key: key.to_string(),
                value: value.to_string(),
            })),
            _ => Err(invalid(
                "required-secrets-label",
                raw,
                "must be in key=value format",
            )),
        }
    }

    /// The label selector a watch or list narrows itself with.
    pub fn selector(&self) -> String {
        format!("{}={}", self.key, self.value)
    }

    /// Whether an object with these labels carries the required one.
    pub fn admits(&self, labels: Option<&BTreeMap<String, String>>) -> bool {
        labels.and_then(|l| l.get(&self.key)) == Some(&self.value)
    }
}

/// Whether a Secret with `labels` may be read under `required` (none: every Secret may).
pub fn admits(required: Option<&RequiredLabel>, labels: Option<&BTreeMap<String, String>>) -> bool {
    required.is_none_or(|r| r.admits(labels))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flag_takes_key_equals_value_with_upstreams_message() {
        assert_eq!(RequiredLabel::from_flag("").unwrap(), None);
        let l = RequiredLabel::from_flag("albc.example/oidc=yes")
            .unwrap()
            .unwrap();
        assert_eq!(
            (l.key.as_str(), l.value.as_str()),
            ("albc.example/oidc", "yes")
        );
        assert_eq!(l.selector(), "albc.example/oidc=yes");
        // A value may itself hold '=': only the first one splits.
        assert_eq!(
            RequiredLabel::from_flag("k=a=b").unwrap().unwrap().value,
            "a=b"
        );
        for bad in ["nokey", "=v", "k="] {
            assert_eq!(
                RequiredLabel::from_flag(bad).unwrap_err().to_string(),
                format!("invalid value {bad:?} for --required-secrets-label: must be in key=value format")
            );
        }
    }

    #[test]
    fn only_the_exact_label_admits() {
        let l = RequiredLabel::from_flag("k=v").unwrap();
        let labels = |pairs: &[(&str, &str)]| -> BTreeMap<String, String> {
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        assert!(admits(
            l.as_ref(),
            Some(&labels(&[("k", "v"), ("other", "x")]))
        ));
        assert!(!admits(l.as_ref(), Some(&labels(&[("k", "w")]))));
        assert!(!admits(l.as_ref(), Some(&labels(&[("other", "v")]))));
        assert!(!admits(l.as_ref(), None));
        // Without the flag every Secret is read.
        assert!(admits(None, None));
    }
}
