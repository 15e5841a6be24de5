#!/usr/bin/env python3
"""Flood of the metrics server (127.0.0.1 only, bounded): 4,000 idle connections plus 300
unfinished 400 KB request heads, then one scrape; prints RSS before, at the peak and after, and
the scrape's time. The server must stay small and keep answering.

Usage: mkdir -p /tmp/fc && openssl req -x509 -newkey rsa:2048 -nodes -keyout /tmp/fc/tls.key \
         -out /tmp/fc/tls.crt -days 1 -subj /CN=localhost
       ulimit -n 20000; python3 scripts/flood-metrics.py target/debug/aws-load-balancer-controller
"""
import asyncio, subprocess, sys, time, os, re, json
BIN=sys.argv[1]
def rss(pid):
    for l in open(f"/proc/{pid}/status"):
        if l.startswith("VmRSS"): return int(l.split()[1])//1024
async def main():
    env=dict(os.environ, AWS_EC2_METADATA_DISABLED="true", AWS_ACCESS_KEY_ID="x", AWS_SECRET_ACCESS_KEY="x", AWS_ENDPOINT_URL="http://127.0.0.1:9")
    p=subprocess.Popen([BIN,"--cluster-name=flood","--kubeconfig=/nonexistent","--metrics-bind-addr=127.0.0.1:0","--health-probe-bind-addr=127.0.0.1:0","--webhook-bind-host=127.0.0.1","--webhook-bind-port=0","--log-format=json","--webhook-cert-dir=/tmp/fc"],stderr=subprocess.PIPE,env=env)
    addr=None
    while addr is None:
        line=p.stderr.readline().decode()
        if not line: print("exited"); return
        if "metrics server listening" in line: addr=json.loads(line)["addr"]
    host,port=addr.rsplit(":",1); port=int(port)
    await asyncio.sleep(1)
    base=rss(p.pid)
    conns=[]
    for i in range(4000):
        try:
            r,w=await asyncio.open_connection(host,port); conns.append(w)
        except Exception as e: break
    big=[]
    for i in range(300):
        try:
            r,w=await asyncio.open_connection(host,port)
            w.write(b"GET /metrics HTTP/1.1\r\nx-a: "+b"a"*400000); big.append(w)
        except Exception: break
    await asyncio.sleep(2)
    peak=rss(p.pid)
    # A scrape while the flood is on
    t=time.time()
    r,w=await asyncio.open_connection(host,port); w.write(b"GET /metrics HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n"); await w.drain()
    data=await asyncio.wait_for(r.read(), 60); took=time.time()-t
    await asyncio.sleep(8)
    open_after=sum(1 for c in conns+big if not c.is_closing() and not c.transport.is_closing())
    after=rss(p.pid)
    print(json.dumps({"idle":len(conns),"big_heads":len(big),"rss_base_mib":base,"rss_peak_mib":peak,"rss_after_mib":after,"scrape_s":round(took,2),"scrape_ok":data.startswith(b"HTTP/1.1 200")}))
    p.terminate()
asyncio.run(main())
