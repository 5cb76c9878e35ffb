#!/usr/bin/env bash
# deploy/validate must refuse tests/deploy/typo.yaml (api.yaml with one field misspelt) and
# typo-scaledobject.yaml (a KEDA ScaledObject with one field misspelt), naming each field.
# Run in deploy/validate with the Go environment of tests/deploy/deploy.cmake.
here=$(dirname "$0")
out=$(go run . "$here/typo.yaml" "$here/typo-scaledobject.yaml" 2>&1)
code=$?
echo "$out"
[ "$code" -ne 0 ] &&
  grep -q 'typo.yaml.*unknown field "terminationGracePeriodSecond"' <<<"$out" &&
  grep -q 'typo-scaledobject.yaml.*unknown field "maxReplicaCont"' <<<"$out"
