//! The fake's Global Accelerator data: accelerators with their tags, listeners and endpoint
//! groups, idempotency tokens, and the knobs tests turn (how IN_PROGRESS becomes DEPLOYED, the
//! quotas, upstream's IAM policy). The calls are in `global_accelerator`.

use std::collections::BTreeMap;

use crate::aws::global_accelerator::{
    DescribedAccelerator, DescribedEndpointGroup, DescribedListener, STATUS_DEPLOYED,
};
use crate::aws::types::Tags;

/// How an accelerator whose change is propagating (`IN_PROGRESS`) becomes `DEPLOYED`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum GaDeployment {
    /// Only when the test says so ([`super::FakeAws::finish_ga_deployments`]): tests step time.
    #[default]
    Manual,
    /// After this many DescribeAccelerator answers have shown it `IN_PROGRESS`.
    AfterDescribes(u32),
    /// At once: every change is answered `DEPLOYED`.
    Immediate,
}

/// The quotas the fake enforces; the defaults are AWS's (20 accelerators per account, 10
/// listeners per accelerator, 10 port ranges per listener, 10 endpoints per endpoint group).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GaLimits {
    pub accelerators: usize,
    pub listeners_per_accelerator: usize,
    pub port_ranges_per_listener: usize,
    pub endpoints_per_group: usize,
}

impl Default for GaLimits {
    fn default() -> Self {
        Self {
            accelerators: 20,
            listeners_per_accelerator: 10,
            port_ranges_per_listener: 10,
            endpoints_per_group: 10,
        }
    }
}

#[derive(Debug, Clone)]
pub(crate) struct AcceleratorRec {
    pub acc: DescribedAccelerator,
    pub tags: Tags,
    /// Disabled, but the disable is still propagating: DeleteAccelerator refuses it.
    pub disabling: bool,
    /// DescribeAccelerator answers that showed the current change `IN_PROGRESS`.
    pub describes: u32,
}

impl AcceleratorRec {
    pub fn finish_deployment(&mut self) {
        self.acc.status = STATUS_DEPLOYED.to_string();
        self.disabling = false;
        self.describes = 0;
    }
}

#[derive(Debug, Clone)]
pub(crate) struct GaListenerRec {
    pub accelerator: String,
    pub listener: DescribedListener,
}

#[derive(Debug, Clone)]
pub(crate) struct GaGroupRec {
    pub listener: String,
    pub group: DescribedEndpointGroup,
}

/// Everything Global Accelerator holds for the fake account.
#[derive(Debug, Default)]
pub(crate) struct GaState {
    /// By ARN.
    pub accelerators: BTreeMap<String, AcceleratorRec>,
    pub listeners: BTreeMap<String, GaListenerRec>,
    pub groups: BTreeMap<String, GaGroupRec>,
    /// CreateAccelerator idempotency token → the accelerator it made.
    pub tokens: BTreeMap<String, String>,
    pub deployment: GaDeployment,
    pub limits: GaLimits,
    /// Answer as upstream's `aga_controller_iam_policy.json` would let the controller: writes
    /// and describes only on accelerators tagged `elbv2.k8s.aws/cluster` and
    /// `aga.k8s.aws/resource=GlobalAccelerator`.
    pub iam_policy: bool,
}
