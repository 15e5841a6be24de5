//! Amazon Route 53, as far as the ACM certificates the controller creates need it (upstream's
//! `pkg/aws/services/route53.go`): the hosted zones of the account, and the DNS validation
//! records written into them. A narrow trait like ACM's (SDK implementation and in-memory fake).

use async_trait::async_trait;

use super::error::Result;

/// One hosted zone of the account.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct HostedZone {
    /// As ListHostedZones gives it (`/hostedzone/Z…`); ChangeResourceRecordSets takes it so.
    pub id: String,
    /// Fully qualified, with the trailing dot (`example.com.`).
    pub name: String,
}

/// What a change does to a record set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum RecordAction {
    Create,
    Delete,
}

impl RecordAction {
    /// Route 53's name (`CREATE`, `DELETE`).
    pub fn as_str(self) -> &'static str {
        match self {
            RecordAction::Create => "CREATE",
            RecordAction::Delete => "DELETE",
        }
    }
}

/// One change of a single-value record set (a validation CNAME); a DELETE must repeat the
/// record as it was created (name, type, TTL and value).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordChange {
    pub action: RecordAction,
    pub name: String,
    /// `CNAME`.
    pub record_type: String,
    pub ttl: i64,
    pub value: String,
}

/// Amazon Route 53 (the calls certificate validation needs).
#[async_trait]
pub trait Route53: Send + Sync {
    /// Every hosted zone of the account (all pages).
    async fn list_hosted_zones(&self) -> Result<Vec<HostedZone>>;
    /// Applies `changes` to the zone `zone_id` as one batch (all or none).
    async fn change_resource_record_sets(
        &self,
        zone_id: &str,
        changes: &[RecordChange],
    ) -> Result<()>;
}

/// Upstream's hosted-zone lookup: the zone whose name is the longest label-wise suffix of
/// `domain` (`*.app.sub.example.com` is in `sub.example.com.` before `example.com.`); the first
/// listed wins a tie. `None`: no zone of the account can hold its validation record.
pub fn zone_for<'z>(zones: &'z [HostedZone], domain: &str) -> Option<&'z HostedZone> {
    let labels: Vec<&str> = domain.split('.').collect();
    let mut best: Option<(&HostedZone, usize)> = None;
    for z in zones {
        let zone_labels: Vec<&str> = z.name.trim_end_matches('.').split('.').collect();
        if zone_labels.len() > labels.len() {
            continue;
        }
        let tail = &labels[labels.len() - zone_labels.len()..];
        let longer = best.is_none_or(|(_, n)| zone_labels.len() > n);
        if tail == zone_labels.as_slice() && longer {
            best = Some((z, zone_labels.len()));
        }
    }
    best.map(|(z, _)| z)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn zone(id: &str, name: &str) -> HostedZone {
        HostedZone {
            id: id.into(),
            name: name.into(),
        }
    }

    /// Upstream's `TestGetHostedZoneID` table (3 cases), and a domain no zone holds.
    #[test]
    fn the_longest_suffix_zone_is_chosen() {
        let cases: [(&str, Vec<HostedZone>, &str); 3] = [
            (
                "example.com",
                vec![zone("Z_EXAMPLE", "example.com.")],
                "Z_EXAMPLE",
            ),
            (
                "*.app.sub.example.com",
                vec![zone("Z_SUB", "sub.example.com.")],
                "Z_SUB",
            ),
            (
                "*.app.sub.example.com",
                vec![
                    zone("Z_PARENT", "example.com."),
                    zone("Z_SUB", "sub.example.com."),
                ],
                "Z_SUB",
            ),
        ];
        for (domain, zones, want) in cases {
            assert_eq!(
                zone_for(&zones, domain).map(|z| z.id.as_str()),
                Some(want),
                "{domain}"
            );
        }
        let zones = [zone("Z_EXAMPLE", "example.com.")];
        assert_eq!(zone_for(&zones, "example.org"), None);
        // Label-wise, not by string suffix.
        assert_eq!(zone_for(&zones, "badexample.com"), None);
        assert_eq!(zone_for(&zones, "com"), None);
    }
}
