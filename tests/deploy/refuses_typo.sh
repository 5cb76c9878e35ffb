#!/usr/bin/env bash
# deploy/validate must refuse tests/deploy/typo.yaml (api.yaml with one field misspelt), naming the field.
# Run in deploy/validate with the Go environment of tests/deploy/deploy.cmake.
out=$(go run . "$(dirname "$0")/typo.yaml" 2>&1)
code=$?
echo "$out"
[ "$code" -ne 0 ] && grep -q 'unknown field "terminationGracePeriodSecond"' <<<"$out"
