#!/usr/bin/env bash
# Runs every fuzz target of the module for a while (FUZZTIME, default 1m
# each). CI runs only the seed corpora, through go test; this is for
# looking for new failures. A failing input is saved under the package's
# testdata/fuzz/ and then replays in every go test run.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime=${FUZZTIME:-1m}
for pkg in $(go list ./...); do
  for target in $(go test -list '^Fuzz' "$pkg" | grep '^Fuzz' || true); do
    echo "== $pkg $target ($fuzztime)"
    go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" "$pkg"
  done
done
