#!/usr/bin/env bash
# fuzz-bridge-c.sh -- libFuzzer run of the firmware bridge's C parsers
# (firmware-bridge/fuzz/fuzz_decoder.c: frame decoder, msgpack reader and
# payload schemas, ISO-TP reassembly, the whole MCU endpoint).
#
#   tools/fuzz-bridge-c.sh                 short run (100000 inputs, CI)
#   tools/fuzz-bridge-c.sh --runs 1000000  long run
#   tools/fuzz-bridge-c.sh --time 600      run for 600 s instead
#   tools/fuzz-bridge-c.sh --jobs 2 ...    parallel workers (libFuzzer -jobs/-workers)
#
# Builds with `make -C firmware-bridge fuzz` (clang with libFuzzer, ASan, UBSan;
# Debian: clang libclang-rt-14-dev). The seed corpus is made from the test
# vectors; new inputs go to firmware-bridge/build/fuzz/corpus (not committed).
# Exits non-zero on a crash, a hang (-timeout), a leak or a sanitizer report;
# the reproducer is left in firmware-bridge/build/fuzz/ (crash-*, timeout-*).
set -euo pipefail
cd "$(dirname "$0")/.."

RUNS=100000
SECONDS_LIMIT=0
JOBS=1
while [ $# -gt 0 ]; do
    case "$1" in
        --runs) RUNS=$2; shift 2 ;;
        --time) SECONDS_LIMIT=$2; shift 2 ;;
        --jobs) JOBS=$2; shift 2 ;;
        -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
        *) echo "fuzz-bridge-c.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
done

FB=firmware-bridge
OUT=$FB/build/fuzz
make -C "$FB" fuzz >/dev/null
mkdir -p "$OUT/corpus" "$OUT/seeds"

# Seeds: every hex field of the vector files (frames, payloads, CAN frames).
python3 - "$FB/tests/vectors" "$OUT/seeds" <<'PY'
import os, re, sys, hashlib
src, dst = sys.argv[1], sys.argv[2]
n = 0
for name in sorted(os.listdir(src)):
    for line in open(os.path.join(src, name), encoding="utf-8"):
        if line.startswith("#"):
            continue
        for field in line.split()[2:]:
            field = field.lstrip("<>")
            if len(field) >= 2 and len(field) % 2 == 0 and re.fullmatch(r"[0-9a-f]+", field):
                data = bytes.fromhex(field)
                with open(os.path.join(dst, hashlib.sha1(data).hexdigest()), "wb") as fh:
                    fh.write(data)
                n += 1
print(f"fuzz-bridge-c: {n} seed inputs from the vectors")
PY

ARGS=(-max_len=1024 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$OUT/")
if [ "$SECONDS_LIMIT" -gt 0 ]; then
    ARGS+=(-max_total_time="$SECONDS_LIMIT")
else
    ARGS+=(-runs="$RUNS")
fi
if [ "$JOBS" -gt 1 ]; then
    ARGS+=(-jobs="$JOBS" -workers="$JOBS")
fi
start=$(date +%s)
set +e
"$OUT/fuzz_decoder" "${ARGS[@]}" "$OUT/corpus" "$OUT/seeds" 2>&1 | tee "$OUT/last-run.log" | grep -E "^#[0-9]+[[:space:]]+(INITED|DONE)|Done [0-9]+ runs|stat::|ERROR|SUMMARY|crash-|timeout-|leak" 
rc=${PIPESTATUS[0]}
set -e
end=$(date +%s)
echo "fuzz-bridge-c: exit $rc after $((end - start)) s (full log: $OUT/last-run.log)"
exit "$rc"
