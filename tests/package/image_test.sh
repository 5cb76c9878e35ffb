#!/usr/bin/env bash
# The container image proven: built by scripts/image from the .deb, its configuration and layers
# checked with skopeo (a non-root user, /var/lib/kotae a volume, a HEALTHCHECK, the environment, the
# entrypoint, port 8080; the binary and health check in the layer, no manuals or apt lists), then
# run with podman: the example documents indexed into a volume, the default command refusing to
# serve without API keys, the server started with a keys file, the example question asked over
# HTTP through the published port (401 without the key, 200 with citations with it), and
# `podman healthcheck run` healthy.
#
# usage: tests/package/image_test.sh DEB WORK_DIR EXAMPLES_DIR
# Where no container runtime can start a container for a known reason of the machine (the rlimit
# and cgroup errors of podman/runc/crun without CAP_SYS_RESOURCE or on hybrid cgroups), it says so
# and passes on the configuration and layer checks alone; any other failure fails the test.
# Every check prints "ok ..." or "FAIL ..."; the exit status is 1 when any failed.
set -uo pipefail

readonly ready_bound_s=60
here=$(cd "$(dirname "$0")" && pwd)
source "$here/checks.sh"
deb=${1:?usage: image_test.sh DEB WORK_DIR EXAMPLES_DIR}
work_parent=${2:?usage: image_test.sh DEB WORK_DIR EXAMPLES_DIR}
examples=$(realpath "${3:?usage: image_test.sh DEB WORK_DIR EXAMPLES_DIR}")
deb=$(realpath "$deb")


mkdir -p "$work_parent"
work=$(mktemp -d "$(realpath "$work_parent")/image.XXXXXX")
suffix=$(basename "$work" | cut -d. -f2 | tr 'A-Z' 'a-z')
container="kotae-test-$suffix"
volume="kotae-test-data-$suffix"
image=""
archive=""
# podman's default open-files and processes limits are above this machine's hard limits, and setting
# them needs CAP_SYS_RESOURCE; crun does not run on hybrid cgroups. runc with limits within ours works.
runtime=(--runtime runc --ulimit nofile=1024:1024 --ulimit nproc=1024:1024)

cleanup() {
  podman rm -f -t 5 "$container" >/dev/null 2>&1
  podman volume rm -f "$volume" >/dev/null 2>&1
  [ -n "$image" ] && podman rmi -f "$image" >/dev/null 2>&1
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
now() { date +%s.%N; }
seconds_since() { python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.2f}')" "$1" "$(now)"; }

build_image() {
  note "scripts/image $(basename "$deb")"
  local start; start=$(now)
  if "$here/../../scripts/image" "$deb" "$work/out" >"$work/build.log" 2>&1; then
    archive=$(tail -n 1 "$work/build.log")
    image=localhost/kotae:$(dpkg-deb -f "$deb" Version)
    ok "image built in $(seconds_since "$start") s: $(basename "$archive"), $(stat -c %s "$archive") bytes"
    echo "image_bytes=$(stat -c %s "$archive")"
  else
    fail "scripts/image: $(tail -n 8 "$work/build.log")"
    return 1
  fi
  # What runs is what the archive holds: the image scripts/image left in the store goes first.
  podman rmi -f "$image" >/dev/null 2>&1
  if podman load -q -i "$archive" >"$work/load.log" 2>&1 && podman image exists "$image"; then
    ok "podman load -i $(basename "$archive"): $image"
  else
    fail "podman load -i $archive: $(tail -n 5 "$work/load.log")"
    return 1
  fi
}

# The image's configuration as written (--raw: Docker's schema, where HEALTHCHECK lives).
check_config() {
  note "the image's configuration (skopeo inspect --config --raw docker-archive:...)"
  local config="$work/config.json"
  if ! skopeo inspect --config --raw "docker-archive:$archive" >"$config" 2>"$work/skopeo.err"; then
    fail "skopeo inspect: $(cat "$work/skopeo.err")"; return 1
  fi
  local user; user=$(jq -r '.config.User // ""' "$config")
  case "${user%%:*}" in ""|root|0) fail "the image runs as root (User '$user')" ;; *) ok "user $user (not root)" ;; esac
  if jq -e '.config.Volumes | has("/var/lib/kotae")' "$config" >/dev/null; then ok "volume /var/lib/kotae"
  else fail "no volume /var/lib/kotae: $(jq -c .config.Volumes "$config")"; fi
  if jq -e '.config.Healthcheck.Test | length > 0' "$config" >/dev/null; then ok "HEALTHCHECK $(jq -c .config.Healthcheck.Test "$config")"
  else fail "no HEALTHCHECK in the configuration"; fi
  if jq -e '.config.Env | index("KOTAE_DATA=/var/lib/kotae")' "$config" >/dev/null; then ok "env KOTAE_DATA=/var/lib/kotae"
  else fail "env: $(jq -c .config.Env "$config")"; fi
  if jq -e '.config.Labels["io.kotae.environment"] | test("KOTAE_API_KEYS")' "$config" >/dev/null; then
    ok "the environment variables are documented in label io.kotae.environment"
  else fail "no label io.kotae.environment documenting KOTAE_API_KEYS"; fi
  if jq -e '.config.Entrypoint == ["/usr/bin/kotae"] and .config.Cmd[0] == "serve"' "$config" >/dev/null; then
    ok "entrypoint $(jq -c .config.Entrypoint "$config") cmd $(jq -c .config.Cmd "$config")"
  else fail "entrypoint/cmd: $(jq -c '[.config.Entrypoint, .config.Cmd]' "$config")"; fi
  if jq -e '.config.ExposedPorts | has("8080/tcp")' "$config" >/dev/null; then ok "exposes 8080/tcp"
  else fail "ports: $(jq -c .config.ExposedPorts "$config")"; fi
}

# What the layers hold: the package's files and the health check, none of what was left out.
check_layers() {
  note "the image's layers"
  local listing="$work/layers.txt" layer
  : >"$listing"
  for layer in $(tar -xOf "$archive" manifest.json | jq -r '.[0].Layers[]'); do
    tar -xOf "$archive" "$layer" | tar -t >>"$listing" 2>/dev/null
  done
  local count; count=$(tar -xOf "$archive" manifest.json | jq '.[0].Layers | length')
  local wanted missing=""
  for wanted in usr/bin/kotae usr/local/bin/kotae-healthcheck etc/kotae/config.toml var/lib/kotae/ usr/bin/bash; do
    grep -qxE "(\./)?$wanted" "$listing" || missing+=" $wanted"
  done
  if [ -z "$missing" ]; then ok "$count layer(s), $(wc -l <"$listing") entries: kotae, its health check, its data folder, bash"
  else fail "missing from the layers:$missing"; fi
  grep -qE '^(\./)?usr/lib/kotae/.+\.so' "$listing" && grep -qE '^(\./)?usr/share/kotae/models/.+' "$listing" ||
    fail "the layers lack /usr/lib/kotae's libraries or /usr/share/kotae/models"
  local extra; extra=$(grep -E '^(\./)?(usr/share/man/.+|var/lib/apt/lists/.*(Packages|Release)|usr/share/locale/.+[^/]$)' "$listing" | head -3)
  if [ -z "$extra" ]; then ok "no manuals, translations or apt lists in the layers"; else fail "left in the image: $extra"; fi
}

podman_run() { podman run "${runtime[@]}" "$@"; }

# One container started and stopped: whether this machine can run the image at all.
probe_runtime() {
  note "podman run ${runtime[*]}"
  if podman_run --rm "$image" --version >"$work/probe.log" 2>&1; then
    ok "podman runs the image: $(tail -n 1 "$work/probe.log")"
    return 0
  fi
  if grep -qE 'setrlimit|error setting rlimit|cgroups in hybrid mode|OCI permission denied|cannot find the OCI runtime|runc.*not found' "$work/probe.log"; then
    echo "SKIP no container runtime works on this machine: $(grep -v 'unable to get systemd connection' "$work/probe.log" | tail -n 3)"
    return 2
  fi
  fail "podman run: $(tail -n 5 "$work/probe.log")"
  return 1
}

check_runtime() {
  local log="$work/run.log" status
  podman_run --rm --entrypoint /usr/bin/id "$image" -u >"$log" 2>&1
  status=$(tail -n 1 "$log")
  if [ -n "$status" ] && [ "$status" != 0 ]; then ok "the container runs as uid $status"; else fail "the container's uid: '$status'"; fi

  if podman_run --rm "$image" >"$log" 2>&1; then fail "the default command served an open API without keys"
  elif grep -q 'would serve anyone' "$log"; then ok "without API keys the default command refuses to serve: $(grep -o 'listening on 0.0.0.0[^"]*' "$log" | head -c 100)"
  else fail "the default command without keys: $(tail -n 3 "$log")"; fi

  podman volume create "$volume" >/dev/null
  if podman_run --rm -v "$volume:/var/lib/kotae" -v "$examples:/docs:ro" "$image" index /docs --collection examples >"$log" 2>&1; then
    ok "kotae index into the volume: $(tail -n 1 "$log")"
  else fail "kotae index in a container: $(tail -n 5 "$log")"; return 1; fi

  # A key for the server: kotae keygen run from the image itself.
  podman_run --rm "$image" keygen >"$work/keygen.json" 2>/dev/null
  local key; key=$(jq -r .key "$work/keygen.json")
  jq '{keys: [.entry]}' "$work/keygen.json" >"$work/keys.json" && chmod 0644 "$work/keys.json"
  [ -n "$key" ] && [ "$key" != null ] || { fail "kotae keygen: $(cat "$work/keygen.json")"; return 1; }

  local port start code
  port=$(free_port)
  start=$(now)
  if ! podman_run -d --name "$container" -p "127.0.0.1:$port:8080" -v "$volume:/var/lib/kotae" \
      -v "$work/keys.json:/run/kotae/keys.json:ro" -e KOTAE_API_KEYS=/run/kotae/keys.json "$image" >"$log" 2>&1; then
    fail "podman run -d: $(tail -n 5 "$log")"; return 1
  fi
  while :; do
    code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "http://127.0.0.1:$port/readyz")
    [ "$code" = 200 ] && break
    if [ "$(podman inspect -f '{{.State.Running}}' "$container" 2>/dev/null)" != true ]; then
      fail "the container stopped: $(podman logs "$container" 2>&1 | tail -n 5)"; return 1
    fi
    if python3 -c "import sys; sys.exit(float(sys.argv[1]) < $ready_bound_s)" "$(seconds_since "$start")"; then
      fail "not ready after $ready_bound_s s (/readyz $code)"; return 1
    fi
    sleep 0.1
  done
  ok "the container answers /readyz 200 through the published port after $(seconds_since "$start") s"

  local request; request=$(jq -n --arg q "$question" '{collection: "examples", question: $q}')
  code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 30 -H 'Content-Type: application/json' -d "$request" \
    "http://127.0.0.1:$port/v1/ask")
  if [ "$code" = 401 ]; then ok "POST /v1/ask without a key: 401"; else fail "POST /v1/ask without a key: $code"; fi
  code=$(curl -s -o "$work/ask.json" -w '%{http_code}' --max-time 60 -H 'Content-Type: application/json' \
    -H "Authorization: Bearer $key" -d "$request" "http://127.0.0.1:$port/v1/ask")
  if [ "$code" = 200 ] && jq -e '(.citations | length) > 0 and (.sources | length) > 0' "$work/ask.json" >/dev/null; then
    ok "POST /v1/ask with the key: 200, $(jq '.citations | length' "$work/ask.json") citations"
  else fail "POST /v1/ask with the key: $code $(head -c 400 "$work/ask.json")"; fi

  # podman schedules the periodic check with systemd timers, absent here; run it once by hand.
  if podman healthcheck run "$container" >"$log" 2>&1; then
    local health; health=$(podman inspect -f '{{.State.Health.Status}}' "$container" 2>/dev/null)
    if [ "$health" = healthy ]; then ok "podman healthcheck run: healthy"; else fail "health status after the check: '$health'"; fi
  else fail "podman healthcheck run: $(cat "$log")"; fi
  # Read whole first: grep -q stops at its match, and under pipefail podman's SIGPIPE would fail the pipe.
  local logs; logs=$(podman logs "$container" 2>&1)
  grep -q '^{' <<<"$logs" && ok "the server logs JSON lines to the container's output" ||
    fail "no JSON log lines in podman logs"
}

main() {
  build_image || exit 1
  check_config
  check_layers
  local probe=0
  probe_runtime || probe=$?
  [ "$probe" = 0 ] && check_runtime
  if [ "$probe" = 2 ]; then note "the image was not run (see SKIP above): configuration and layers only"; fi
  finish_checks image
}
main
