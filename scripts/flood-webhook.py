#!/usr/bin/env python3
"""Flood benchmark of the webhook and metrics servers (127.0.0.1 only, bounded in time).

While a client sends a valid Service admission every 100 ms from 127.0.0.1 (alternately on a fresh
connection and on one kept alive, as the API server does), four floods run from other loopback
addresses, each playing an unauthenticated peer:
  - slow declared bodies (127.0.0.2): 9 connections declaring 3 MiB and 24 declaring 256 KiB,
    sending one byte, reconnecting whenever answered;
  - busy connections at the cap (127.0.0.3-6): --webhook-max-connections connections each
    sending a head with Content-Length: 1 and no body, reopened when closed;
  - unfinished 400 KB heads (127.0.0.7): 1,000 connections;
  - idle floods on :8080 (127.0.0.8): 10,000 idle connections plus 1,000 unfinished 400 KB heads.
Prints one JSON line: answered/200 counts, latency p50/p99/max, RSS peak. The target is every
admission answered 200 under 100 ms and RSS under the chart's documented limit (256 MiB).

FLOODS=slow,busy,heads,metrics (the default) chooses the floods.

Usage: ulimit -n 20000; python3 scripts/flood-webhook.py target/debug/aws-load-balancer-controller [seconds]
"""
import asyncio, json, multiprocessing, os, re, ssl, subprocess, sys, tempfile, time

CAP = 4096


def rss_mib(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS"):
            return int(line.split()[1]) // 1024


def review(uid):
    svc = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s", "namespace": "default"},
           "spec": {"type": "LoadBalancer", "ports": [{"port": 80}]}}
    return json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                       "request": {"uid": uid, "kind": {"group": "", "version": "v1", "kind": "Service"},
                                   "resource": {"group": "", "version": "v1", "resource": "services"},
                                   "namespace": "default", "operation": "CREATE",
                                   "userInfo": {"username": "u"}, "object": svc}}).encode()


def post(path, body, length=None, close=False):
    head = (f"POST {path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body) if length is None else length}\r\n")
    if close:
        head += "Connection: close\r\n"
    return head.encode() + b"\r\n" + body


async def open_from(ip, host, port, tls):
    return await asyncio.open_connection(host, port, ssl=tls, local_addr=(ip, 0),
                                         server_hostname="localhost" if tls else None)


async def read_answer(reader):
    head = await reader.readuntil(b"\r\n\r\n")
    status = int(head.split(b" ")[1])
    length = int(re.search(rb"(?i)content-length: *(\d+)", head).group(1))
    await reader.readexactly(length)
    return status


async def keep(n, fn, stop):
    """Keeps n copies of the attack coroutine fn running until stop."""
    async def one(i):
        while not stop.is_set():
            try:
                await fn(i)
            except Exception:
                pass
            # Reopened a second after being closed: a steady flood, not a handshake storm
            # that measures only the CPU of a 2-core machine.
            await asyncio.sleep(1)
    await asyncio.gather(*(one(i) for i in range(n)))


def attack(chosen, wh, wp, mh, mp, cafile, stop):
    """The floods, in a process of their own so that the measuring client is not starved."""
    tls = ssl.create_default_context(cafile=cafile)
    path = "/mutate-v1-service"

    async def run():
        held = []

        async def slow_body(i):
            size = 3 * 1024 * 1024 if i < 9 else 256 * 1024
            r, w = await open_from("127.0.0.2", wh, wp, tls)
            w.write(post(path, b"{", size)); await w.drain()
            try:
                await asyncio.wait_for(read_answer(r), 12)
            finally:
                w.close()

        async def busy(i):
            r, w = await open_from(f"127.0.0.{3 + i % 4}", wh, wp, tls)
            w.write(post(path, b"", 1)); await w.drain()
            try:
                await r.read(1)  # until the server closes it
            finally:
                w.close()

        async def big_head(i):
            r, w = await open_from("127.0.0.7", wh, wp, tls)
            w.write(b"POST " + path.encode() + b" HTTP/1.1\r\nx-a: " + b"a" * 400_000)
            await w.drain()
            await r.read(1)
            w.close()

        async def metrics_flood():
            for i in range(10_000):
                try:
                    held.append((await open_from("127.0.0.8", mh, mp, None))[1])
                except Exception as e:
                    print("metrics flood:", repr(e), file=sys.stderr)
                    break
            for i in range(1_000):
                try:
                    r, w = await open_from("127.0.0.8", mh, mp, None)
                    w.write(b"GET /metrics HTTP/1.1\r\nx-a: " + b"a" * 400_000); held.append(w)
                except Exception:
                    break

        floods = {"slow": lambda: keep(33, slow_body, stop), "busy": lambda: keep(CAP, busy, stop),
                  "heads": lambda: keep(1000, big_head, stop), "metrics": metrics_flood}
        await asyncio.gather(*(floods[f]() for f in chosen if f))

    asyncio.run(run())


async def main():
    tmp = tempfile.mkdtemp()
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout",
                    f"{tmp}/tls.key", "-out", f"{tmp}/tls.crt", "-days", "1", "-subj", "/CN=localhost",
                    "-addext", "subjectAltName=DNS:localhost"], check=True, capture_output=True)
    env = dict(os.environ, AWS_EC2_METADATA_DISABLED="true", AWS_ACCESS_KEY_ID="x",
               AWS_SECRET_ACCESS_KEY="x", AWS_ENDPOINT_URL="http://127.0.0.1:9")
    proc = subprocess.Popen([BIN, "--cluster-name=flood", "--kubeconfig=/nonexistent",
                             "--metrics-bind-addr=127.0.0.1:0", "--health-probe-bind-addr=127.0.0.1:0",
                             "--webhook-bind-host=127.0.0.1", "--webhook-bind-port=0",
                             "--log-format=json", f"--log-level={os.environ.get('LOG_LEVEL', 'info')}", f"--webhook-cert-dir={tmp}"],
                            stderr=subprocess.PIPE, env=env)
    addrs = {}
    while len(addrs) < 2:
        line = proc.stderr.readline().decode()
        if not line:
            sys.exit("the controller exited")
        for key, msg in (("webhook", "webhook server listening"), ("metrics", "metrics server listening")):
            if msg in line:
                addrs[key] = json.loads(line)["addr"].rsplit(":", 1)
    # Keep reading stderr so the process never blocks on a full pipe.
    log = open(os.environ["SERVER_LOG"], "wb", buffering=0) if os.environ.get("SERVER_LOG") else None
    asyncio.get_running_loop().run_in_executor(
        None, lambda: [log.write(l) if log else None for l in proc.stderr])
    wh, wp = addrs["webhook"][0], int(addrs["webhook"][1])
    mh, mp = addrs["metrics"][0], int(addrs["metrics"][1])
    tls = ssl.create_default_context(cafile=f"{tmp}/tls.crt")
    path = "/mutate-v1-service"
    await asyncio.sleep(1)
    base = rss_mib(proc.pid)
    spawn = multiprocessing.get_context("spawn")
    stop = spawn.Event()
    chosen = os.environ.get("FLOODS", "slow,busy,heads,metrics").split(",")
    attacker = spawn.Process(target=attack, args=(chosen, wh, wp, mh, mp, f"{tmp}/tls.crt", stop))
    attacker.daemon = True  # never outlives this process
    attacker.start()
    await asyncio.sleep(5)  # let the floods build up

    latencies, statuses, peak = [], {}, base
    pooled = None
    t_end = time.monotonic() + SECONDS
    n = 0
    while time.monotonic() < t_end:
        n += 1
        start = time.monotonic()
        connected = 0.0
        try:
            if n % 2 == 0 or pooled is None:
                r, w = await asyncio.wait_for(open_from("127.0.0.1", wh, wp, tls), 10)
                connected = time.monotonic() - start
                w.write(post(path, review(f"u{n}"), close=True))
                await asyncio.wait_for(w.drain(), 10)
                status = await asyncio.wait_for(read_answer(r), 10)
                w.close()
                if pooled is None:
                    pooled = await asyncio.wait_for(open_from("127.0.0.1", wh, wp, tls), 10)
            else:
                r, w = pooled
                w.write(post(path, review(f"u{n}")))
                await asyncio.wait_for(w.drain(), 10)
                status = await asyncio.wait_for(read_answer(r), 10)
        except Exception as e:
            status = type(e).__name__
            print(n, repr(e), file=sys.stderr)
            pooled = None
        latencies.append(time.monotonic() - start)
        if os.environ.get("VERBOSE"):
            print(n, status, round(latencies[-1] * 1000, 1), rss_mib(proc.pid),
                  "connected_ms", round(connected * 1000, 1) if n % 2 == 0 else "-", file=sys.stderr)
        statuses[str(status)] = statuses.get(str(status), 0) + 1
        if proc.poll() is not None:
            sys.exit(f"the controller exited with {proc.returncode}")
        peak = max(peak, rss_mib(proc.pid))
        await asyncio.sleep(max(0, 0.1 - (time.monotonic() - start)))
    open_conns = len(os.listdir(f"/proc/{proc.pid}/fd"))
    proc.terminate()
    attacker.kill()
    latencies.sort()
    ms = lambda x: round(x * 1000, 1)
    print(json.dumps({"admissions": len(latencies), "statuses": statuses,
                      "p50_ms": ms(latencies[len(latencies) // 2]),
                      "p99_ms": ms(latencies[len(latencies) * 99 // 100]), "max_ms": ms(latencies[-1]),
                      "under_100ms": sum(1 for x in latencies if x < 0.1),
                      "rss_base_mib": base, "rss_peak_mib": peak, "server_fds_at_end": open_conns,
                      "floods": chosen}))
    os._exit(0)


if __name__ == "__main__":
    BIN = sys.argv[1]
    SECONDS = float(sys.argv[2]) if len(sys.argv) > 2 else 30
    asyncio.run(main())
