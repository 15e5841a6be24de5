//! Tests of the AWS layer: the contract suite on fake and moto, AWS rules on the fake, the
//! Global Accelerator contract on the fake alone (moto does not serve it), and the limiter /
//! retry / metrics wrapper.

mod contract;
mod contract_ga;
mod env;
mod fake_rules;
mod fence;
mod instrumentation;
mod startup;

/// Runs each contract scenario twice: `fake::<name>` in process, `moto::<name>` on moto_server.
macro_rules! contract_tests {
    ($($name:ident),* $(,)?) => {
        mod fake {
            $( #[tokio::test] async fn $name() { super::contract::$name(&super::env::Env::fake()).await } )*
        }
        mod moto {
            $( #[tokio::test] async fn $name() { super::contract::$name(&super::env::Env::moto()).await } )*
        }
    };
}

contract_tests!(
    subnet_and_vpc_discovery,
    security_groups_and_rules,
    instances_and_interfaces,
    load_balancer_lifecycle,
    target_groups_and_targets,
    listeners_and_rules,
    tags_in_batches,
);
