package e2e

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"

	"github.com/meshcp/meshcp/pkg/config/sources"
)

// Collection is one collection of /debug/krtz, as a user's jq sees it.
type Collection struct {
	UID   int    `json:"uid"`
	Name  string `json:"name"`
	State struct {
		Outputs map[string]json.RawMessage `json:"outputs"`
		Synced  bool                       `json:"synced"`
	} `json:"state"`
}

// OutputKeys returns the keys of the collection's outputs, sorted.
func (c Collection) OutputKeys() []string {
	keys := make([]string, 0, len(c.State.Outputs))
	for k := range c.State.Outputs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// ParseKrtz decodes an answer of /debug/krtz.
func ParseKrtz(body []byte) ([]Collection, error) {
	var out []Collection
	if err := json.Unmarshal(body, &out); err != nil {
		return nil, fmt.Errorf("/debug/krtz is not the documented JSON: %w", err)
	}
	return out, nil
}

// Krtz fetches and decodes /debug/krtz, narrowed to one collection when
// name is not empty.
func (d *Daemon) Krtz(name string) ([]Collection, error) {
	path := "/debug/krtz"
	if name != "" {
		path += "?collection=" + url.QueryEscape(name)
	}
	status, body, err := d.Get(path)
	if err != nil {
		return nil, err
	}
	if status != 200 {
		return nil, fmt.Errorf("GET %s: %d %s", path, status, body)
	}
	return ParseKrtz(body)
}

// WaitForOutputs waits until the collection called name holds exactly the
// keys want (in any order) and returns it.
func (d *Daemon) WaitForOutputs(name string, want ...string) Collection {
	d.t.Helper()
	slices.Sort(want)
	var found Collection
	d.WaitFor("/debug/krtz?collection="+url.QueryEscape(name), fmt.Sprintf("%s holding exactly %v", name, want), func(status int, body []byte) bool {
		cols, err := ParseKrtz(body)
		if status != 200 || err != nil {
			return false
		}
		for _, c := range cols {
			if c.Name == name {
				found = c
				return slices.Equal(c.OutputKeys(), want)
			}
		}
		return false
	})
	return found
}

// Configz fetches and decodes /debug/configz.
func (d *Daemon) Configz() (sources.Configz, error) {
	var z sources.Configz
	status, body, err := d.Get("/debug/configz")
	if err != nil {
		return z, err
	}
	if status != 200 {
		return z, fmt.Errorf("GET /debug/configz: %d %s", status, body)
	}
	if err := json.Unmarshal(body, &z); err != nil {
		return z, fmt.Errorf("/debug/configz is not the documented JSON: %w", err)
	}
	return z, nil
}

// WaitForVerdict waits until /debug/configz lists the object key of kind
// (a GVK string such as "networking.istio.io/v1/VirtualService") as
// accepted or rejected, and returns its verdict.
func (d *Daemon) WaitForVerdict(kind, key string, accepted bool) sources.ObjectVerdict {
	d.t.Helper()
	var found sources.ObjectVerdict
	what := fmt.Sprintf("%s %s accepted=%v on /debug/configz", kind, key, accepted)
	d.WaitFor("/debug/configz?kind="+url.QueryEscape(kind), what, func(status int, body []byte) bool {
		var z sources.Configz
		if status != 200 || json.Unmarshal(body, &z) != nil {
			return false
		}
		for _, k := range z.Kinds {
			if k.Kind != kind {
				continue
			}
			list := k.Rejected
			if accepted {
				list = k.Accepted
			}
			for _, v := range list {
				if v.Key == key {
					found = v
					return true
				}
			}
		}
		return false
	})
	return found
}
