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

echo "== tools the tests run: kube-apiserver, etcd, helm, dockerfilelint"
# Built from the Go module proxy on first use (about 10 minutes on 2 cores),
# then reused; also helm and dockerfilelint. A missing tool fails the suite
# instead of skipping its tests.
KUBEBUILDER_ASSETS=$(./hack/install-tools.sh | tail -n1)
export KUBEBUILDER_ASSETS MESHCP_REQUIRE_TOOLS=1

echo "== go test -race"
go test -race -count=1 -timeout 30m ./...

echo "== benchmarks, one iteration each"
go test -run '^$' -bench . -benchtime 1x ./... >/dev/null

echo "== all tests passed"
