package sources

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"

	"github.com/meshcp/meshcp/pkg/config/validation"
)

// Configz is the answer of /debug/configz: every object read, kind by kind,
// accepted or rejected with the reasons, and the documents that could not
// be read at all.
type Configz struct {
	Kinds      []KindVerdicts `json:"kinds"`
	Unreadable []Unreadable   `json:"unreadable,omitempty"`
}

// KindVerdicts are the verdicts on the objects of one kind.
type KindVerdicts struct {
	Kind     string          `json:"kind"`
	Accepted []ObjectVerdict `json:"accepted"`
	Rejected []ObjectVerdict `json:"rejected"`
}

// ObjectVerdict is the verdict on one object.
type ObjectVerdict struct {
	Key      string               `json:"key"`
	Origin   string               `json:"origin"`
	Errors   []validation.Finding `json:"errors,omitempty"`
	Warnings []validation.Finding `json:"warnings,omitempty"`
	// InForce says, for a rejected object, that a version accepted before
	// it is still served.
	InForce bool `json:"inForce,omitempty"`
}

// Unreadable is a document that is not any object.
type Unreadable struct {
	Source string `json:"source"`
	Error  string `json:"error"`
}

// Configz returns the verdicts on everything read.
func (s *Sources) Configz() Configz {
	var out Configz
	for _, k := range s.kinds {
		kv := KindVerdicts{Kind: k.Schema.GVK.String(), Accepted: []ObjectVerdict{}, Rejected: []ObjectVerdict{}}
		for _, v := range k.Verdicts.List() {
			in := v.Obj
			ov := ObjectVerdict{Key: in.Config.ResourceName(), Origin: in.Origin, Errors: v.Status.Result.Errors, Warnings: v.Status.Result.Warnings}
			if v.Status.Accepted {
				kv.Accepted = append(kv.Accepted, ov)
				continue
			}
			_, ov.InForce = k.previouslyAccepted(in.Config)
			kv.Rejected = append(kv.Rejected, ov)
		}
		byKey := func(a, b ObjectVerdict) int { return strings.Compare(a.Key, b.Key) }
		slices.SortFunc(kv.Accepted, byKey)
		slices.SortFunc(kv.Rejected, byKey)
		out.Kinds = append(out.Kinds, kv)
	}
	if s.unreadable != nil {
		for _, d := range s.unreadable.List() {
			out.Unreadable = append(out.Unreadable, Unreadable{Source: d.Source.String(), Error: d.Err.Error()})
		}
		slices.SortFunc(out.Unreadable, func(a, b Unreadable) int { return strings.Compare(a.Source, b.Source) })
	}
	return out
}

// ServeHTTP serves /debug/configz; ?kind= keeps the kinds whose name
// ("networking.istio.io/v1/VirtualService") ends with the value, and
// ?rejected=true only the rejected objects.
func (s *Sources) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	z := s.Configz()
	if kind := r.URL.Query().Get("kind"); kind != "" {
		z.Kinds = slices.DeleteFunc(z.Kinds, func(k KindVerdicts) bool { return !strings.HasSuffix(k.Kind, kind) })
	}
	if r.URL.Query().Get("rejected") == "true" {
		for i := range z.Kinds {
			z.Kinds[i].Accepted = nil
		}
	}
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(z)
}
