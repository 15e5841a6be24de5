//! Cache hits, expiry, error forgetting, single-flight and upstream's error texts.

use super::*;
use crate::webhook::test_support::World;

#[tokio::test]
async fn second_lookup_within_ttl_is_a_hit_by_arn_and_by_name() {
    let w = World::new();
    let tg = w.tg("web", "ip", None, "HTTP").await;
    assert_eq!(w.cache.by_name("web").await.unwrap().arn, tg.arn);
    assert_eq!(w.describes(), 1);
    // The name lookup also filled the ARN key.
    assert_eq!(w.cache.by_arn(&tg.arn).await.unwrap().name, "web");
    assert_eq!(w.cache.by_name("web").await.unwrap(), tg);
    assert_eq!(w.describes(), 1, "both answered from the cache");
}

#[tokio::test]
async fn entries_expire_after_the_ttl() {
    let w = World::new();
    let ttl = std::time::Duration::from_millis(300);
    let cache = TgCache::new(w.aws.clone(), ttl);
    let tg = w.tg("web", "ip", None, "HTTP").await;
    cache.by_arn(&tg.arn).await.unwrap();
    cache.by_arn(&tg.arn).await.unwrap();
    assert_eq!(w.describes(), 1);
    tokio::time::sleep(ttl + ttl / 3).await;
    cache.by_arn(&tg.arn).await.unwrap();
    assert_eq!(w.describes(), 2, "stale entry refetched");
}

#[tokio::test]
async fn failures_are_not_cached() {
    let w = World::new();
    let err = w.cache.by_name("later").await.unwrap_err();
    assert!(
        matches!(&err, TgLookupError::Aws(e) if e.is_not_found()),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        "TargetGroupNotFound: One or more target groups not found: 'later'"
    );
    w.tg("later", "ip", None, "HTTP").await;
    assert!(w.cache.by_name("later").await.is_ok());
    assert_eq!(
        w.describes(),
        1,
        "the fix is seen at once (clear_calls reset the log)"
    );
}

#[tokio::test]
async fn concurrent_misses_share_one_call() {
    let w = World::new();
    let tg = w.tg("web", "ip", None, "HTTP").await;
    w.aws.set_latency(std::time::Duration::from_millis(30));
    let lookups = (0..20).map(|_| w.cache.by_arn(&tg.arn));
    let answers = futures::future::join_all(lookups).await;
    assert!(answers.iter().all(|a| a.as_ref().unwrap().arn == tg.arn));
    assert_eq!(w.describes(), 1);
}

#[tokio::test]
async fn request_view_looks_up_lazily_and_once() {
    let w = World::new();
    let tg = w.tg("web", "instance", Some("ipv6"), "TCP").await;
    let view = RequestTg::new(&w.cache, &tg.arn);
    assert_eq!(w.describes(), 0, "nothing until a check asks");
    assert_eq!(view.get().await.as_ref().unwrap().target_type, "instance");
    assert_eq!(
        ip_address_type(view.get().await.as_ref().unwrap()),
        Ok("ipv6")
    );
    assert_eq!(w.describes(), 1);
}

#[test]
fn ip_address_type_mapping_and_count_text() {
    let mut tg = TargetGroup::default();
    assert_eq!(ip_address_type(&tg), Ok("ipv4"), "absent means ipv4");
    tg.ip_address_type = Some("ipv4".into());
    assert_eq!(ip_address_type(&tg), Ok("ipv4"));
    tg.ip_address_type = Some("dualstack".into());
    assert_eq!(
        ip_address_type(&tg),
        Err("unsupported IPAddressType: dualstack".into())
    );
    let e = TgLookupError::NotSingle {
        query: "web".into(),
        count: 0,
    };
    assert_eq!(
        e.to_string(),
        "expecting a single targetGroup with query [web] but got 0"
    );
}

/// Records the thread each assumed-role client is asked for on.
struct WhereCalled {
    elbv2: Arc<dyn ElbV2>,
    threads: Mutex<Vec<String>>,
}

impl std::fmt::Debug for WhereCalled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("WhereCalled")
    }
}

#[async_trait::async_trait]
impl AssumeRole for WhereCalled {
    async fn elbv2_as(&self, _: &str, _: &str) -> Result<Arc<dyn ElbV2>, AwsError> {
        let name = std::thread::current().name().unwrap_or("").to_string();
        self.threads.lock().unwrap().push(name);
        Ok(self.elbv2.clone())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 1)]
async fn lookups_from_webhook_threads_run_on_the_controllers_runtime() {
    let w = World::new();
    let tg = w.tg("web", "ip", None, "HTTP").await;
    let roles = Arc::new(WhereCalled {
        elbv2: w.aws.clone(),
        threads: Mutex::default(),
    });
    let role = Role {
        arn: "arn:aws:iam::222222222222:role/tgb".into(),
        ..Role::default()
    };
    for on_runtime in [true, false] {
        let mut cache = TgCache::new(w.aws.clone(), DEFAULT_TTL).with_roles(roles.clone());
        if on_runtime {
            cache = cache.on_runtime(tokio::runtime::Handle::current());
        }
        let cache = Arc::new(cache);
        let (arn, role) = (tg.arn.clone(), role.clone());
        // A webhook thread: a runtime of its own, as `webhook::threads` runs them.
        let webhook = std::thread::Builder::new()
            .name("webhook-0".into())
            .spawn(move || {
                let rt = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .unwrap();
                rt.block_on(cache.by_arn_as(&role, &arn)).map(|tg| tg.name)
            })
            .unwrap();
        let answer = tokio::task::spawn_blocking(move || webhook.join().unwrap())
            .await
            .unwrap();
        assert_eq!(answer.unwrap(), "web");
    }
    assert_eq!(
        *roles.threads.lock().unwrap(),
        ["tokio-rt-worker", "webhook-0"],
        "on the controller's runtime when given one, else on the caller's"
    );
}
