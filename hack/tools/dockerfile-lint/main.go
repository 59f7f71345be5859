// Command dockerfile-lint runs BuildKit's own Dockerfile checks, the rules
// of `docker build --check`, on a Dockerfile, offline: base images are not
// resolved, so the checks that need an image's config are skipped and
// everything else (syntax, stage names, casing, ENV/ARG use, JSON
// arguments, undefined variables...) runs as BuildKit runs it.
//
//	go run . ../../../Dockerfile
//
// It prints each finding with its line and exits 1 when there is any. It
// lives in its own module so the control plane's go.mod does not carry
// BuildKit.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/moby/buildkit/client/llb"
	"github.com/moby/buildkit/client/llb/sourceresolver"
	"github.com/moby/buildkit/frontend/dockerfile/dockerfile2llb"
	"github.com/moby/buildkit/frontend/dockerui"
	digest "github.com/opencontainers/go-digest"
	ocispecs "github.com/opencontainers/image-spec/specs-go/v1"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: dockerfile-lint DOCKERFILE")
		os.Exit(2)
	}
	n, err := lint(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "dockerfile-lint:", err)
		os.Exit(2)
	}
	if n > 0 {
		os.Exit(1)
	}
}

// lint prints the findings on the Dockerfile at path and returns how many
// there are.
func lint(path string) (int, error) {
	dt, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	// The source map only labels findings; it has no build graph behind it.
	sm := llb.NewSourceMap(nil, path, "Dockerfile", dt)
	sm.Definition = &llb.Definition{}
	res, err := dockerfile2llb.DockerfileLint(context.Background(), dt, dockerfile2llb.ConvertOpt{
		Config:       dockerui.Config{},
		SourceMap:    sm,
		MetaResolver: offlineImages{},
	})
	if err != nil {
		return 0, fmt.Errorf("checking %s: %w", path, err)
	}
	if res.Error != nil {
		fmt.Printf("%s: %s\n", path, res.Error.Message)
		return 1, nil
	}
	for _, w := range res.Warnings {
		line := 0
		if len(w.Location.Ranges) > 0 {
			line = int(w.Location.Ranges[0].Start.Line)
		}
		fmt.Printf("%s:%d: %s: %s (%s)\n", path, line, w.RuleName, w.Detail, w.URL)
	}
	return len(res.Warnings), nil
}

// offlineImages answers every base image lookup with an empty linux/amd64
// image config, so the checks run without a registry (none is reachable
// here). Checks that compare against a base image's real config, such as
// its platform or its environment, see this empty one instead.
type offlineImages struct{}

// ResolveImageConfig returns the reference unchanged, no digest, and an
// empty image config.
func (offlineImages) ResolveImageConfig(_ context.Context, ref string, _ sourceresolver.Opt) (string, digest.Digest, []byte, error) {
	cfg, err := json.Marshal(ocispecs.Image{Platform: ocispecs.Platform{OS: "linux", Architecture: "amd64"}})
	return ref, "", cfg, err
}
