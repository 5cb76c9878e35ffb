#!/usr/bin/env bash
# setup must stop, with a clear message, on any artifact whose SHA-256 is not the pinned one.
set -u
source "$(dirname "$0")/../../scripts/lib/common.sh"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

printf 'pinned bytes' >"$tmp/artifact"
good=$(sha256_of "$tmp/artifact")
( verify_sha256 "$tmp/artifact" "$good" ) 2>/dev/null || fail "the right checksum was refused"

printf 'tampered bytes' >"$tmp/artifact"
out=$( ( verify_sha256 "$tmp/artifact" "$good" ) 2>&1 ) && fail "a tampered file was accepted"
grep -q "checksum mismatch for $tmp/artifact" <<<"$out" || fail "no clear message: $out"
grep -q "expected sha256 $good" <<<"$out" || fail "message lacks the expected checksum: $out"

out=$( ( lock_field no-such-artifact 5 ) 2>&1 ) && fail "an unknown artifact name was accepted"
grep -q "no artifact 'no-such-artifact'" <<<"$out" || fail "no clear message: $out"
[ "$(lock_field onnxruntime 4)" = "0.4.9" ] || fail "lock file lookup is broken"
