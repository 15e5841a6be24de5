//! Listener mutual authentication (`mutual-authentication`): trust stores named in the model
//! are resolved to ARNs with one DescribeTrustStores before any write (upstream's messages when
//! one is missing); the listener's setting is compared after filling AWS's defaults, and a
//! listener the model says nothing about keeps what it has (upstream turns mTLS off only when
//! asked with `mode: off`), unless gate `EnhancedDefaultBehavior` is on: then it is turned off
//! (see `listener::modify_request`).

use std::collections::{BTreeMap, BTreeSet};

use super::error::{Context, Error, Result};
use super::Deployer;
use crate::model::{MutualAuthentication, Stack};

impl Deployer {
    /// ARNs of the trust stores the stack names (values not starting with `arn:`).
    pub(crate) async fn resolve_trust_stores(
        &self,
        stack: &Stack,
    ) -> Result<BTreeMap<String, String>> {
        let names: BTreeSet<String> = stack
            .listeners
            .iter()
            .filter_map(|l| l.mutual_authentication.as_ref()?.trust_store.clone())
            .filter(|t| !t.is_empty() && !t.starts_with("arn:"))
            .collect();
        if names.is_empty() {
            return Ok(BTreeMap::new());
        }
        let names: Vec<String> = names.into_iter().collect();
        let found = self
            .elbv2
            .describe_trust_stores(&names)
            .await
            .ctx(|| "describe trust stores".into())?;
        if found.is_empty() {
            return Err(Error::Invalid(format!(
                "couldn't find TrustStores with names [{}]",
                names.join(" ")
            )));
        }
        let arns: BTreeMap<String, String> = found.into_iter().map(|t| (t.name, t.arn)).collect();
        if let Some(missing) = names.iter().find(|n| !arns.contains_key(*n)) {
            return Err(Error::Invalid(format!(
                "couldn't find TrustStore with name {missing}"
            )));
        }
        Ok(arns)
    }
}

/// The model's setting as ELBv2 takes it: a trust store name replaced by its ARN, an empty
/// one (the model carries it for modes that take none) left out.
pub fn desired(
    m: &MutualAuthentication,
    arns: &BTreeMap<String, String>,
) -> Result<MutualAuthentication> {
    let trust_store =
        match m.trust_store.as_ref().filter(|t| !t.is_empty()) {
            Some(t) if t.starts_with("arn:") => Some(t.clone()),
            Some(name) => Some(arns.get(name).cloned().ok_or_else(|| {
                Error::Invalid(format!("couldn't find TrustStore with name {name}"))
            })?),
            None => None,
        };
    Ok(MutualAuthentication {
        trust_store,
        ..m.clone()
    })
}

/// With AWS's defaults filled in: `verify` ignores no expiry and advertises no CA names unless
/// told; the other modes carry nothing else.
fn norm(m: Option<&MutualAuthentication>) -> MutualAuthentication {
    let Some(m) = m else {
        return off();
    };
    let mode = m.mode.to_ascii_lowercase();
    if mode != "verify" {
        return MutualAuthentication {
            mode,
            ..Default::default()
        };
    }
    MutualAuthentication {
        mode,
        trust_store: m.trust_store.clone(),
        ignore_client_certificate_expiry: Some(m.ignore_client_certificate_expiry.unwrap_or(false)),
        advertise_trust_store_ca_names: Some(
            m.advertise_trust_store_ca_names
                .clone()
                .unwrap_or_else(|| "off".into()),
        ),
    }
}

/// AWS's default: mutual authentication off.
pub fn off() -> MutualAuthentication {
    MutualAuthentication {
        mode: "off".into(),
        ..Default::default()
    }
}

/// Whether the listener has mutual authentication on (a mode other than `off`; no mode is
/// off, as upstream reads it).
pub fn is_on(have: Option<&MutualAuthentication>) -> bool {
    !matches!(norm(have).mode.as_str(), "off" | "")
}

/// True when the listener must be modified for mTLS; nothing wanted means leave it alone.
pub fn differs(want: Option<&MutualAuthentication>, have: Option<&MutualAuthentication>) -> bool {
    want.is_some_and(|w| norm(Some(w)) != norm(have))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ma(mode: &str, ts: Option<&str>) -> MutualAuthentication {
        MutualAuthentication {
            mode: mode.into(),
            trust_store: ts.map(String::from),
            ..Default::default()
        }
    }

    #[test]
    fn aws_defaults_are_not_changes_and_absent_means_leave_alone() {
        let echoed = MutualAuthentication {
            ignore_client_certificate_expiry: Some(false),
            advertise_trust_store_ca_names: Some("off".into()),
            ..ma("verify", Some("arn:ts"))
        };
        assert!(!differs(Some(&ma("verify", Some("arn:ts"))), Some(&echoed)));
        assert!(differs(
            Some(&ma("verify", Some("arn:other"))),
            Some(&echoed)
        ));
        assert!(!differs(Some(&ma("off", None)), None));
        assert!(!differs(None, Some(&echoed)), "absent: left as it is");
        assert!(differs(
            Some(&ma("passthrough", None)),
            Some(&ma("off", None))
        ));
    }

    #[test]
    fn names_become_arns_and_a_missing_one_is_upstreams_error() {
        let arns = BTreeMap::from([("ca".to_string(), "arn:ts/ca".to_string())]);
        let m = |ts: &str| MutualAuthentication {
            mode: "verify".into(),
            trust_store: Some(ts.into()),
            ignore_client_certificate_expiry: Some(true),
            advertise_trust_store_ca_names: None,
        };
        let resolved = desired(&m("ca"), &arns).unwrap();
        assert_eq!(resolved.trust_store.as_deref(), Some("arn:ts/ca"));
        assert_eq!(resolved.ignore_client_certificate_expiry, Some(true));
        assert_eq!(
            desired(&m("arn:x"), &arns).unwrap().trust_store.as_deref(),
            Some("arn:x")
        );
        assert_eq!(desired(&m(""), &arns).unwrap().trust_store, None);
        assert_eq!(
            desired(&m("nope"), &arns).unwrap_err().to_string(),
            "couldn't find TrustStore with name nope"
        );
    }
}
