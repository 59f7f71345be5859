// Package sources reads configuration into the krt graph: from a folder of
// YAML (file mode) or from the API server (Kubernetes mode). Whatever the
// source, every object of every kind goes through the same stage: it is
// validated, and either accepted into its kind's collection of Configs or
// rejected with the reasons, in which case the version accepted before (if
// any) stays in force. Every other object keeps flowing.
//
// The verdicts are served on /debug/configz, logged once per rejection,
// and counted in metrics.
package sources

import (
	"slices"

	"github.com/meshcp/meshcp/pkg/config"
	"github.com/meshcp/meshcp/pkg/config/validation"
)

// Input is one object as read, before validation.
type Input struct {
	Config config.Config
	// Origin says where it was read: "file:line" in file mode,
	// "kubernetes resourceVersion N" from the API server (the object's
	// namespace/name is its key).
	Origin string
	// Warnings are what reading it found (unknown fields, say).
	Warnings []string
}

// ResourceName is the key of the object within its kind.
func (i Input) ResourceName() string { return i.Config.ResourceName() }

// Equals compares inputs without reflecting over protobuf specs.
func (i Input) Equals(o Input) bool {
	return i.Origin == o.Origin && slices.Equal(i.Warnings, o.Warnings) && i.Config.Equals(o.Config)
}

// Verdict is what validation decided about one object.
type Verdict struct {
	Accepted bool              `json:"accepted"`
	Result   validation.Result `json:"result"`
}

// Equals compares verdicts.
func (v Verdict) Equals(o Verdict) bool {
	return v.Accepted == o.Accepted && slices.Equal(v.Result.Errors, o.Result.Errors) && slices.Equal(v.Result.Warnings, o.Result.Warnings)
}
