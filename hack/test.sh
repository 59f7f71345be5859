#!/usr/bin/env bash
# The whole test suite, as CI runs it: formatting, vet, and every test with
# the race detector, plus one pass of every benchmark so they keep working.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then
  echo "gofmt would change:"; echo "$unformatted"; exit 1
fi

echo "== go vet"
go vet ./...

echo "== go test -race"
go test -race -count=1 ./...

echo "== benchmarks, one iteration each"
go test -run '^$' -bench . -benchtime 1x ./... >/dev/null

echo "== all tests passed"
