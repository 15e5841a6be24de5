//! Where the console's plans come from. The cluster (upstream's): on every request, the
//! Gateways (of `--namespaces`, else all) and every Ingress (groups span namespaces) listed,
//! metadata only kept, then `discovery` pairs them; the Services of the namespaces whose
//! bindings name a port by name are read to resolve it. Files: the reports computed once.
//! A fixed set of objects stands in for the cluster in tests.

use std::collections::BTreeSet;

use gateway_api::apis::standard::gateways::Gateway;
use k8s_openapi::api::core::v1::Service;
use k8s_openapi::api::networking::v1::Ingress;
use kube::api::{Api, ApiResource, DynamicObject, ListParams};

use albc_model::migrate::console::discovery::{
    discover_gateways, discover_namespaces, load_gateway_info, GatewayInfo, NamespaceInfo,
    PlanObjects,
};
use albc_model::migrate::console::{
    named_port_namespaces, namespaces_of, plan_report, GatewayReport,
};
use albc_model::migrate::go_quote;

/// The plans the console compares.
pub enum Source {
    /// The cluster, read on every request.
    Cluster {
        client: kube::Client,
        /// `--namespaces` (all when empty): where Gateways are listed.
        namespaces: Vec<String>,
    },
    /// Objects read once (tests stand them in for the cluster).
    Objects {
        objects: PlanObjects,
        services: Vec<Service>,
    },
    /// Gateways translated from files.
    Files {
        reports: Vec<GatewayReport>,
        /// How many Ingresses were read.
        ingresses: usize,
        /// How many generated objects were read with them (0: the Ingresses' translation is
        /// the Gateway side).
        generated: usize,
    },
}

impl Source {
    /// What the page says it shows.
    pub fn description(&self) -> String {
        match self {
            Source::Cluster { namespaces, .. } if !namespaces.is_empty() => format!(
                "Dry-run plans read from the cluster of the current kubeconfig context (Gateways of namespaces {}).",
                namespaces.join(", ")
            ),
            Source::Cluster { .. } | Source::Objects { .. } => {
                "Dry-run plans read from the cluster of the current kubeconfig context.".into()
            }
            Source::Files {
                ingresses,
                generated: 0,
                ..
            } => format!(
                "Plans of the stacks built from the input files ({ingresses} Ingress(es), and their translation), as the controllers would write them; nothing is deployed."
            ),
            Source::Files {
                ingresses,
                generated,
                ..
            } => format!(
                "Plans of the stacks built from the input files ({ingresses} Ingress(es), and the {generated} Gateway API object(s) read with them), as the controllers would write them; nothing is deployed."
            ),
        }
    }

    async fn objects(&self) -> Result<PlanObjects, String> {
        match self {
            Source::Cluster { client, namespaces } => read_plan_objects(client, namespaces).await,
            Source::Objects { objects, .. } => Ok(objects.clone()),
            Source::Files { .. } => Ok(PlanObjects::default()),
        }
    }

    async fn services(&self, infos: &[GatewayInfo]) -> Result<Vec<Service>, String> {
        match self {
            Source::Cluster { client, .. } => {
                read_services(client, &named_port_namespaces(infos)).await
            }
            Source::Objects { services, .. } => Ok(services.clone()),
            Source::Files { .. } => Ok(Vec::new()),
        }
    }

    /// Namespaces with Gateways that have a plan.
    pub async fn namespaces(&self) -> Result<Vec<NamespaceInfo>, String> {
        match self {
            Source::Files { reports, .. } => Ok(namespaces_of(reports)),
            _ => Ok(discover_namespaces(&self.objects().await?)),
        }
    }

    /// The reports of every Gateway with a plan (of `namespace` only, when given).
    pub async fn reports(&self, namespace: Option<&str>) -> Result<Vec<GatewayReport>, String> {
        if let Source::Files { reports, .. } = self {
            return Ok(reports
                .iter()
                .filter(|r| namespace.is_none_or(|ns| r.info.namespace == ns))
                .cloned()
                .collect());
        }
        let objects = self.objects().await?;
        let namespaces: Vec<String> = match namespace {
            Some(ns) => vec![ns.to_string()],
            None => discover_namespaces(&objects)
                .into_iter()
                .map(|n| n.namespace)
                .collect(),
        };
        let infos: Vec<GatewayInfo> = namespaces
            .iter()
            .flat_map(|ns| discover_gateways(&objects, ns))
            .collect();
        let services = self.services(&infos).await?;
        Ok(infos
            .into_iter()
            .map(|i| plan_report(i, &services))
            .collect())
    }

    /// The report of one Gateway; `Err` says why there is none (upstream answers it with 404).
    pub async fn report(&self, namespace: &str, gateway: &str) -> Result<GatewayReport, String> {
        if let Source::Files { reports, .. } = self {
            return reports
                .iter()
                .find(|r| r.info.namespace == namespace && r.info.name == gateway)
                .cloned()
                .ok_or_else(|| {
                    format!("Gateway {namespace}/{gateway} is not among the Gateways translated from the input")
                });
        }
        let objects = self.objects().await?;
        let info = load_gateway_info(&objects, namespace, gateway).map_err(|e| e.to_string())?;
        let services = self.services(std::slice::from_ref(&info)).await?;
        Ok(plan_report(info, &services))
    }
}

/// The metadata of the Gateways of `namespaces` (all when empty) and of every Ingress.
pub async fn read_plan_objects(
    client: &kube::Client,
    namespaces: &[String],
) -> Result<PlanObjects, String> {
    let ar = ApiResource::erase::<Gateway>(&());
    let mut out = PlanObjects::default();
    if namespaces.is_empty() {
        let list = Api::<DynamicObject>::all_with(client.clone(), &ar)
            .list(&ListParams::default())
            .await
            .map_err(|e| format!("failed to list Gateways cluster-wide: {e}"))?;
        out.gateways = list.items.into_iter().map(|g| g.metadata).collect();
    } else {
        for ns in namespaces {
            let list = Api::<DynamicObject>::namespaced_with(client.clone(), ns, &ar)
                .list(&ListParams::default())
                .await
                .map_err(|e| format!("failed to list Gateways in namespace {ns}: {e}"))?;
            out.gateways
                .extend(list.items.into_iter().map(|g| g.metadata));
        }
    }
    // Groups span namespaces: every Ingress, as upstream lists them to find a group's holder.
    let list = Api::<Ingress>::all(client.clone())
        .list(&ListParams::default())
        .await
        .map_err(|e| format!("failed to list ingresses: {e}"))?;
    out.ingresses = list.items.into_iter().map(|i| i.metadata).collect();
    Ok(out)
}

/// The Services of `namespaces`.
pub async fn read_services(
    client: &kube::Client,
    namespaces: &BTreeSet<String>,
) -> Result<Vec<Service>, String> {
    let mut out = Vec::new();
    for ns in namespaces {
        let list = Api::<Service>::namespaced(client.clone(), ns)
            .list(&ListParams::default())
            .await
            .map_err(|e| format!("failed to list Services in namespace {}: {e}", go_quote(ns)))?;
        out.extend(list.items);
    }
    Ok(out)
}
