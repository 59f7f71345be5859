package envoy

import "fmt"

// Warning is something the builders could not generate as configured,
// and why: a route gRPC cannot follow, a destination that does not exist.
// The rest of the configuration is generated as usual.
type Warning struct {
	// Object is the config at fault ("networking.istio.io/v1/VirtualService/ns/name"),
	// or the service or resource concerned.
	Object string `json:"object"`
	// Field is the path of the field at fault, if any ("spec.http[1].mirror").
	Field   string `json:"field,omitempty"`
	Message string `json:"message"`
}

// String is "object field: message".
func (w Warning) String() string {
	if w.Field == "" {
		return w.Object + ": " + w.Message
	}
	return w.Object + " " + w.Field + ": " + w.Message
}

// warnings collects warnings for one build.
type warnings []Warning

func (w *warnings) add(object, field, format string, args ...any) {
	*w = append(*w, Warning{Object: object, Field: field, Message: fmt.Sprintf(format, args...)})
}
