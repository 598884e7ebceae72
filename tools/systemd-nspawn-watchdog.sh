#!/bin/bash
# Boots `lgembed serve` once under a real systemd (PID 1 in `systemd-nspawn -b`) with the
# unit `lgembed unit` generates, and shows that systemd's watchdog kills and restarts a
# service whose graph node hangs.
#
# Why: tests/test_unit.py checks the unit statically (systemd-analyze verify/security);
# only a real systemd shows that the hardened unit lets the service start (Type=notify
# READY=1 under the sandbox: MemoryDenyWriteExecute, SystemCallFilter, ProtectSystem ...),
# that the service's WATCHDOG=1 pets reach systemd, and that a hung node stops them.
# Not run by CI (needs root, systemd-nspawn, mmdebstrap and the Debian mirror).
#
# Usage: sudo tools/systemd-nspawn-watchdog.sh [WORKDIR]     (default /tmp/lgembed-nspawn)
#   WORKDIR/rootfs is built once (mmdebstrap, ~30 s) and reused; delete it to rebuild.
# Host packages: systemd-container (systemd-nspawn) and mmdebstrap:
#   apt-get install -y --no-install-recommends systemd-container mmdebstrap
#
# What happens inside: a minbase bookworm with systemd, python3, python3-msgpack and
# python3-lmdb; lgembed's working tree (Python sources only, so the pure build:
# LGEMBED_EXTENSIONS=off) under /opt/lgembed with PYTHONPATH in a drop-in; a service config
# serving tools/nspawn/hang_graph.py (its node hangs on the 3rd run of a process) with an
# interval trigger every second and step_timeout = 3; the unit from `python3 -m lgembed unit
# --config /etc/lgembed/service.toml --watchdog 4`; a probe unit that waits for a restart,
# writes `systemctl show` and the service's journal to /result.txt and powers off.
# Exit status 0 when NRestarts >= 1 and the journal has "Watchdog timeout".

set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(dirname "$HERE")"
WORK="${1:-/tmp/lgembed-nspawn}"
ROOTFS="$WORK/rootfs"
MIRROR="${MIRROR:-http://deb.debian.org/debian}"
BOOT_TIMEOUT="${BOOT_TIMEOUT:-180}"

die() { echo "systemd-nspawn-watchdog: $*" >&2; exit 2; }
[ "$(id -u)" = 0 ] || die "needs root (systemd-nspawn and mmdebstrap)"
command -v systemd-nspawn >/dev/null || die "systemd-nspawn missing: apt-get install -y --no-install-recommends systemd-container"
command -v mmdebstrap >/dev/null || die "mmdebstrap missing: apt-get install -y --no-install-recommends mmdebstrap"

mkdir -p "$WORK"
if [ ! -x "$ROOTFS/usr/bin/python3" ]; then
    echo "== building $ROOTFS (minbase bookworm + systemd + python3-msgpack + python3-lmdb)"
    rm -rf "$ROOTFS"
    mmdebstrap --quiet --variant=minbase \
        --include=systemd,systemd-sysv,dbus,passwd,python3,python3-msgpack,python3-lmdb \
        bookworm "$ROOTFS" "$MIRROR"
fi

echo "== installing lgembed's sources, the graph, the config and the units"
rm -rf "$ROOTFS/opt/lgembed" "$ROOTFS/var/lib/lgembed" "$ROOTFS/result.txt"
mkdir -p "$ROOTFS/opt/lgembed/src" "$ROOTFS/etc/lgembed"
# Python sources only: the compiled build on this host is for its own Python
(cd "$REPO" && find lgembed -name '*.py' -print0 | tar --null -cf - -T -) | tar -xf - -C "$ROOTFS/opt/lgembed/src"
cp "$REPO/tools/nspawn/hang_graph.py" "$ROOTFS/opt/lgembed/hang_graph.py"
chmod -R a+rX "$ROOTFS/opt/lgembed"

cat > "$ROOTFS/etc/lgembed/service.toml" <<'EOF'
[service]
db = "/var/lib/lgembed"
http = "127.0.0.1:8123"
step_timeout = 3.0     # a superstep longer than this stops the watchdog pets
stop_timeout = 5.0

[graphs.hang]
path = "/opt/lgembed/hang_graph.py:graph"

[[triggers]]
kind = "interval"
graph = "hang"
thread = "tick"
every = 1.0
EOF

chroot "$ROOTFS" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
    sh -c 'id lgembed >/dev/null 2>&1 || useradd --system --home-dir /var/lib/lgembed --shell /usr/sbin/nologin lgembed'
chroot "$ROOTFS" /usr/bin/env -i PATH=/usr/bin:/bin PYTHONPATH=/opt/lgembed/src LGEMBED_EXTENSIONS=off \
    python3 -m lgembed unit --config /etc/lgembed/service.toml --watchdog 4 \
    > "$ROOTFS/etc/systemd/system/lgembed.service"
mkdir -p "$ROOTFS/etc/systemd/system/lgembed.service.d"
cat > "$ROOTFS/etc/systemd/system/lgembed.service.d/source-tree.conf" <<'EOF'
# lgembed is not pip-installed in this rootfs: its sources are under /opt/lgembed/src (pure build)
[Service]
Environment=PYTHONPATH=/opt/lgembed/src LGEMBED_EXTENSIONS=off
EOF

cat > "$ROOTFS/usr/local/bin/lgembed-probe" <<'EOF'
#!/bin/sh
# waits (at most 90 s) until the watchdog has restarted lgembed.service, then reports and powers off
i=0
while [ $i -lt 90 ]; do
    n=$(systemctl show -p NRestarts --value lgembed.service)
    [ "${n:-0}" -ge 1 ] && break
    sleep 1; i=$((i + 1))
done
sleep 3   # let the restarted service report READY=1
{
    echo "== systemctl show lgembed.service"
    systemctl show -p NRestarts -p ActiveState -p SubState -p Result -p StatusText -p WatchdogUSec -p User lgembed.service
    echo "== journalctl -b -u lgembed.service (this boot)"
    journalctl -b -u lgembed.service --no-pager -o short-monotonic
} > /result.txt 2>&1
systemctl poweroff
EOF
chmod 755 "$ROOTFS/usr/local/bin/lgembed-probe"
cat > "$ROOTFS/etc/systemd/system/lgembed-probe.service" <<'EOF'
[Unit]
Description=Reports whether the watchdog restarted lgembed.service
After=lgembed.service

[Service]
Type=oneshot
ExecStart=/usr/local/bin/lgembed-probe

[Install]
WantedBy=multi-user.target
EOF
systemctl --root="$ROOTFS" --quiet enable lgembed.service lgembed-probe.service

echo "== the generated unit"
cat "$ROOTFS/etc/systemd/system/lgembed.service"

echo "== booting (systemd as PID 1; up to ${BOOT_TIMEOUT} s)"
start=$(date +%s)
timeout "$BOOT_TIMEOUT" systemd-nspawn -D "$ROOTFS" --register=no --keep-unit -b --console=pipe \
    > "$WORK/boot.log" 2>&1 || true
echo "   booted and powered off in $(( $(date +%s) - start )) s (console log: $WORK/boot.log)"

[ -f "$ROOTFS/result.txt" ] || { tail -30 "$WORK/boot.log"; die "no /result.txt: the probe did not run"; }
echo "== result"
cat "$ROOTFS/result.txt"

restarts=$(sed -n 's/^NRestarts=//p' "$ROOTFS/result.txt")
if [ "${restarts:-0}" -ge 1 ] && grep -q "Watchdog timeout" "$ROOTFS/result.txt"; then
    echo "== PASS: the watchdog killed the hung service and systemd restarted it (NRestarts=$restarts)"
    exit 0
fi
echo "== FAIL: NRestarts=${restarts:-?}; 'Watchdog timeout' $(grep -c 'Watchdog timeout' "$ROOTFS/result.txt" || true) time(s) in the journal"
exit 1
