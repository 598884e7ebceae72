"""Memory of `lgembed serve`: idle RSS after start, then RSS over 1,000 API runs in a row.

Why: issue 12 asks that an idle service with a small graph stays under 30 MB of
resident memory and that 1,000 runs through the API leave it flat (no leak per run,
per request or per checkpoint). This script measures exactly that on the real
service: it starts `python -m lgembed serve` on a one-node counter graph with a fresh
LMDB environment, waits for READY=1 on its own $NOTIFY_SOCKET, lets it idle, reads
VmRSS (and VmHWM, the peak) from /proc/PID/status, then calls langgraph-sdk's sync
client `runs.wait` N times in a row and samples RSS every 100 runs.

Run (after tools/test.sh has set up .venv; needs `pip install langgraph-sdk`):

    .venv/bin/python tools/service_rss.py [--runs 1000] [--every 100] [--idle 2]
                                          [--thread-per-run] [--python PATH]

`LGEMBED_EXTENSIONS=off` in the environment measures the pure build.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import time

GRAPH = textwrap.dedent(
    """
    from typing import TypedDict
    from lgembed.graph import END, START, StateGraph

    class S(TypedDict, total=False):
        n: int
        note: str

    def count(s: S) -> dict:
        return {"n": s.get("n", 0) + 1, "note": f"run {s.get('n', 0) + 1}"}

    builder = StateGraph(S)
    builder.add_node("count", count)
    builder.add_edge(START, "count")
    builder.add_edge("count", END)
    """
)


def status_kb(pid: int) -> dict[str, int]:
    """VmRSS, VmHWM, RssAnon, RssFile of `pid` in kB."""
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM", "RssAnon", "RssFile", "Threads"):
                out[key] = int(value.split()[0])
    return out


def disk_kb(path: str) -> int:
    """Blocks `path` takes on disk, in kB (LMDB's data file is sparse)."""
    try:
        return os.stat(path).st_blocks // 2
    except OSError:
        return 0


def mb(kb: int) -> str:
    return f"{kb / 1024:6.1f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--every", type=int, default=100, help="sample RSS every N runs")
    parser.add_argument("--idle", type=float, default=2.0, help="seconds to idle before the idle sample")
    parser.add_argument("--thread-per-run", action="store_true", help="a new thread for every run (default: one thread)")
    parser.add_argument("--python", default=sys.executable, help="the interpreter that runs the service")
    args = parser.parse_args()
    from langgraph_sdk import get_sync_client

    with tempfile.TemporaryDirectory(prefix="lgembed-rss-") as work:
        with open(os.path.join(work, "counter.py"), "w") as f:
            f.write(GRAPH)
        sock_path = os.path.join(work, "notify.sock")
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        sock.bind(sock_path)
        sock.settimeout(60)
        env = {k: v for k, v in os.environ.items() if k not in ("WATCHDOG_USEC", "WATCHDOG_PID")}
        env["NOTIFY_SOCKET"] = sock_path
        cmd = [args.python, "-m", "lgembed", "serve", "counter.py:builder", "--graph-id", "counter",
               "--db", os.path.join(work, "db"), "--http", "127.0.0.1:0", "--log-level", "warning"]  # fmt: skip
        proc = subprocess.Popen(cmd, env=env, cwd=work)
        try:
            t0 = time.monotonic()
            while True:
                msg = sock.recv(65536).decode()
                if "READY=1" in msg.split("\n"):
                    break
            startup = time.monotonic() - t0
            url = dict(line.split("=", 1) for line in msg.split("\n"))["X_LGEMBED_HTTP"]
            time.sleep(args.idle)
            idle = status_kb(proc.pid)
            version = subprocess.run([args.python, "-m", "lgembed", "--version"], check=False, capture_output=True, text=True, env=env).stdout.strip()
            print(f"{version}; Python {sys.version.split()[0]} (client); service pid {proc.pid}")
            print(f"startup to READY=1: {startup:.2f} s; idle after {args.idle:g} s: VmRSS {mb(idle['VmRSS'])} MB "
                  f"(anon {mb(idle['RssAnon'])}, file {mb(idle['RssFile'])}), threads {idle['Threads']}")  # fmt: skip
            print()
            data_mdb = os.path.join(work, "db", "data.mdb")
            print(f"{'runs':>6} {'VmRSS MB':>9} {'VmHWM MB':>9} {'anon MB':>8} {'file MB':>8} {'data.mdb MB':>12} {'s':>7} {'runs/s':>7}")
            print(f"{0:>6} {mb(idle['VmRSS']):>9} {mb(idle['VmHWM']):>9} {mb(idle['RssAnon']):>8} {mb(idle['RssFile']):>8} "
                  f"{mb(disk_kb(data_mdb)):>12} {0.0:>7.2f} {'':>7}")  # fmt: skip
            client = get_sync_client(url=url, api_key=None)
            thread = None if args.thread_per_run else client.threads.create()["thread_id"]
            samples = []
            start = last = time.monotonic()
            for i in range(1, args.runs + 1):
                tid = client.threads.create()["thread_id"] if args.thread_per_run else thread
                result = client.runs.wait(tid, "counter", input={})
                if not isinstance(result, dict) or "n" not in result:
                    print(f"run {i}: unexpected result {result!r}", file=sys.stderr)
                    return 1
                if i % args.every == 0:
                    now = time.monotonic()
                    s = status_kb(proc.pid)
                    samples.append((s["VmRSS"], s["RssAnon"]))
                    print(f"{i:>6} {mb(s['VmRSS']):>9} {mb(s['VmHWM']):>9} {mb(s['RssAnon']):>8} {mb(s['RssFile']):>8} "
                          f"{mb(disk_kb(data_mdb)):>12} {now - start:>7.2f} {args.every / (now - last):>7.1f}")  # fmt: skip
                    last = now
            if samples:
                (first, first_anon), (final, final_anon) = samples[0], samples[-1]
                runs = max(1, args.runs - args.every)
                print()
                print(f"idle {mb(idle['VmRSS']).strip()} MB; after {args.every} runs {mb(first).strip()} MB; "
                      f"after {args.runs} runs {mb(final).strip()} MB")  # fmt: skip
                print(f"growth from run {args.every} to {args.runs}: VmRSS {(final - first) / 1024:+.1f} MB "
                      f"({(final - first) / runs:+.2f} kB/run), anonymous {(final_anon - first_anon) / 1024:+.1f} MB "
                      f"({(final_anon - first_anon) / runs:+.2f} kB/run); the rest is file-backed: LMDB's "
                      "memory map of data.mdb, which grows with the checkpoints kept")  # fmt: skip
        finally:
            proc.send_signal(signal.SIGTERM)
            try:
                code = proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                code = proc.wait()
            sock.close()
        print(f"service exit status after SIGTERM: {code}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
