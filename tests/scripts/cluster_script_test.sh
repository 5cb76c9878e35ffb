#!/usr/bin/env bash
# scripts/cluster up|status|down on the fixture's data (models and the faq collection): the cluster
# comes up behind HAProxy with the collection copied into PostgreSQL, serves the web page and searches
# from both replicas, keeps answering through HAProxy when one replica is SIGKILLed, and goes down.
# Usage: cluster_script_test.sh KOTAE_BINARY FIXTURE_DATA_DIR
set -uo pipefail
binary=$1 fixture=$2
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d /tmp/kotae-cluster-script.XXXXXX)
chmod 755 "$work"
export KOTAE_BINARY=$binary KOTAE_CLUSTER_DIR=$work/cluster KOTAE_CLUSTER_PORT=$((20000 + $$ % 20000))
# A data folder of its own: the fixture's models (linked) and its faq collection (copied).
export KOTAE_DATA=$work/data
mkdir -p "$KOTAE_DATA/collections"
ln -s "$(realpath "$fixture/models")" "$KOTAE_DATA/models"
cp -r "$fixture/collections/faq" "$KOTAE_DATA/collections/"
passed=0 failed=0
check() {  # check NAME COMMAND...
  if "${@:2}" >/dev/null 2>&1; then echo "ok   $1"; passed=$((passed + 1)); else echo "FAIL $1"; failed=$((failed + 1)); fi
}
finish() {
  "$root/scripts/cluster" down >/dev/null 2>&1
  [ "$failed" -gt 0 ] && tail -n 20 "$work"/cluster/*.log >&2
  rm -rf "$work"
  echo "$passed passed, $failed failed"
  [ "$failed" -eq 0 ]
}
trap finish EXIT

url=$("$root/scripts/cluster" up 2>"$work/up.log" | tail -n 1)
check "scripts/cluster up prints the URL" test "$url" = "http://127.0.0.1:$KOTAE_CLUSTER_PORT/"
check "status: every part running" "$root/scripts/cluster" status
search() { curl -sf "$url/v1/search" -H 'Content-Type: application/json' -d '{"collection":"faq","query":"virtual package","k":3}'; }
check "the web page through HAProxy" bash -c "curl -sf '$url' | grep -q '<html'"
check "faq was copied into PostgreSQL and is listed" bash -c "curl -sf '${url}v1/collections' | grep -q '\"faq\"'"
for _ in $(seq 10); do search >/dev/null; done
check "both replicas served searches" bash -c "grep -q '/v1/search' '$work/cluster/replica-1.log' && grep -q '/v1/search' '$work/cluster/replica-2.log'"
kill -9 "$(cat "$work/cluster/replica-1.pid")"
sleep 3  # HAProxy's check (every second, down after two failures) takes the replica out
ok=0
for _ in $(seq 20); do search | grep -q '"hits"' && ok=$((ok + 1)); done
check "with replica 1 killed, 20 of 20 searches through HAProxy answer" test "$ok" -eq 20
check "status says replica 1 is down" bash -c "! '$root/scripts/cluster' status"
"$root/scripts/cluster" down >/dev/null 2>&1
check "down: nothing left running" bash -c "! '$root/scripts/cluster' status && ! curl -sf '$url/readyz'"
