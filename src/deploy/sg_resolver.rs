//! Security groups named in annotations (`security-groups` on Ingresses, and on Services when
//! they come) resolved to ids as upstream's `SecurityGroupResolver` does: entries starting with
//! `sg-` are ids looked up as such (in any VPC), every other entry is the value of a `Name` tag
//! looked up in the cluster VPC — a name matching several groups yields them all. Every entry
//! must be found, else one error lists what was asked and what was found.

use super::error::{Error, Result};
use crate::aws::{Ec2, Ec2Query, SecurityGroup};

/// Ids of the groups `names_or_ids` refer to: those given by id first (in AWS's order), then
/// those found by `Name` tag.
pub async fn resolve_security_groups(
    ec2: &dyn Ec2,
    vpc_id: &str,
    names_or_ids: &[String],
) -> Result<Vec<String>> {
    let (ids, names): (Vec<&String>, Vec<&String>) =
        names_or_ids.iter().partition(|s| s.starts_with("sg-"));
    let mut problems = Vec::new();
    let mut resolved = Vec::new();
    if !ids.is_empty() {
        match by_id(ec2, &ids).await? {
            Ok(found) => resolved.extend(found),
            Err(problem) => problems.push(problem),
        }
    }
    if !names.is_empty() {
        match by_name_tag(ec2, vpc_id, &names).await? {
            Ok(found) => resolved.extend(found),
            Err(problem) => problems.push(problem),
        }
    }
    if !problems.is_empty() {
        return Err(Error::Invalid(format!(
            "couldn't find all security groups: {}",
            problems.join(", ")
        )));
    }
    Ok(resolved.into_iter().map(|g| g.id).collect())
}

/// The outer error is an AWS failure worth retrying; the inner one a group that is not there.
type Lookup = Result<std::result::Result<Vec<SecurityGroup>, String>>;

async fn by_id(ec2: &dyn Ec2, ids: &[&String]) -> Lookup {
    let found = match ec2
        .describe_security_groups(&Ec2Query::ids(ids.iter().copied()))
        .await
    {
        Ok(found) => found,
        Err(e) if e.is_not_found() => return Ok(Err(e.to_string())),
        Err(source) => {
            return Err(Error::Aws {
                what: "resolve security groups by id".into(),
                source,
            })
        }
    };
    if found.len() != ids.len() {
        let have: Vec<&str> = found.iter().map(|g| g.id.as_str()).collect();
        return Ok(Err(format!(
            "requested ids [{}] but found [{}]",
            join(ids.iter().map(|s| s.as_str())),
            have.join(", ")
        )));
    }
    Ok(Ok(found))
}

async fn by_name_tag(ec2: &dyn Ec2, vpc_id: &str, names: &[&String]) -> Lookup {
    let names = dedup(names.iter().map(|s| s.as_str()));
    let q = Ec2Query::default()
        .filter("tag:Name", names.iter().copied())
        .filter("vpc-id", [vpc_id]);
    let found = ec2
        .describe_security_groups(&q)
        .await
        .map_err(|source| Error::Aws {
            what: "resolve security groups by Name tag".into(),
            source,
        })?;
    let have = dedup(
        found
            .iter()
            .filter_map(|g| g.tags.get("Name").map(String::as_str)),
    );
    if have.len() != names.len() {
        return Ok(Err(format!(
            "requested names [{}] but found [{}]",
            join(names.iter().copied()),
            join(have.iter().copied())
        )));
    }
    Ok(Ok(found))
}

/// First occurrences, in order.
fn dedup<'a>(items: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    let mut out: Vec<&str> = Vec::new();
    for s in items {
        if !out.contains(&s) {
            out.push(s);
        }
    }
    out
}

fn join<'a>(items: impl Iterator<Item = &'a str>) -> String {
    items.collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aws::fake::FakeAws;
    use crate::aws::{CreateSecurityGroup, Tags};

    async fn sg(aws: &FakeAws, vpc: &str, group_name: &str, name_tag: Option<&str>) -> String {
        let tags: Tags = name_tag
            .map(|n| ("Name".to_string(), n.to_string()))
            .into_iter()
            .collect();
        aws.create_security_group(&CreateSecurityGroup {
            name: group_name.into(),
            description: "d".into(),
            vpc_id: vpc.into(),
            tags,
        })
        .await
        .unwrap()
    }

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[tokio::test]
    async fn names_resolve_through_the_name_tag_not_the_group_name() {
        let aws = FakeAws::new();
        let vpc = aws.add_vpc("10.0.0.0/16", Tags::new());
        let other_vpc = aws.add_vpc("10.9.0.0/16", Tags::new());
        let web = sg(&aws, &vpc, "launch-wizard-1", Some("web")).await;
        let _decoy = sg(&aws, &vpc, "web", Some("something-else")).await;
        let _elsewhere = sg(&aws, &other_vpc, "x", Some("web")).await;
        let got = resolve_security_groups(&aws, &vpc, &strings(&["web"]))
            .await
            .unwrap();
        assert_eq!(got, vec![web]);

        // The group name alone does not count.
        let err = resolve_security_groups(&aws, &vpc, &strings(&["launch-wizard-1"]))
            .await
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "couldn't find all security groups: requested names [launch-wizard-1] but found []"
        );
    }

    #[tokio::test]
    async fn ids_are_checked_and_a_shared_name_yields_every_group() {
        let aws = FakeAws::new();
        let vpc = aws.add_vpc("10.0.0.0/16", Tags::new());
        let a = sg(&aws, &vpc, "a", Some("shared")).await;
        let b = sg(&aws, &vpc, "b", Some("shared")).await;
        let c = sg(&aws, &vpc, "c", None).await;
        let mut got = resolve_security_groups(&aws, &vpc, &strings(&["shared", &c, "shared"]))
            .await
            .unwrap();
        assert_eq!(got.remove(0), c, "ids come first");
        got.sort();
        let mut want = vec![a, b];
        want.sort();
        assert_eq!(got, want);

        let err = resolve_security_groups(&aws, &vpc, &strings(&[&c, &c]))
            .await
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            format!("couldn't find all security groups: requested ids [{c}, {c}] but found [{c}]")
        );
        let err = resolve_security_groups(&aws, &vpc, &strings(&["sg-0000dead", "nope"]))
            .await
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("couldn't find all security groups: ")
                && err.contains("sg-0000dead")
                && err.ends_with(", requested names [nope] but found []"),
            "{err}"
        );
    }
}
