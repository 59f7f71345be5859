package xds

// responseOverhead is what a response carries beside its resources: the
// type URL, version, nonce and field tags.
const responseOverhead = 1 << 10

// totalSize is what resources add to a response.
func totalSize(resources []*Resource) int {
	n := 0
	for _, r := range resources {
		n += r.size
	}
	return n
}

// chunk splits resources, in order, into runs that each fit in a response
// of limit bytes. Resources too big for a response of their own are
// returned apart, in tooBig. Resources that fit at once come back as the
// one chunk they are, not copied.
func chunk(resources []*Resource, limit int) (chunks [][]*Resource, tooBig []*Resource) {
	room := limit - responseOverhead
	if totalSize(resources) <= room {
		return [][]*Resource{resources}, nil
	}
	var cur []*Resource
	size := 0
	for _, r := range resources {
		switch {
		case r.size > room:
			tooBig = append(tooBig, r)
			continue
		case size+r.size > room:
			chunks = append(chunks, cur)
			cur, size = nil, 0
		}
		cur = append(cur, r)
		size += r.size
	}
	if len(cur) > 0 {
		chunks = append(chunks, cur)
	}
	return chunks, tooBig
}
