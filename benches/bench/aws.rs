//! Throughput of the in-memory AWS fake (the scale-test backend), with the real limiter/retry
//! wrapper switched off so the fake itself is measured.

use std::sync::Arc;
use std::time::Instant;

use aws_load_balancer_controller::aws::fake::{spec, FakeAws};
use aws_load_balancer_controller::aws::*;

fn report(what: &str, n: usize, secs: f64) {
    println!(
        "aws/{what}: {n} in {:.3} s = {:.0}/s",
        secs,
        n as f64 / secs
    );
}

pub fn run() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let fake = Arc::new(FakeAws::new());
        let vpc = fake.add_vpc("10.0.0.0/16", Tags::new());
        let elb: Arc<dyn ElbV2> = fake.clone();
        let ec2: Arc<dyn Ec2> = fake.clone();

        let n = 20_000;
        let start = Instant::now();
        for i in 0..n {
            ec2.describe_vpcs(&Ec2Query::ids([vpc.clone()]))
                .await
                .expect("describe");
            if i == 0 {
                fake.clear_calls();
            }
        }
        report("describe_vpcs", n, start.elapsed().as_secs_f64());

        let tg = elb
            .create_target_group((&spec::ip_target_group("bench", 80)).into(), &vpc)
            .await
            .expect("tg");
        let targets: Vec<TargetDescription> = (0..10_000u32)
            .map(|i| TargetDescription::new(format!("10.0.{}.{}", i / 250, i % 250 + 1), 80))
            .collect();
        let start = Instant::now();
        elb.register_targets(&tg.arn, &targets)
            .await
            .expect("register");
        report(
            "register_targets (targets, 200 per request)",
            targets.len(),
            start.elapsed().as_secs_f64(),
        );

        let rounds = 200;
        let start = Instant::now();
        for _ in 0..rounds {
            let h = elb
                .describe_target_health(&tg.arn, &[])
                .await
                .expect("health");
            assert_eq!(h.len(), targets.len());
        }
        report(
            "describe_target_health (10k targets each)",
            rounds,
            start.elapsed().as_secs_f64(),
        );

        let mut arns = Vec::new();
        for i in 0..200 {
            let t = elb
                .create_target_group(
                    (&spec::ip_target_group(&format!("tg-{i}"), 80)).into(),
                    &vpc,
                )
                .await
                .expect("tg");
            arns.push(t.arn);
        }
        let start = Instant::now();
        let rounds = 500;
        for _ in 0..rounds {
            elb.describe_tags(&arns).await.expect("tags");
        }
        report(
            "describe_tags (200 ARNs, 10 requests each)",
            rounds,
            start.elapsed().as_secs_f64(),
        );
        fake.clear_calls();
    });
}
