#!/usr/bin/env bash
# limits.130: the UBSan ignore list of clang sanitizer builds (cmake/ubsan-ignorelist.txt) is both
# needed and narrow. The probe is compiled with clang's UBSan as the fuzz build compiles it:
#  - without the list, reading and writing JSON through rapidjson is reported at stack.h (the
#    finding of the first fuzz run, so this test would have caught it);
#  - with the list, the same run is clean, and a null-pointer offset in the probe's own code is
#    still reported (only rapidjson's Stack::Reserve is exempt, and only from that one check).
# Usage: ubsan_scope_test.sh CLANG++ SOURCE_DIR WORK_DIR
set -euo pipefail
cxx=$1 src=$2 work=$3
mkdir -p "$work"
flags=(-std=c++20 -O1 -g1 -fsanitize=undefined -fno-sanitize-recover=all -DRAPIDJSON_HAS_STDSTRING=1
       -I"$src/wire/include" "$src/tests/fuzz/ubsan_scope_probe.cpp")
"$cxx" "${flags[@]}" -o "$work/probe_plain"
"$cxx" "${flags[@]}" -fsanitize-ignorelist="$src/cmake/ubsan-ignorelist.txt" -o "$work/probe_listed"

fail() { echo "ubsan_scope_test: $*" >&2; exit 1; }
if "$work/probe_plain" json >"$work/plain.out" 2>&1; then
  fail "without the ignore list the rapidjson run was clean; the list may be obsolete"
fi
grep -q "rapidjson/internal/stack.h:.*applying non-zero offset .* to null pointer" "$work/plain.out" ||
  fail "without the list, expected the stack.h report, got: $(cat "$work/plain.out")"

"$work/probe_listed" json >"$work/listed.out" 2>&1 ||
  fail "with the ignore list the rapidjson run is still reported: $(cat "$work/listed.out")"
grep -qx '{"messages":\[{"role":"user","content":\[1,2.5,"x"\]}\]}' "$work/listed.out" ||
  fail "with the list the probe wrote: $(cat "$work/listed.out")"

if "$work/probe_listed" own >"$work/own.out" 2>&1; then
  fail "with the ignore list a null-pointer offset in our own code went unreported"
fi
grep -q "ubsan_scope_probe.cpp:.*applying non-zero offset .* to null pointer" "$work/own.out" ||
  fail "expected the probe's own report, got: $(cat "$work/own.out")"
echo "ubsan_scope_test: the ignore list is needed and exempts only rapidjson's Stack::Reserve"
