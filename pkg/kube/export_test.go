package kube

import "sort"

// InformerUsers returns the running informers of c by description, with
// the number of collections reading each, for tests of informer sharing.
func InformerUsers(c *Client) map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]int{}
	for key, shared := range c.informers {
		out[describeKey(key)] += shared.users
	}
	return out
}

// InformerCount returns how many informers of c are running, CRD watcher
// excluded.
func InformerCount(c *Client) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.informers)
}

func describeKey(key informerKey) string {
	what := key.gvr.String()
	if key.metadataOnly {
		what = "metadata " + what
	}
	return describe(what, key.filter)
}

// SortedKinds lists the kinds of the registry, for a test that each is
// readable.
func SortedKinds() []string {
	var out []string
	for _, k := range supportedKinds.byType {
		out = append(out, k.String())
	}
	sort.Strings(out)
	return out
}
