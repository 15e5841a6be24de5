//! `migrate --from-cluster` (`pkg/ingress2gateway/reader/cluster_reader.go`): reads only (list
//! and get). The Ingresses of the namespaces asked for (all with `--all-namespaces`, or the one
//! `--ingress-name` names) and every Service of those namespaces; every IngressClass; every
//! IngressClassParams when the cluster serves the kind. Errors carry upstream's texts.

use k8s_openapi::api::core::v1::Service;
use k8s_openapi::api::networking::v1::{Ingress, IngressClass};
use kube::api::{Api, DynamicObject, ListParams};
use kube::ResourceExt;

use albc_model::crd::IngressClassParams;
use albc_model::migrate::{go_quote, InputResources, MigrateError};

/// What to read.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ClusterReaderOptions {
    pub kubeconfig: String,
    pub namespaces: Vec<String>,
    pub all_namespaces: bool,
    pub ingress_name: String,
}

/// The client of `--kubeconfig`, else `$KUBECONFIG` or `~/.kube/config` (then in-cluster).
pub(crate) async fn client(kubeconfig: &str) -> Result<kube::Client, MigrateError> {
    let build = |e: String| MigrateError::Read(format!("failed to build kubeconfig: {e}"));
    let config = if kubeconfig.is_empty() {
        kube::Config::infer()
            .await
            .map_err(|e| build(e.to_string()))?
    } else {
        let kc =
            kube::config::Kubeconfig::read_from(kubeconfig).map_err(|e| build(e.to_string()))?;
        kube::Config::from_custom_kubeconfig(kc, &Default::default())
            .await
            .map_err(|e| build(e.to_string()))?
    };
    kube::Client::try_from(config)
        .map_err(|e| MigrateError::Read(format!("failed to create kubernetes client: {e}")))
}

/// Reads the cluster `opts.kubeconfig` names.
pub async fn read_from_cluster(
    opts: &ClusterReaderOptions,
) -> Result<InputResources, MigrateError> {
    let client = client(&opts.kubeconfig).await?;
    read_from_client(&client, opts).await
}

/// Reads through `client` (separate for tests).
pub async fn read_from_client(
    client: &kube::Client,
    opts: &ClusterReaderOptions,
) -> Result<InputResources, MigrateError> {
    let namespaces: Vec<String> = if opts.all_namespaces {
        Vec::new()
    } else {
        opts.namespaces.clone()
    };
    if !opts.ingress_name.is_empty() && namespaces.len() != 1 {
        return Err(MigrateError::Read(format!(
            "IngressName requires exactly one namespace, got {}",
            namespaces.len()
        )));
    }
    // "" stands for every namespace.
    let query: Vec<String> = if namespaces.is_empty() {
        vec![String::new()]
    } else {
        namespaces
    };
    let mut out = InputResources::default();
    if !opts.ingress_name.is_empty() {
        let ns = &query[0];
        let api: Api<Ingress> = Api::namespaced(client.clone(), ns);
        let ing = api.get(&opts.ingress_name).await.map_err(|e| {
            MigrateError::Read(format!(
                "failed to get Ingress {ns}/{}: {e}",
                opts.ingress_name
            ))
        })?;
        out.ingresses.push(ing);
    } else {
        for ns in &query {
            let api: Api<Ingress> = scoped(client, ns);
            let list = api.list(&ListParams::default()).await.map_err(|e| {
                MigrateError::Read(format!(
                    "failed to list Ingresses in namespace {}: {e}",
                    go_quote(ns)
                ))
            })?;
            out.ingresses.extend(list.items);
        }
    }
    for ns in &query {
        let api: Api<Service> = scoped(client, ns);
        let list = api.list(&ListParams::default()).await.map_err(|e| {
            MigrateError::Read(format!(
                "failed to list Services in namespace {}: {e}",
                go_quote(ns)
            ))
        })?;
        out.services.extend(list.items);
    }
    let classes: Api<IngressClass> = Api::all(client.clone());
    out.ingress_classes = classes
        .list(&ListParams::default())
        .await
        .map_err(|e| MigrateError::Read(format!("failed to list IngressClasses: {e}")))?
        .items;
    // Only when the CRD is installed (the group serves the kind).
    let served = client
        .list_api_group_resources("elbv2.k8s.aws/v1beta1")
        .await
        .map(|l| l.resources.iter().any(|r| r.kind == "IngressClassParams"))
        .unwrap_or(false);
    if served {
        let ar = kube::api::ApiResource::erase::<IngressClassParams>(&());
        let api = Api::<DynamicObject>::all_with(client.clone(), &ar);
        let list = api
            .list(&ListParams::default())
            .await
            .map_err(|e| MigrateError::Read(format!("failed to list IngressClassParams: {e}")))?;
        for o in list.items {
            let name = o.name_any();
            let value = serde_json::to_value(o).map_err(|e| {
                MigrateError::Read(format!("failed to list IngressClassParams: {name}: {e}"))
            })?;
            out.ingress_class_params
                .push(IngressClassParams::decode(value).map_err(|e| {
                    MigrateError::Read(format!("failed to list IngressClassParams: {name}: {e}"))
                })?);
        }
    }
    Ok(out)
}

/// The API of one namespace, or of all for "".
fn scoped<K>(client: &kube::Client, ns: &str) -> Api<K>
where
    K: kube::Resource<Scope = k8s_openapi::NamespaceResourceScope>,
    K::DynamicType: Default,
{
    if ns.is_empty() {
        Api::all(client.clone())
    } else {
        Api::namespaced(client.clone(), ns)
    }
}
