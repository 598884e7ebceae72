#!/bin/sh
# size_report.sh BUILD_DIR TARGET LABEL -- prints the flash and RAM figures of
# `make cortex-m` for one target (called by the Makefile).
#
# Flash = text + data, RAM = data + bss (arm-none-eabi-size's columns).
#  - per object: each library source compiled alone (includes functions a
#    firmware may never link);
#  - linked core: tests/size_probe.c, a firmware that uses the whole UART
#    endpoint, linked with --gc-sections: library code (symbols whose debug info
#    points into src/), plus the libc/libgcc helpers it pulls in, plus ~0.1 KB
#    of probe code; also with -flto;
#  - RAM: sizeof the context structs (no static variables in the library);
#  - the example firmware (examples/sensor_node) as linked.
set -eu
B=$1
T=$2
LABEL=$3
SIZE=${ARM_SIZE:-arm-none-eabi-size}
NM=${ARM_NM:-arm-none-eabi-nm}
D=$B/$T

echo
echo "== $LABEL"
echo "-- library objects (text+data = flash, bss = RAM; each compiled alone):"
core=0
for o in lgb_cobs lgb_crc16 lgb_frame lgb_ring lgb_mp lgb_link lgb_isotp lgb_msg; do
    set -- $($SIZE "$D/$o.o" | tail -1)
    flash=$(($1 + $2))
    case $o in lgb_isotp|lgb_msg) ;; *) core=$((core + flash)) ;; esac
    printf "   %-10s flash %5d  RAM %3d\n" "$o" "$flash" "$(($2 + $3))"
done
echo "   core (cobs+crc16+frame+ring+mp+link, whole objects): flash $core bytes"

# mawk has no strtonum: hex -> decimal by hand.
HEX='function hex(s,  i, v, c) { v = 0; s = tolower(s); for (i = 1; i <= length(s); i++) { c = index("0123456789abcdef", substr(s, i, 1)) - 1; v = v * 16 + c } return v }'

linked() {
    elf=$1
    set -- $($SIZE "$elf" | tail -1)
    total=$(($1 + $2))
    lib=$($NM -S -l --size-sort "$elf" 2>/dev/null | awk "$HEX"' $3 ~ /^[tTrR]$/ && $0 ~ /\/src\/lgb_/ {s += hex($2)} END {print s + 0}' 2>/dev/null || echo "?")
    libc=$($NM -S --size-sort "$elf" | awk "$HEX"' $3 ~ /^[tT]$/ && $4 ~ /^(mem|str|__aeabi|__udiv|__div|__gnu|__ashl|__lshr|__mul|__clz)/ {s += hex($2)} END {print s + 0}' 2>/dev/null || echo "?")
    echo "$total $lib $libc"
}
set -- $(linked "$D/size_probe.elf")
echo "-- linked core (size_probe: the whole UART endpoint, --gc-sections):"
echo "   library code $2 bytes + libc/libgcc helpers $3 bytes; firmware total flash $1 bytes"
set -- $(linked "$D/size_probe_lto.elf")
echo "   with -flto: firmware total flash $1 bytes (library + helpers + probe, inlined together)"

echo "-- RAM (context structs; the library has no static data):"
$NM -S "$D/ram_probe.o" | awk "$HEX"' {printf "   %-16s %5d bytes\n", $4, hex($2)}' | sed 's/lgb_probe_link /lgb_link_t      /; s/lgb_probe_ring /lgb_ring_t      /; s/lgb_probe_isotp/lgb_isotp_t     /'

set -- $($SIZE "$D/sensor_node.elf" | tail -1)
echo "-- example firmware examples/sensor_node ($D/sensor_node.elf):"
echo "   flash $(($1 + $2)) bytes (text $1 + data $2), RAM $(($2 + $3)) bytes (data $2 + bss $3; plus the stack)"
