#!/usr/bin/env bash
# Disk full during ingestion, for real: the collections live on an 8 MiB tmpfs mounted in a private
# mount namespace (nothing outside this test sees it), filled until a large document cannot fit.
# The CLI and the server must both report it clearly, keep every document indexed before it (searchable,
# the collection consistent), keep serving, and index the document once space is freed.
# usage: disk_full_test.sh KOTAE_BINARY
set -euo pipefail
kotae=$1

if [[ -z ${KOTAE_SMALL_DISK:-} ]]; then
  # As root a mount namespace is enough; otherwise a user namespace maps us to root inside it.
  if [[ $(id -u) -eq 0 ]]; then unshare_args=(-m); else unshare_args=(-r -m); fi
  exec unshare "${unshare_args[@]}" env KOTAE_SMALL_DISK=1 bash "$0" "$@"
fi

fail() { echo "FAIL: $*" >&2; exit 1; }
work=$(mktemp -d /tmp/kotae-disk-full.XXXXXX)
server_pid=
cleanup() {
  [[ -n $server_pid ]] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
  umount "$work/data/collections" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

data=$work/data
mkdir -p "$data/collections"
ln -s "${KOTAE_DATA:-${XDG_DATA_HOME:-$HOME/.local/share}/kotae}/models" "$data/models"
mount -t tmpfs -o size=8m tmpfs "$data/collections" || fail "cannot mount a tmpfs (needs root or user namespaces)"

faq=/usr/share/doc/debian/FAQ
big=/usr/share/doc/debian-reference-en/docs/ch09.en.html  # 380 KB of HTML: several MB indexed
search_hits() {  # collection query → number of hits (CLI)
  "$kotae" search "$2" --collection "$1" --data "$data" --json -k 5 | jq '.hits | length'
}
fill_disk_leaving_kb() {
  rm -f "$data/collections/filler"
  dd if=/dev/zero of="$data/collections/filler" bs=64k status=none 2>/dev/null || true  # until ENOSPC
  local size; size=$(stat -c %s "$data/collections/filler")
  truncate -s $((size - $1 * 1024)) "$data/collections/filler"
}

# --- the CLI ---------------------------------------------------------------------------------------
"$kotae" index "$faq/pkg-basics.en.html" --collection cli --data "$data" >/dev/null
before=$(search_hits cli "what is a virtual package")
[[ $before -ge 3 ]] || fail "the first document is not searchable ($before hits)"
fill_disk_leaving_kb 200
if "$kotae" index "$big" --collection cli --data "$data" >"$work/out.txt" 2>"$work/err.txt"; then
  fail "indexing into a full disk succeeded: $(cat "$work/out.txt")"
fi
grep -qi "full" "$work/err.txt" || fail "the error does not say the disk is full: $(cat "$work/err.txt")"
echo "CLI, disk full: $(grep -i full "$work/err.txt" | head -1)"
[[ $(search_hits cli "what is a virtual package") -eq $before ]] || fail "the first document was lost"
"$kotae" search "backup" --collection cli --data "$data" --json | jq -e '[.hits[].document] | all(test("ch09") | not)' >/dev/null ||
  fail "part of the document that did not fit is searchable"
rm -f "$data/collections/filler"
"$kotae" index "$big" --collection cli --data "$data" >/dev/null || fail "indexing failed after space was freed"
"$kotae" search "backup" --collection cli --data "$data" --json | jq -e '[.hits[].document] | any(test("ch09"))' >/dev/null ||
  fail "the document indexed after freeing space is not found"
[[ $(search_hits cli "what is a virtual package") -eq $before ]] || fail "the first document changed"

# --- the server ------------------------------------------------------------------------------------
"$kotae" serve --data "$data" --port 0 2>"$work/server.log" &
server_pid=$!
port=
for _ in $(seq 1 600); do
  port=$(grep -o '"event":"listening".*' "$work/server.log" | grep -o '"port":[0-9]*' | cut -d: -f2 || true)
  [[ -n $port ]] && curl -sf "http://127.0.0.1:$port/readyz" >/dev/null && break
  kill -0 "$server_pid" 2>/dev/null || fail "the server exited: $(tail -5 "$work/server.log")"
  sleep 0.2
done
[[ -n $port ]] || fail "the server did not start"
api=http://127.0.0.1:$port
curl -sf -X POST "$api/v1/collections" -H 'Content-Type: application/json' -d '{"name": "served"}' >/dev/null
upload() {  # file → job id, or the error response
  curl -s -w '\n%{http_code}' -F "files=@$1" "$api/v1/collections/served/documents"
}
wait_job() {  # job id → final job JSON
  local job
  for _ in $(seq 1 600); do
    job=$(curl -sf "$api/v1/jobs/$1")
    [[ $(jq -r .state <<<"$job") =~ ^(succeeded|failed|cancelled|partial)$ ]] && { echo "$job"; return; }
    sleep 0.2
  done
  fail "job $1 did not finish"
}
served_hits() {
  curl -sf "$api/v1/search" -H 'Content-Type: application/json' -d "{\"collection\": \"served\", \"query\": \"$1\", \"k\": 5}" | jq '.hits | length'
}
reply=$(upload "$faq/pkg-basics.en.html")
[[ $(tail -1 <<<"$reply") == 202 ]] || fail "first upload: $reply"
first=$(wait_job "$(head -1 <<<"$reply" | jq -r .id)")
[[ $(jq -r '.files[0].status' <<<"$first") == indexed ]] || fail "first upload not indexed: $first"
served_before=$(served_hits "what is a virtual package")

fill_disk_leaving_kb 600
reply=$(upload "$big")
status=$(tail -1 <<<"$reply")
if [[ $status == 202 ]]; then
  job=$(wait_job "$(head -1 <<<"$reply" | jq -r .id)")
  [[ $(jq -r '.files[0].status' <<<"$job") == failed ]] || fail "the upload into a full disk did not fail: $job"
  message=$(jq -r '.files[0].error' <<<"$job")
else
  [[ $status == 507 ]] || fail "an upload the disk cannot hold should be 507, not: $reply"
  message=$(head -1 <<<"$reply" | jq -r .error.message)
fi
grep -qi "full" <<<"$message" || fail "the error does not say the disk is full: $message"
echo "server, disk full ($status): $message"
[[ $(served_hits "what is a virtual package") -eq $served_before ]] || fail "the server lost the first document"
curl -sf "$api/healthz" >/dev/null || fail "the server is not healthy"
rm -f "$data/collections/filler"
reply=$(upload "$big")
[[ $(tail -1 <<<"$reply") == 202 ]] || fail "upload after freeing space: $reply"
job=$(wait_job "$(head -1 <<<"$reply" | jq -r .id)")
[[ $(jq -r '.files[0].status' <<<"$job") == indexed ]] || fail "not indexed after freeing space: $job"
kill -0 "$server_pid" || fail "the server died"
echo "disk full survived: CLI and server reported it, lost nothing, indexed the document once space was freed"
