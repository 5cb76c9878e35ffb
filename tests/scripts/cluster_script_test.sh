#!/usr/bin/env bash
# scripts/cluster up|status|down on the fixture's data (models and the faq collection): the cluster
# comes up behind HAProxy with the collection copied into PostgreSQL, serves the web page and searches
# from both replicas, indexes an upload through its workers, loses only the requests in flight on a
# replica SIGKILLed during a load run, and goes down.
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
  [ "$failed" -eq 0 ] || exit 1  # an EXIT trap's exit sets the script's status
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
# An upload through HAProxy: queued by a replica, indexed by a worker, found by search.
printf '# Ferries\n\nThe xylofjord ferry sails at dawn.\n' >"$work/ferry.md"
job=$(curl -sf "${url}v1/collections/faq/documents" -F "files=@$work/ferry.md;filename=ferry.md" | jq -r .id)
state=
for _ in $(seq 300); do
  state=$(curl -sf "${url}v1/jobs/$job" | jq -r .state)
  [ "$state" = queued ] || [ "$state" = running ] || break
  sleep 0.1
done
check "an upload through HAProxy is indexed by a worker" test "$state" = succeeded
check "a worker logged it" bash -c "grep -hq '\"file_done\"' '$work/cluster/worker-1.log' '$work/cluster/worker-2.log'"
found() {  # on both replicas (HAProxy alternates), each following the store's change log
  for _ in $(seq 50); do
    curl -sf "${url}v1/search" -H 'Content-Type: application/json' -d '{"collection":"faq","query":"xylofjord","mode":"bm25"}' |
      grep -q ferry.md && return 0
    sleep 0.1
  done
  return 1
}
check "found through HAProxy" found

# A load run of 4 clients; replica 1 is SIGKILLed in the middle of it. Only the requests it held at
# that moment (at most one per client) may fail: HAProxy sends the rest to replica 2.
load() { local lost=0; for _ in $(seq 200); do search >/dev/null || lost=$((lost + 1)); done; echo "$lost" >"$1"; }
for client in 1 2 3 4; do load "$work/lost-$client" & done
sleep 1
running=$(jobs -r | wc -l)
kill -9 "$(cat "$work/cluster/replica-1.pid")"
wait
lost=$(( $(cat "$work"/lost-* | paste -sd+) ))
echo "     load run: $lost of 800 requests failed, replica 1 killed with $running clients running"
check "the replica was killed during the load run" test "$running" -eq 4
check "only the requests in flight on the killed replica failed (at most 4 of 800)" test "$lost" -le 4
check "status says replica 1 is down" bash -c "! '$root/scripts/cluster' status"
"$root/scripts/cluster" down >/dev/null 2>&1
check "down: nothing left running" bash -c "! '$root/scripts/cluster' status && ! curl -sf '$url/readyz'"
