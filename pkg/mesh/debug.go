package mesh

import (
	"encoding/json"
	"errors"
	"io/fs"
	"net/http"
	"os"
	"time"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/meshcp/meshcp/pkg/config/validation"
)

// Status is the state of a Watcher, as /debug/mesh shows it.
type Status struct {
	// Path is the watched file.
	Path string `json:"path"`
	// Source says where the config in force comes from: "file" (the
	// defaults merged with the file) or "defaults".
	Source string `json:"source"`
	// Reason says why, in words.
	Reason string `json:"reason"`
	// Valid is false while the file's current content is rejected; the
	// config in force is then the last good one, or the defaults.
	Valid bool `json:"valid"`
	// LoadedAt is when the config in force was read from the file; unset
	// when the defaults are in force.
	LoadedAt *time.Time `json:"loadedAt,omitempty"`
	// CheckedAt is when the file's content was last read, accepted or not.
	CheckedAt *time.Time `json:"checkedAt,omitempty"`
	// LastError is the last rejection of the file's content, with the path
	// of each field at fault. It is kept after the file is fixed; Valid
	// tells whether it is current.
	LastError *LoadError `json:"lastError,omitempty"`
	// Warnings are those of the config in force.
	Warnings []validation.Finding `json:"warnings,omitempty"`
	// MeshConfig is the config in force, in protojson; scalars and enums
	// at their zero value are shown, unset messages are not.
	MeshConfig json.RawMessage `json:"meshConfig"`
}

// LoadError is a rejected content of the mesh config file.
type LoadError struct {
	// At is when the content was read.
	At time.Time `json:"at"`
	// Message is the error, every finding in one line.
	Message string `json:"message"`
	// Errors are the findings that rejected the content, each with its
	// field path.
	Errors []validation.Finding `json:"errors,omitempty"`
	// Warnings are the other findings about the same content.
	Warnings []validation.Finding `json:"warnings,omitempty"`
	// Omitted counts the findings left out of Errors and Warnings, which
	// keep the first maxFindings of each.
	Omitted int `json:"omitted,omitempty"`
}

// maxFindings bounds the findings a Watcher keeps and logs per load.
const maxFindings = 100

// capFindings returns at most maxFindings of list, and how many it left
// out.
func capFindings(list []validation.Finding) ([]validation.Finding, int) {
	if len(list) <= maxFindings {
		return list, 0
	}
	return list[:maxFindings:maxFindings], len(list) - maxFindings
}

// Status returns the Watcher's current state.
func (w *Watcher) Status() Status {
	w.mu.Lock()
	st := w.state
	fromFile := w.file != nil && w.file.Get() != nil
	w.mu.Unlock()

	s := Status{Path: w.path, Valid: st.valid, Warnings: st.warnings, LastError: st.lastError}
	if !st.loadedAt.IsZero() {
		s.LoadedAt = &st.loadedAt
	}
	if !st.checkedAt.IsZero() {
		s.CheckedAt = &st.checkedAt
	}
	switch {
	case fromFile && st.valid:
		s.Source, s.Reason = "file", "the file's content is in force"
	case fromFile:
		s.Source, s.Reason = "file", "the file's current content is rejected; the last good content stays in force"
	case !st.valid:
		s.Source, s.Reason = "defaults", "the file's content is rejected and none of it was valid before; Istio's defaults are in force"
	default:
		s.Source, s.Reason = "defaults", "the file gives no config; Istio's defaults are in force"
		if info, err := os.Stat(w.path); errors.Is(err, fs.ErrNotExist) {
			s.Reason = "the file does not exist; Istio's defaults are in force"
		} else if err == nil && info.Size() == 0 {
			s.Reason = "the file is empty; Istio's defaults are in force"
		}
	}
	s.MeshConfig = json.RawMessage("null")
	if cur := w.Get(); cur != nil && cur.MeshConfig != nil {
		// Fields at their zero value are shown: REGISTRY_ONLY, the most
		// telling setting of all, is enum value 0.
		if b, err := (protojson.MarshalOptions{EmitDefaultValues: true}).Marshal(cur.MeshConfig); err == nil {
			s.MeshConfig = b
		}
	}
	return s
}

// DebugHandler serves Status as JSON, for /debug/mesh.
func (w *Watcher) DebugHandler() http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, req *http.Request) {
		if req.Method != http.MethodGet && req.Method != http.MethodHead {
			rw.Header().Set("Allow", "GET, HEAD")
			http.Error(rw, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		b, err := json.MarshalIndent(w.Status(), "", "  ")
		if err != nil {
			http.Error(rw, err.Error(), http.StatusInternalServerError)
			return
		}
		rw.Header().Set("Content-Type", "application/json")
		_, _ = rw.Write(append(b, '\n'))
	})
}
