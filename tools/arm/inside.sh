#!/bin/bash
# Runs INSIDE the emulated rootfs (chroot, own network namespace: no network), started by
# tools/test-arm.sh. Layout: /opt/lg/{dist,wheelhouse,testdeps,lgdeps,src,*.py}.
# Usage: inside.sh smoke|suite|footprint
set -euo pipefail
MODE=$1
cd /opt/lg
PY=python3
SITE=lib/$($PY -c 'import sys; print(f"python{sys.version_info[0]}.{sys.version_info[1]}")')/site-packages
now() { date +%s; }

echo "== inside: $(uname -m), $($PY -V), Debian $(cat /etc/debian_version) =="
echo "-- no network: interfaces $(tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | tr '\n' ' '); routes: $(($(wc -l < /proc/net/route) - 1))"
s=$(now)
# venvs without pip (ensurepip under qemu costs a minute): Debian's pip installs into them
$PY -m venv --without-pip /opt/venv-c
$PY -m venv --without-pip /opt/venv-py
echo "-- venvs: $(( $(now) - s )) s"
# prove that no index is reachable: the ordinary client, the ordinary registry
if $PY -m pip download -vv --no-deps --timeout 5 --retries 0 -d /tmp/probe msgpack > /tmp/probe.log 2>&1; then
  echo "FAIL: pip reached a package index from inside the rootfs"; exit 1
fi
# ... and fails for the right reason: no connection (not a broken pip or CA bundle)
if ! grep -qE "NewConnectionError|Failed to establish a new connection|name resolution|Network is unreachable" /tmp/probe.log; then
  echo "FAIL: 'pip download msgpack' failed, but not for want of a network:"; tail -5 /tmp/probe.log; exit 1
fi
echo "-- offline proven: 'pip download msgpack' fails:"
grep -E "^Could not fetch URL|^ERROR: No matching" /tmp/probe.log | head -2 | cut -c1-200 | sed 's/^/     /'
$PY - <<'PYEOF'
import socket
try:
    socket.getaddrinfo("pypi.org", 443)
except OSError as e:
    print(f"     socket.getaddrinfo('pypi.org', 443): {e}")
else:
    raise SystemExit("FAIL: pypi.org resolves inside the rootfs")
PYEOF


pip_into() {  # pip_into VENV ARGS...: an offline install into VENV
  local v=$1; shift
  $PY -m pip --python "$v/bin/python" install -q --no-index --disable-pip-version-check "$@"
}
EXTRA=() SPEC_C=lgembed SPEC_PY=$(ls /opt/lg/dist/lgembed-*-py3-none-any.whl)
case $MODE in
  # the hardware extra (the smoke's UART check needs pyserial) from the wheelhouse alone
  smoke) SPEC_C="lgembed[hardware]" SPEC_PY="$SPEC_PY[hardware]" ;;
  suite) EXTRA=(-r /opt/lg/testdeps/requirements.txt) ;;
esac
s=$(now)
# the compiled build: pip picks the platform wheel from dist/ by itself
pip_into /opt/venv-c --find-links /opt/lg/dist --find-links /opt/lg/wheelhouse --find-links /opt/lg/testdeps "$SPEC_C" "${EXTRA[@]}"
# the pure build: the py3-none-any wheel named explicitly, into the second venv
pip_into /opt/venv-py --find-links /opt/lg/wheelhouse --find-links /opt/lg/testdeps "$SPEC_PY" "${EXTRA[@]}"
echo "-- offline installs (both venvs): $(( $(now) - s )) s"
echo "-- compiled venv: $($PY -m pip --python /opt/venv-c/bin/python list --disable-pip-version-check 2>/dev/null | grep -iE '^(lgembed|msgpack|lmdb|pyserial) ' | tr -s ' ' | tr '\n' ';')"
ls /opt/venv-c/$SITE/lgembed/pregel/main.*.so >/dev/null || { echo "FAIL: compiled wheel not installed"; exit 1; }
if ls /opt/venv-py/$SITE/lgembed/pregel/main.*.so >/dev/null 2>&1; then echo "FAIL: pure venv has extensions"; exit 1; fi

case $MODE in
  smoke)
    cd /tmp
    LGEMBED_EXTENSIONS=required /opt/venv-c/bin/python /opt/lg/smoke.py /tmp/smoke-c
    LGEMBED_EXTENSIONS=off /opt/venv-py/bin/python /opt/lg/smoke.py /tmp/smoke-py
    ;;
  suite)
    run_build() {  # run_build c|py: the whole suite against one installed build
      local kind=$1 mode=required src=/opt/lg/src-$1 s
      [ "$kind" = py ] && mode=off
      cp -a /opt/lg/src "$src"
      # tests read the package's sources and put the tree on PYTHONPATH for their
      # subprocesses: the tree's lgembed/ is the installed package of this build
      ln -sfn "/opt/venv-$kind/$SITE/lgembed" "$src/lgembed"
      echo "== suite, $kind build (LGEMBED_EXTENSIONS=$mode) =="
      s=$(now)
      (cd "$src" && LGEMBED_UNDER_QEMU=1 LGEMBED_EXTENSIONS=$mode PYTHONDONTWRITEBYTECODE=1 \
        timeout "${LGEMBED_SUITE_TIMEOUT:-5400}" "/opt/venv-$kind/bin/python" -m pytest -q -rs -p no:cacheprovider \
        -o faulthandler_timeout=600 $(cat /opt/lg/deselect.txt) $(cat /opt/lg/tests.txt))
      local rc=$?
      echo "-- suite $kind: $(( $(now) - s )) s, exit $rc"
      return $rc
    }
    rc=0
    if [ "${LGEMBED_ARM_PARALLEL:-0}" = 1 ]; then
      # both builds at once (one core each); their outputs follow each other at the end
      run_build c > /tmp/suite-c.log 2>&1 & pc=$!
      run_build py > /tmp/suite-py.log 2>&1 & pp=$!
      wait $pc || rc=1
      wait $pp || rc=1
      cat /tmp/suite-c.log /tmp/suite-py.log
    else
      run_build c || rc=1
      run_build py || rc=1
    fi
    exit $rc
    ;;
  footprint)
    # LangGraph installed the same way, offline, into its own venv
    $PY -m venv --without-pip /opt/venv-lg
    pip_into /opt/venv-lg --find-links /opt/lg/lgdeps "langgraph==${LANGGRAPH_VERSION:-1.2.22}"
    for kind in c py lg; do
      mode=required; [ $kind = py ] && mode=off
      pkg=lgembed; [ $kind = lg ] && pkg=langgraph
      size=$(du -sk --exclude=__pycache__ /opt/venv-$kind/$SITE | cut -f1)
      sizec=$(du -sk /opt/venv-$kind/$SITE | cut -f1)
      (cd /tmp && LGEMBED_EXTENSIONS=$mode /opt/venv-$kind/bin/python /opt/lg/footprint.py $pkg 5) \
        | sed "s/^{/{\"build\": \"$kind\", \"installed_kb\": $size, \"installed_with_pyc_kb\": $sizec, /"
    done
    ;;
esac
