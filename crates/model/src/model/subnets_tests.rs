//! Subnet discovery and explicit-subnet validation tests.

use super::*;

fn s(id: &str, az: &str, ips: i32, tags: &[(&str, &str)]) -> SubnetInfo {
    SubnetInfo {
        id: id.into(),
        vpc_id: "vpc-1".into(),
        availability_zone: az.into(),
        zone_type: "availability-zone".into(),
        available_ips: ips,
        tags: tags
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        ipv6_cidrs: vec![],
        cidr_block: String::new(),
        public: None,
    }
}

fn rules(scheme: LoadBalancerScheme) -> SubnetRules<'static> {
    SubnetRules {
        cluster_name: "c1",
        scheme,
        ip_address_type: IpAddressType::Ipv4,
        cluster_tag_check: true,
        alb_single_subnet: false,
        discover_by_reachability: true,
    }
}

#[test]
fn discovery_filters_by_role_cluster_tag_and_ips_one_per_az() {
    let elb = ("kubernetes.io/role/elb", "1");
    let list = vec![
        s("subnet-b", "az1", 100, &[elb]),
        s("subnet-a", "az1", 100, &[elb]),
        s(
            "subnet-c",
            "az1",
            100,
            &[elb, ("kubernetes.io/cluster/c1", "shared")],
        ),
        s(
            "subnet-d",
            "az2",
            100,
            &[elb, ("kubernetes.io/cluster/other", "owned")],
        ),
        s("subnet-e", "az2", 7, &[elb]),
        s("subnet-f", "az2", 8, &[("kubernetes.io/role/elb", "")]),
        s(
            "subnet-g",
            "az3",
            100,
            &[("kubernetes.io/role/internal-elb", "1")],
        ),
    ];
    // az1: cluster-tagged subnet-c wins over lower ids; az2: d (other cluster) and e (7 IPs) out.
    assert_eq!(
        discover(&list, &rules(LoadBalancerScheme::InternetFacing)).unwrap(),
        vec!["subnet-c", "subnet-f"]
    );
    let err = discover(&list, &rules(LoadBalancerScheme::Internal)).unwrap_err();
    assert_eq!(err, "subnets count less than minimal required count: 1 < 2");
    let mut single = rules(LoadBalancerScheme::Internal);
    single.alb_single_subnet = true;
    assert_eq!(discover(&list, &single).unwrap(), vec!["subnet-g"]);
}

#[test]
fn discovery_error_counts_rejections() {
    let elb = ("kubernetes.io/role/elb", "1");
    let list = vec![
        s("subnet-a", "az1", 2, &[elb]),
        s(
            "subnet-b",
            "az2",
            100,
            &[elb, ("kubernetes.io/cluster/x", "owned")],
        ),
    ];
    assert_eq!(
        discover(&list, &rules(LoadBalancerScheme::InternetFacing)).unwrap_err(),
        "unable to resolve at least one subnet. Evaluated 2 subnets: 1 are tagged for other clusters, and 1 have insufficient available IP addresses"
    );
}

#[test]
fn reachability_fallback_when_no_role_tags() {
    let mut a = s("subnet-a", "az1", 50, &[]);
    a.public = Some(true);
    let mut b = s("subnet-b", "az2", 50, &[]);
    b.public = Some(true);
    let c = s("subnet-c", "az3", 50, &[]);
    assert_eq!(
        discover(&[a, b, c], &rules(LoadBalancerScheme::InternetFacing)).unwrap(),
        vec!["subnet-a", "subnet-b"]
    );
}

#[test]
fn explicit_names_or_ids_are_validated() {
    let list = vec![
        s("subnet-a", "az1", 50, &[("Name", "pub-a")]),
        s("subnet-b", "az1", 50, &[]),
        s("subnet-c", "az2", 50, &[]),
    ];
    let r = rules(LoadBalancerScheme::Internal);
    assert_eq!(
        resolve_names_or_ids(&list, &["pub-a".into(), "subnet-c".into()], &r).unwrap(),
        vec!["subnet-a", "subnet-c"]
    );
    assert_eq!(
        resolve_names_or_ids(&list, &["subnet-a".into(), "subnet-b".into()], &r).unwrap_err(),
        "multiple subnets in same Availability Zone az1: [subnet-a subnet-b]"
    );
    assert_eq!(
        resolve_names_or_ids(&list, &["subnet-zz".into()], &r).unwrap_err(),
        "subnet ID not found: subnet-zz"
    );
    assert_eq!(
        resolve_names_or_ids(&list, &["nope".into()], &r).unwrap_err(),
        "subnet with Name tag not found: nope"
    );
    let mut dual = r;
    dual.ip_address_type = IpAddressType::DualStack;
    assert_eq!(
        resolve_names_or_ids(&list, &["subnet-a".into(), "subnet-c".into()], &dual).unwrap_err(),
        "subnets [subnet-a subnet-c] do not have an associated IPv6 CIDR block, which is required for dualstack load balancers"
    );
}
