package bootstrap

import (
	"encoding/json"
	"fmt"
	"net/http"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/meshcp/meshcp/pkg/krt"
	"github.com/meshcp/meshcp/pkg/mesh"
)

// buildMesh reads the mesh config: the watched file merged over Istio's
// defaults, or the defaults alone when there is no file.
func (s *Server) buildMesh() error {
	opts := []krt.CollectionOption{krt.WithName("mesh/MeshConfig"), krt.WithDebugging(s.debug), krt.WithLogger(s.levels.Logger(s.handler, "krt"))}
	if s.opts.MeshConfigFile == "" {
		s.Mesh = krt.NewStatic(&mesh.MeshConfigResource{MeshConfig: mesh.Default()}, true, append(opts, krt.WithStop(s.stop))...)
		s.mesh = defaultsHandler{}
		s.log.Info("mesh config: Istio's defaults (no --mesh-config)")
		return nil
	}
	w, err := mesh.NewWatcher(s.opts.MeshConfigFile, s.stop, mesh.Options{
		Registerer: s.metrics,
		Logger:     s.levels.Logger(s.handler, "mesh"),
		Debounce:   s.opts.Debounce,
	}, opts...)
	if err != nil {
		return fmt.Errorf("watching the mesh config %s: %w", s.opts.MeshConfigFile, err)
	}
	s.Mesh = w
	s.mesh = w.DebugHandler()
	return nil
}

// defaultsHandler serves /debug/mesh when the defaults are in force.
type defaultsHandler struct{}

func (defaultsHandler) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	cfg, err := (protojson.MarshalOptions{EmitDefaultValues: true}).Marshal(mesh.Default())
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"source":     "defaults",
		"reason":     "no --mesh-config file was given",
		"valid":      true,
		"meshConfig": json.RawMessage(cfg),
	})
}
