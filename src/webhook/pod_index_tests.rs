//! The compiled index against a plain reading of its sources: any sequence of watch changes
//! (incremental or relists) answers every pod as the definition says.

use super::*;
use proptest::prelude::*;

const NAMESPACES: [&str; 2] = ["a", "b"];
const NAMES: [&str; 3] = ["x", "y", "z"];
const LABELS: [(&str, &str); 3] = [("app", "web"), ("app", "api"), ("tier", "front")];

#[derive(Clone, Debug)]
enum Op {
    Binding(usize, usize, Option<BindingEntry>),
    Service(usize, usize, Option<Vec<usize>>),
    ResetBindings(Vec<(usize, usize, BindingEntry)>),
    ResetServices(Vec<(usize, usize, Vec<usize>)>),
}

fn entry() -> impl Strategy<Value = BindingEntry> {
    (
        prop::option::of(prop::sample::select(vec!["ip", "instance"])),
        0..NAMES.len(),
    )
        .prop_map(|(t, s)| BindingEntry {
            target_type: t.map(str::to_string),
            service: NAMES[s].to_string(),
        })
}

fn selector() -> impl Strategy<Value = Vec<usize>> {
    prop::collection::vec(0..LABELS.len(), 0..3)
}

fn op() -> impl Strategy<Value = Op> {
    let ns = 0..NAMESPACES.len();
    let name = 0..NAMES.len();
    prop_oneof![
        4 => (ns.clone(), name.clone(), prop::option::of(entry()))
            .prop_map(|(n, m, e)| Op::Binding(n, m, e)),
        4 => (ns.clone(), name.clone(), prop::option::of(selector()))
            .prop_map(|(n, m, s)| Op::Service(n, m, s)),
        1 => prop::collection::vec((ns.clone(), name.clone(), entry()), 0..4)
            .prop_map(Op::ResetBindings),
        1 => prop::collection::vec((ns, name, selector()), 0..4).prop_map(Op::ResetServices),
    ]
}

/// The sources as plain maps, for the definition.
#[derive(Debug, Default)]
struct Model {
    bindings: HashMap<String, BTreeMap<String, BindingEntry>>,
    services: HashMap<String, HashMap<String, Selector>>,
}

fn sel(pairs: &[usize]) -> Selector {
    // A selector is a map: the last value of a key wins.
    let map: BTreeMap<String, String> = pairs
        .iter()
        .map(|&i| (LABELS[i].0.to_string(), LABELS[i].1.to_string()))
        .collect();
    map.into_iter().collect()
}

/// The definition, over plain maps: `ip` bindings in name order whose Service exists with a
/// non-empty selector the labels satisfy.
fn expected(model: &Model, ns: &str, labels: &BTreeMap<&str, &str>) -> Vec<String> {
    let Some(bindings) = model.bindings.get(ns) else {
        return Vec::new();
    };
    bindings
        .iter()
        .filter(|(_, b)| b.target_type.as_deref() == Some("ip"))
        .filter(|(_, b)| {
            let selector = model.services.get(ns).and_then(|s| s.get(&b.service));
            selector.is_some_and(|s| {
                !s.is_empty()
                    && s.iter()
                        .all(|(k, v)| labels.get(k.as_str()) == Some(&v.as_str()))
            })
        })
        .map(|(name, _)| {
            format!(
                "{GATE_PREFIX}{name}",
                GATE_PREFIX = crate::crd::names::GATE_PREFIX
            )
        })
        .collect()
}

fn apply(idx: &PodGateIndex, model: &mut Model, op: &Op) {
    match op.clone() {
        Op::Binding(n, m, Some(e)) => {
            idx.upsert_binding(NAMESPACES[n], NAMES[m], e.clone());
            let ns = model.bindings.entry(NAMESPACES[n].into()).or_default();
            ns.insert(NAMES[m].into(), e);
        }
        Op::Binding(n, m, None) => {
            idx.remove_binding(NAMESPACES[n], NAMES[m]);
            if let Some(ns) = model.bindings.get_mut(NAMESPACES[n]) {
                ns.remove(NAMES[m]);
            }
        }
        Op::Service(n, m, Some(s)) => {
            idx.upsert_service(NAMESPACES[n], NAMES[m], sel(&s));
            let ns = model.services.entry(NAMESPACES[n].into()).or_default();
            ns.insert(NAMES[m].into(), sel(&s));
        }
        Op::Service(n, m, None) => {
            idx.remove_service(NAMESPACES[n], NAMES[m]);
            if let Some(ns) = model.services.get_mut(NAMESPACES[n]) {
                ns.remove(NAMES[m]);
            }
        }
        Op::ResetBindings(all) => {
            let all: Vec<_> = all
                .into_iter()
                .map(|(n, m, e)| (NAMESPACES[n].to_string(), NAMES[m].to_string(), e))
                .collect();
            model.bindings.clear();
            for (n, m, e) in &all {
                let ns = model.bindings.entry(n.clone()).or_default();
                ns.insert(m.clone(), e.clone());
            }
            idx.reset_bindings(all);
        }
        Op::ResetServices(all) => {
            let all: Vec<_> = all
                .into_iter()
                .map(|(n, m, s)| (NAMESPACES[n].to_string(), NAMES[m].to_string(), sel(&s)))
                .collect();
            model.services.clear();
            for (n, m, s) in &all {
                let ns = model.services.entry(n.clone()).or_default();
                ns.insert(m.clone(), s.clone());
            }
            idx.reset_services(all);
        }
    }
}

proptest! {
    #[test]
    fn answers_as_the_definition_after_any_changes(
        ops in prop::collection::vec(op(), 0..24),
        pods in prop::collection::vec(selector(), 1..4),
    ) {
        let idx = PodGateIndex::default();
        let mut model = Model::default();
        for op in &ops {
            apply(&idx, &mut model, op);
            for ns in NAMESPACES {
                for pod in &pods {
                    let labels: BTreeMap<&str, &str> =
                        pod.iter().map(|&i| LABELS[i]).collect();
                    let got = idx.gates_for(ns, |k| labels.get(k).copied());
                    prop_assert_eq!(got, expected(&model, ns, &labels), "{:?} in {}", op, ns);
                }
            }
        }
    }
}

#[test]
fn a_service_change_alone_moves_the_gates_of_its_namespace_only() {
    let idx = PodGateIndex::default();
    let ip = |svc: &str| BindingEntry {
        target_type: Some("ip".into()),
        service: svc.into(),
    };
    idx.upsert_binding("a", "tgb-2", ip("web"));
    idx.upsert_binding("a", "tgb-1", ip("web"));
    idx.upsert_binding("b", "tgb-1", ip("web"));
    let web: Selector = [("app".to_string(), "web".to_string())].into();
    let labels = |k: &str| (k == "app").then_some("web");
    assert!(idx.gates_for("a", labels).is_empty(), "no Service yet");
    idx.upsert_service("a", "web", web.clone());
    let gate = |n: &str| format!("{}{n}", crate::crd::names::GATE_PREFIX);
    assert_eq!(idx.gates_for("a", labels), [gate("tgb-1"), gate("tgb-2")]);
    assert!(idx.gates_for("b", labels).is_empty(), "b has no Service");
    idx.upsert_service("a", "web", [("app".to_string(), "api".to_string())].into());
    assert!(idx.gates_for("a", labels).is_empty(), "selector changed");
    idx.upsert_service("a", "web", web);
    idx.remove_binding("a", "tgb-1");
    assert_eq!(idx.gates_for("a", labels), [gate("tgb-2")]);
    idx.remove_service("a", "web");
    assert!(idx.gates_for("a", labels).is_empty(), "Service gone");
    assert_eq!(idx.sizes(), (2, 0));
}

#[test]
fn a_selector_packs_and_unpacks_its_pairs() {
    let pairs = |s: &[(&str, &str)]| -> Vec<(String, String)> {
        let sel: Vec<(String, String)> = s
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let packed = Packed::of(&sel);
        assert_eq!(packed.is_empty(), s.is_empty());
        packed
            .pairs()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    };
    assert!(pairs(&[]).is_empty());
    let two = [("app", "web"), ("example.com/tier", "front")];
    let want: Vec<(String, String)> = two
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    assert_eq!(pairs(&two), want);
    assert_eq!(pairs(&[("", "")]), [(String::new(), String::new())]);
}

/// A relist taken one Service at a time answers as one handed in whole, and shows nothing
/// (nor counts as synced) before it completes.
#[test]
fn a_streamed_service_relist_answers_as_a_whole_one() {
    let ip = |svc: &str| BindingEntry {
        target_type: Some("ip".into()),
        service: svc.into(),
    };
    let web: Selector = [("app".to_string(), "web".to_string())].into();
    let (whole, streamed) = (PodGateIndex::default(), PodGateIndex::default());
    for idx in [&whole, &streamed] {
        idx.reset_bindings(vec![("a".into(), "tgb".into(), ip("web"))]);
    }
    whole.reset_services(vec![("a".into(), "web".into(), web.clone())]);
    streamed.services_relist_begin();
    streamed.services_relist_apply("a", "old", web.clone());
    // Cut short: a new relist starts over.
    streamed.services_relist_begin();
    streamed.services_relist_apply("a", "web", web);
    let labels = |k: &str| (k == "app").then_some("web");
    assert!(!streamed.synced(), "not synced before the relist completes");
    assert!(streamed.gates_for("a", labels).is_empty(), "nothing shown");
    streamed.services_relist_end();
    assert!(streamed.synced());
    assert_eq!(
        streamed.gates_for("a", labels),
        whole.gates_for("a", labels)
    );
    assert_eq!(
        streamed.sizes(),
        (1, 1),
        "the cut-short relist left nothing"
    );
}
