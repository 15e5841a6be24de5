//! config/iam/iam_policy_readonly.json, the policy of `diff` and `--dry-run`: only reads, each one
//! also granted by the full policy, and covering every read our SDK clients can make (so the
//! reads of the deployer and the TargetGroupBinding reconciler never hit AccessDenied).

use super::*;
use serde_json::Value as Json;
use std::collections::BTreeSet;

fn allowed(file: &str) -> BTreeSet<String> {
    let text = std::fs::read_to_string(repo().join(file)).expect(file);
    let policy: Json = serde_json::from_str(&text).expect("policy is JSON");
    let mut out = BTreeSet::new();
    for st in policy["Statement"].as_array().expect("statements") {
        if st["Effect"] != "Allow" {
            continue;
        }
        match &st["Action"] {
            Json::String(a) => {
                out.insert(a.clone());
            }
            Json::Array(a) => out.extend(a.iter().filter_map(|x| x.as_str().map(str::to_owned))),
            other => panic!("{file}: Action {other}"),
        }
    }
    out
}

/// The read-only policy: what `diff` needs from AWS, nothing that changes anything.
pub fn readonly_actions() -> BTreeSet<String> {
    allowed("config/iam/iam_policy_readonly.json")
}

fn is_read(action: &str) -> bool {
    let op = action.split(':').nth(1).unwrap_or("");
    ["Describe", "Get", "List"]
        .iter()
        .any(|p| op.starts_with(p))
}

#[test]
fn readonly_policy_grants_reads_only_and_every_read_of_the_full_policy() {
    let ro = readonly_actions();
    let full = allowed("config/iam/iam_policy.json");
    for a in &ro {
        assert!(is_read(a), "{a} in the read-only policy is not a read");
        assert!(full.contains(a), "{a} is not in iam_policy.json");
    }
    let reads: BTreeSet<String> = full.iter().filter(|a| is_read(a)).cloned().collect();
    assert_eq!(
        ro, reads,
        "the read-only policy must hold exactly the reads of the full policy"
    );
    assert!(ro.len() > 10, "only {} reads", ro.len());
}
