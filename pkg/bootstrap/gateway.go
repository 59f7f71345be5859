package bootstrap

import (
	"context"
	"fmt"

	"github.com/meshcp/meshcp/pkg/gateway"
	"github.com/meshcp/meshcp/pkg/leader"
)

// buildGateway translates the Gateway API objects read and starts writing
// their statuses: to the API server in Kubernetes mode, by the replica
// that holds the Lease only; to memory, served on /debug/gateway-status,
// in file mode.
func (s *Server) buildGateway() error {
	c, err := gateway.New(gateway.InputsFrom(s.Sources), s.stop, gateway.Options{
		ControllerName: s.opts.GatewayControllerName,
		Domain:         s.opts.Domain,
		Debugger:       s.debug,
		Logger:         s.levels.Logger(s.handler, "krt"),
	})
	if err != nil {
		return fmt.Errorf("gateway API translation: %w", err)
	}
	s.Gateway = c
	log := s.levels.Logger(s.handler, "gateway")
	var sink gateway.StatusSink
	if s.opts.kubernetesMode() {
		sink = gateway.NewKubeStatusSink(s.kube.GatewayAPI(), c.ControllerName)
	} else {
		memory := gateway.NewMemoryStatusSink(c.ControllerName)
		s.gatewayStatus = memory
		sink = memory
	}
	writer, err := gateway.NewStatusWriter(c, sink, gateway.StatusWriterOptions{Logger: log, Registerer: s.metrics})
	if err != nil {
		return err
	}
	run := writer.Run
	if s.opts.kubernetesMode() {
		elector, err := leader.New(s.kube.Kube(), leader.Options{
			Namespace: s.opts.LeaseNamespace, Name: s.opts.LeaseName, Logger: s.levels.Logger(s.handler, "leader"),
			LeaseDuration: s.opts.LeaseDuration, RenewDeadline: s.opts.RenewDeadline, RetryPeriod: s.opts.RetryPeriod,
		})
		if err != nil {
			return err
		}
		run = func(ctx context.Context) { elector.Run(ctx, writer.Run) }
	}
	ctx, cancel := context.WithCancel(s.ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		run(ctx)
	}()
	s.beforeStop = append(s.beforeStop, func() {
		cancel()
		<-done
	})
	return nil
}
