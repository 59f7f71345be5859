// Package validation checks configuration on ingest. meshcp has no
// admission webhook in front of it, so every object is validated when it is
// read, with the rules users know from Istio and the Gateway API rules the
// CRD schemas cannot express. An object with errors is rejected (the
// previous accepted version stays in force); warnings are reported and the
// object is accepted.
package validation

import (
	"errors"
	"fmt"
	"strings"

	"github.com/meshcp/meshcp/pkg/config"
)

// Func validates one Config of a given kind.
type Func func(c config.Config) Result

// Finding is one problem, at a field path such as
// "spec.http[0].route[1].weight".
type Finding struct {
	Path    string `json:"path"`
	Message string `json:"message"`
}

// String is "path: message".
func (f Finding) String() string {
	if f.Path == "" {
		return f.Message
	}
	return f.Path + ": " + f.Message
}

// Result is what validating one object found.
type Result struct {
	Errors   []Finding `json:"errors,omitempty"`
	Warnings []Finding `json:"warnings,omitempty"`
}

// OK reports whether the object has no errors (warnings are allowed).
func (r Result) OK() bool { return len(r.Errors) == 0 }

// Err returns the errors as one error, or nil.
func (r Result) Err() error {
	if r.OK() {
		return nil
	}
	msgs := make([]string, len(r.Errors))
	for i, f := range r.Errors {
		msgs[i] = f.String()
	}
	return errors.New(strings.Join(msgs, "; "))
}

// Errorf records an error at path.
func (r *Result) Errorf(path, format string, args ...any) {
	r.Errors = append(r.Errors, Finding{Path: path, Message: fmt.Sprintf(format, args...)})
}

// Warnf records a warning at path.
func (r *Result) Warnf(path, format string, args ...any) {
	r.Warnings = append(r.Warnings, Finding{Path: path, Message: fmt.Sprintf(format, args...)})
}

// Merge adds the findings of o.
func (r *Result) Merge(o Result) {
	r.Errors = append(r.Errors, o.Errors...)
	r.Warnings = append(r.Warnings, o.Warnings...)
}
