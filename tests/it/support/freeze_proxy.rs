//! A TCP proxy that can be frozen: it stops forwarding in both directions without closing any
//! connection, as a partitioned or stalled network path does. Used between one replica and the
//! API test server to freeze only that replica's view of the cluster.

use std::net::SocketAddr;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

pub struct FreezeProxy {
    pub addr: SocketAddr,
    frozen: watch::Sender<bool>,
    task: tokio::task::JoinHandle<()>,
}

impl FreezeProxy {
    pub async fn start(upstream: SocketAddr) -> FreezeProxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (frozen, watching) = watch::channel(false);
        let task = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let Ok(server) = TcpStream::connect(upstream).await else {
                    continue;
                };
                let (cr, cw) = client.into_split();
                let (sr, sw) = server.into_split();
                tokio::spawn(pump(cr, sw, watching.clone()));
                tokio::spawn(pump(sr, cw, watching.clone()));
            }
        });
        FreezeProxy { addr, frozen, task }
    }

    /// Stops forwarding; bytes already read are held, connections stay open.
    pub fn freeze(&self) {
        self.frozen.send_replace(true);
    }

    /// A kube client whose every request goes through this proxy.
    pub fn client(&self) -> kube::Client {
        let uri: http::Uri = format!("http://{}", self.addr).parse().unwrap();
        kube::Client::try_from(kube::Config::new(uri)).unwrap()
    }
}

impl Drop for FreezeProxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn wait_thawed(frozen: &mut watch::Receiver<bool>) -> bool {
    frozen.wait_for(|f| !*f).await.is_ok()
}

async fn pump(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    mut frozen: watch::Receiver<bool>,
) {
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        if !wait_thawed(&mut frozen).await {
            return;
        }
        let n = tokio::select! {
            read = from.read(&mut buf) => match read {
                Ok(0) | Err(_) => return,
                Ok(n) => n,
            },
            _ = frozen.wait_for(|f| *f) => continue,
        };
        if !wait_thawed(&mut frozen).await || to.write_all(&buf[..n]).await.is_err() {
            return;
        }
    }
}
