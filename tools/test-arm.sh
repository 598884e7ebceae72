#!/usr/bin/env bash
# The wheels from tools/wheels.sh on an emulated ARM board: a Debian rootfs (mmdebstrap,
# minbase + python3, python3-venv, python3-pip; bookworm = CPython 3.11, trixie = 3.13) run through
# qemu-user-static and binfmt_misc, entered with chroot inside `unshare -m -n` (own mount
# namespace, and a network namespace with no interface but lo: no index is reachable,
# which the run proves with pip before installing). The wheels are installed offline from
# dist/ + wheelhouse/ (+ the test dependencies' wheels, downloaded or cross-built on the
# host and cached), the compiled wheel into one venv and the pure wheel into another.
#
# Usage: bash tools/test-arm.sh aarch64|armv7l|x86_64 [--smoke|--footprint] [--python 3.11|3.13] [-- PYTEST_ARGS]
#   (default)    the whole test suite in both builds: LGEMBED_EXTENSIONS=required with the
#                compiled wheel, =off with the pure wheel; the tests qemu cannot run are
#                deselected, each with its reason printed (tools/arm/qemu-skips.txt)
#   --smoke      offline install + tools/arm/smoke.py in both builds (what CI runs)
#   --footprint  wheel/installed sizes, import + compile time and RSS of lgembed (both
#                builds) and of LangGraph 1.2.22 installed the same way
#   -- PYTEST_ARGS  the suite mode runs these test paths / node ids instead of tests/
#                (e.g. -- tests/test_service_api.py: a quick look at one module, both builds)
#   LGEMBED_ARM_PARALLEL=1 runs the suite's two builds at once (one core each).
#   x86_64 runs the same rootfs natively (no qemu), for the footprint's reference column.
# The rootfs tarball is cached in $LGEMBED_WHEELS_CACHE (default ~/.cache/lgembed-wheels).
# Needs: root, bash tools/wheels.sh run first (dist/, wheelhouse/).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
source "$ROOT/tools/arm/common.sh"
[ $# -ge 1 ] || die "usage: bash tools/test-arm.sh aarch64|armv7l|x86_64 [--smoke|--footprint] [--python 3.11|3.13]"
ARCH=$1; shift
MODE=suite PYVER=3.11 TESTS=()
while [ $# -gt 0 ]; do
  case $1 in
    --smoke) MODE=smoke ;;
    --footprint) MODE=footprint ;;
    --python) PYVER=$2; shift ;;
    --) shift; TESTS=("$@"); break ;;
    *) die "unknown option $1" ;;
  esac
  shift
done
arch_vars "$ARCH"
SUITE=$(suite_of "$PYVER"); TAG=cp${PYVER/./}
T0=$(date +%s)

# --- the artefacts under test ---------------------------------------------------------
CWHL=$(ls "$ROOT"/dist/lgembed-*-"$TAG-$TAG"-*_"$ARCH".whl 2>/dev/null | head -1) || true
PWHL=$(ls "$ROOT"/dist/lgembed-*-py3-none-any.whl 2>/dev/null | head -1) || true
[ -n "$CWHL" ] && [ -n "$PWHL" ] || die "no $TAG $ARCH wheel or pure wheel in dist/: run bash tools/wheels.sh first"
ls "$ROOT"/wheelhouse/msgpack-*-"$TAG"-*_"$ARCH".whl "$ROOT"/wheelhouse/lmdb-*-"$TAG"-*_"$ARCH".whl >/dev/null \
  || die "no msgpack/lmdb $TAG $ARCH wheels in wheelhouse/: run bash tools/wheels.sh first"

if [ "$(cat "$ROOT/dist/.source-key" 2>/dev/null)" != "$(source_key)" ]; then
  echo "WARNING: lgembed's sources changed since tools/wheels.sh built dist/: the tests of this tree" >&2
  echo "         run against older wheels (rerun bash tools/wheels.sh; it is quick when nothing changed)" >&2
fi

# --- qemu + binfmt_misc (not mounted at boot on these machines) ---------------------------
apt_ensure mmdebstrap arch-test zstd
if [ "$ARCH" != x86_64 ]; then
  apt_ensure qemu-user-static binfmt-support
  QEMU=$([ "$ARCH" = armv7l ] && echo arm || echo aarch64)
  mountpoint -q /proc/sys/fs/binfmt_misc || mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
  update-binfmts --enable "qemu-$QEMU" >/dev/null 2>&1 || true
  grep -q '^enabled' "/proc/sys/fs/binfmt_misc/qemu-$QEMU" 2>/dev/null \
    || die "binfmt_misc handler qemu-$QEMU is not enabled (update-binfmts --enable qemu-$QEMU)"
fi

# --- the rootfs (cached as a tarball) ------------------------------------------------------
# suite, footprint: a minbase system installed by dpkg under qemu (maintainer scripts run,
# the stdlib byte-compiled: as on a board; ~6 min cold per arch). smoke (CI): the same
# packages only unpacked (--variant=extract: no dpkg, no maintainer scripts, no emulation;
# ~20 s), which is all an offline pip install and the smoke need, and saves CI ~11 min.
PKGS=python3,python3-venv,python3-pip
# python3-pip: installed (and byte-compiled) once here instead of ensurepip in every venv
VARIANT=minbase
if [ "$MODE" = smoke ]; then
  VARIANT=extract
  # inside.sh's tools (minbase has them anyway); ca-certificates so that pip's offline
  # probe fails on the network, not on a missing CA bundle (built below: no postinst runs)
  PKGS=$PKGS,bash,coreutils,grep,sed,findutils,ca-certificates
fi
ROOTFS=$CACHE/rootfs-$SUITE-$DARCH-$(echo "$PKGS" | sha256sum | cut -c1-8)$([ $VARIANT = extract ] && echo -x || true).tar.zst
if [ ! -f "$ROOTFS" ]; then
  log "creating the $SUITE $DARCH rootfs ($VARIANT: $PKGS), cached as $ROOTFS"
  s=$(date +%s)
  mmdebstrap --quiet --arch="$DARCH" --variant=$VARIANT --include="$PKGS" "$SUITE" "$ROOTFS.part.tar.zst" "$MIRROR" \
    || die "mmdebstrap failed"
  mv "$ROOTFS.part.tar.zst" "$ROOTFS"
  echo "  rootfs: $(( $(date +%s) - s )) s, $(du -h "$ROOTFS" | cut -f1)" >&2
fi
WORK=$(mktemp -d /var/tmp/lgembed-arm.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
R=$WORK/rootfs; mkdir -p "$R"
tar --zstd -xf "$ROOTFS" -C "$R"
if [ $VARIANT = extract ] && [ ! -s "$R/etc/ssl/certs/ca-certificates.crt" ]; then
  # what ca-certificates' postinst (update-ca-certificates) would have written
  mkdir -p "$R/etc/ssl/certs"; cat "$R"/usr/share/ca-certificates/*/*.crt > "$R/etc/ssl/certs/ca-certificates.crt"
fi
L=$R/opt/lg; mkdir -p "$L"/{dist,wheelhouse,testdeps,lgdeps,src}
cp "$CWHL" "$PWHL" "$L/dist/"
# this target's part of the wheelhouse: its platform wheels and the pure ones (the hardware extra)
cp "$ROOT"/wheelhouse/*-"$TAG"-*_"$ARCH".whl "$L/wheelhouse/"
cp "$ROOT"/wheelhouse/*-none-any.whl "$L/wheelhouse/" 2>/dev/null || true
cp "$ROOT"/tools/arm/{inside.sh,smoke.py,footprint.py} "$L/"

# --- wheels for the tests / LangGraph, downloaded for the target (cached) ----------------
PLATS=(--platform "manylinux2014_$ARCH" --platform "manylinux_2_28_$ARCH" --platform "manylinux_2_31_$ARCH"
       --platform "manylinux_2_36_$ARCH" --platform "linux_$ARCH")
# The index has no armv7l wheel of pyyaml (the test extra; langchain-core) nor of zstandard
# (langsmith): those are cross-built from their sdists like msgpack/lmdb in tools/wheels.sh.
target_wheels() {  # target_wheels DIR "SDIST_PROJECTS" REQ...: wheels for this arch/python + deps
  # (pip options such as -c FILE may be among the REQs); dies when pip cannot resolve them
  local dir=$1 from_sdist=$2 p; shift 2
  mkdir -p "$dir"
  if [ "$ARCH" = armv7l ]; then
    for p in $from_sdist; do
      ls "$dir"/"$p"-*.whl >/dev/null 2>&1 && continue
      find_zig
      local d=$WORK/xdep-$p; mkdir -p "$d"
      "$CACHE/dep311/bin/pip" download -q --no-deps --no-binary "$p" --no-build-isolation -d "$d" "$p" 2>&1 \
        | grep -v "^WARNING: Location" || true
      tar -xzf "$d"/*.tar.gz -C "$d"
      log "cross-building $p for armv7l $TAG (no armv7l wheel on the index)"
      xbuild "dep${PYVER/./}" "$PYVER" armv7l "$(ls -d "$d"/*/ | head -1)" "$dir" "$d/build.log"
    done
  fi
  "$CACHE/tools311/bin/pip" download -q --only-binary :all: "${PLATS[@]}" --python-version "$PYVER" \
    --implementation cp --abi "$TAG" --find-links "$dir" -d "$dir" "$@" > "$WORK/download.log" 2>&1 \
    || { grep -v "^WARNING: Location" "$WORK/download.log" | tail -25 >&2; die "no $ARCH $TAG wheels for: $*"; }
}
case $MODE in
  smoke)  # lgembed[hardware] from dist/ + wheelhouse/ alone, as on an offline board
    ls "$ROOT"/wheelhouse/pyserial-*.whl >/dev/null 2>&1 \
      || die "no pyserial (the hardware extra) in wheelhouse/: rerun bash tools/wheels.sh" ;;
  suite)
    TD=$CACHE/testdeps-$TAG-$ARCH
    # the test, pydantic and hardware extras of pyproject.toml
    REQS=$("$CACHE/tools311/bin/python" -c '
import tomllib, sys
extras = tomllib.load(open(sys.argv[1], "rb"))["project"]["optional-dependencies"]
print("\n".join(r for e in ("test", "pydantic", "hardware") for r in extras.get(e, [])))' "$ROOT/pyproject.toml")
    # The same versions as the native suite's .venv (tools/test.sh): left free, pip falls
    # back to older releases where a dependency has no wheel for the target. That happened:
    # without zstandard (langgraph-sdk -> langchain-core -> langsmith) armv7l resolved
    # langgraph-sdk 0.3.15, whose sync runs.wait() ignores a run's error, and a service test
    # failed ("DID NOT RAISE") for a reason that was not lgembed's.
    PINS=""
    if [ -x "$ROOT/.venv/bin/python" ]; then
      PINS=$("$ROOT/.venv/bin/python" - "$REQS" <<'PYEOF'
import re, sys
from importlib import metadata
for req in sys.argv[1].splitlines():
    name = re.match(r"[A-Za-z0-9._-]+", req).group(0)
    try:
        print(f"{name}=={metadata.version(name)}")
    except metadata.PackageNotFoundError:
        pass
PYEOF
)
    fi
    FROM_SDIST="pyyaml zstandard"  # no armv7l wheels on the index (zstandard: langgraph-sdk -> langsmith)
    KEY=$(printf '%s\n--\n%s\n--\n%s\n' "$REQS" "$PINS" "$FROM_SDIST")
    if [ "$(cat "$TD/key.txt" 2>/dev/null)" != "$KEY" ]; then
      log "test dependencies for $ARCH $TAG"
      rm -rf "$TD"; mkdir -p "$TD"
      mapfile -t R_ARR <<< "$REQS"
      printf '%s\n' "$PINS" > "$WORK/pins.txt"
      target_wheels "$TD" "$FROM_SDIST" -c "$WORK/pins.txt" "${R_ARR[@]}"
      echo "$REQS" > "$TD/requirements.txt"
      echo "$KEY" > "$TD/key.txt"
    fi
    [ -z "$PINS" ] || echo "test dependencies pinned to the native .venv's: $(echo $PINS | tr ' ' ' ')" >&2
    cp "$TD"/*.whl "$TD/requirements.txt" "$L/testdeps/" ;;
  footprint)
    LD=$CACHE/langgraph-$TAG-$ARCH
    if [ ! -f "$LD/.complete" ]; then
      log "LangGraph 1.2.22 and its dependencies for $ARCH $TAG"
      rm -rf "$LD"; target_wheels "$LD" "pyyaml zstandard" "langgraph==1.2.22"
      ls "$LD"/langgraph-1.2.22-*.whl >/dev/null 2>&1 || die "LangGraph 1.2.22 cannot be resolved for $ARCH $TAG"
      touch "$LD/.complete"
    fi
    cp "$LD"/*.whl "$L/lgdeps/" ;;
esac

# --- the source tree's tests (not the package: the tests see the installed one) -----------
# (the suite only: the smoke and the footprint run the installed wheels and nothing else)
if [ "$MODE" = suite ]; then
  (cd "$ROOT" && git ls-files -z --cached --others --exclude-standard -- tests setup.py pyproject.toml examples tools docs firmware-bridge README.md BENCHMARKS.md \
     | tar --null -T - --ignore-failed-read -cf - 2>/dev/null) | tar -xf - -C "$L/src"
fi
printf '%s\n' "${TESTS[@]:-tests}" > "$L/tests.txt"
# tests qemu-user cannot run: deselected, reasons printed
: > "$L/deselect.txt"
if [ "$MODE" = suite ] && [ "$ARCH" != x86_64 ]; then
  echo "Deselected under qemu-user (tools/arm/qemu-skips.txt):" >&2
  while IFS= read -r line; do
    case $line in ''|'#'*) continue ;; esac
    # "ARCH: NODE_ID  REASON" applies to that architecture only
    case $line in
      aarch64:*|armv7l:*) [ "${line%%:*}" = "$ARCH" ] || continue; line=${line#*: } ;;
    esac
    id=${line%%  *}; reason=${line#*  }
    echo "  $id -- ${reason#"${reason%%[![:space:]]*}"}" >&2
    printf -- '--deselect %s\n' "$id" >> "$L/deselect.txt"
  done < "$ROOT/tools/arm/qemu-skips.txt"
fi

# --- run, with no network ------------------------------------------------------------------
log "$MODE on $ARCH ($SUITE, CPython $PYVER) $([ "$ARCH" = x86_64 ] && echo native || echo "under qemu-$QEMU")"
s=$(date +%s)
rc=0
unshare -m -n --propagation private /bin/bash -c '
  R=$1; shift
  mount -t proc proc "$R/proc" && mount -t sysfs sys "$R/sys" && mount --rbind /dev "$R/dev" \
    && mount -t tmpfs tmp "$R/tmp" && mount -t tmpfs shm "$R/dev/shm" || exit 99
  ip link set lo up 2>/dev/null || true   # loopback only: tests may talk to themselves
  exec chroot "$R" /usr/bin/env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    LANG=C.UTF-8 LANGGRAPH_VERSION=1.2.22 LGEMBED_SUITE_TIMEOUT="${LGEMBED_SUITE_TIMEOUT:-5400}" \
    LGEMBED_ARM_PARALLEL="${LGEMBED_ARM_PARALLEL:-0}" /bin/bash /opt/lg/inside.sh "$@"
' _ "$R" "$MODE" || rc=$?
echo "  $MODE: $(( $(date +%s) - s )) s in the rootfs; total $(( $(date +%s) - T0 )) s" >&2
if [ "$MODE" = footprint ]; then
  echo "wheels: lgembed $(du -k "$CWHL" | cut -f1) kB compiled, $(du -k "$PWHL" | cut -f1) kB pure;" \
       "msgpack+lmdb $(cat "$L"/wheelhouse/{msgpack,lmdb}-*.whl | wc -c | awk '{print int($1/1024)}') kB;" \
       "langgraph + deps $(cat "$L"/lgdeps/*.whl | wc -c | awk '{print int($1/1024)}') kB ($(ls "$L"/lgdeps/*.whl | wc -l) wheels)"
fi
[ $rc -eq 0 ] || die "$MODE on $ARCH failed (exit $rc)"
echo "$MODE on $ARCH: passed" >&2
