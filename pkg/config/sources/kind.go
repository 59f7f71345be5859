package sources

import (
	"log/slog"
	"slices"

	"github.com/meshcp/meshcp/pkg/config"
	"github.com/meshcp/meshcp/pkg/config/schema"
	"github.com/meshcp/meshcp/pkg/krt"
)

// Kind is the configuration of one kind as the rest of the graph reads it.
type Kind struct {
	Schema *schema.Schema
	// Configs holds the accepted objects, keyed "namespace/name".
	Configs krt.Collection[config.Config]
	// ByNamespace indexes Configs by namespace.
	ByNamespace krt.Index[string, config.Config]
	// Verdicts holds every object read, accepted or rejected, with the
	// reasons.
	Verdicts krt.Collection[krt.ObjectWithStatus[Input, Verdict]]
}

// newKind validates the inputs of one kind. A rejected object keeps the
// version accepted before it, if any: its transformation discards the
// result instead of removing the output.
func newKind(s *schema.Schema, inputs krt.Collection[Input], registry *schema.Registry, opts Options, stop <-chan struct{}) *Kind {
	verdicts, configs := krt.NewStatusCollection(inputs, func(ctx krt.HandlerContext, in Input) (*Verdict, *config.Config) {
		res := registry.Validate(in.Config)
		for _, w := range in.Warnings {
			res.Warnf("", "%s", w)
		}
		if !res.OK() {
			ctx.DiscardResult()
			return &Verdict{Result: res}, nil
		}
		c := in.Config
		return &Verdict{Accepted: true, Result: res}, &c
	}, opts.collection(stop, collectionName(s.GVK, ""))...)
	k := &Kind{
		Schema:      s,
		Configs:     configs,
		ByNamespace: krt.NewNamespaceIndex(configs),
		Verdicts:    verdicts,
	}
	k.reportRejections(opts.logger(), opts.Metrics)
	return k
}

// reportRejections logs each rejection once, when an object becomes
// rejected or its reasons change, and counts it.
func (k *Kind) reportRejections(log *slog.Logger, m *Metrics) {
	k.Verdicts.Register(func(e krt.Event[krt.ObjectWithStatus[Input, Verdict]]) {
		if e.New == nil || e.New.Status.Accepted {
			return
		}
		if e.Old != nil && !e.Old.Status.Accepted && slices.Equal(e.Old.Status.Result.Errors, e.New.Status.Result.Errors) {
			return // rejected before, for the same reasons
		}
		in := e.New.Obj
		_, inForce := k.previouslyAccepted(in.Config)
		log.Warn("configuration rejected", "kind", k.Schema.GVK.String(), "object", in.Config.ResourceName(),
			"origin", in.Origin, "reasons", e.New.Status.Result.Err().Error(), "previousVersionInForce", inForce)
		m.rejected(k.Schema.GVK)
	})
}

// previouslyAccepted returns the accepted version of c, if there is one.
func (k *Kind) previouslyAccepted(c config.Config) (*config.Config, bool) {
	prev := k.Configs.GetKey(c.ResourceName())
	return prev, prev != nil
}

// collectionName names the collections of a kind in the graph:
// "config/networking.istio.io/VirtualService", plus a suffix. Kinds share
// names across groups (an Istio Gateway and a Gateway API Gateway), so the
// group is part of it.
func collectionName(gvk config.GroupVersionKind, suffix string) string {
	group := gvk.Group
	if group == "" {
		group = "core"
	}
	return "config/" + group + "/" + gvk.Kind + suffix
}
