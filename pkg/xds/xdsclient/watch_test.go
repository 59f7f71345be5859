package xdsclient_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	networkingv1 "istio.io/api/networking/v1"

	"github.com/meshcp/meshcp/pkg/config"
	"github.com/meshcp/meshcp/pkg/krt"
	"github.com/meshcp/meshcp/pkg/krt/krttest"
	"github.com/meshcp/meshcp/pkg/xds"
	"github.com/meshcp/meshcp/pkg/xds/xdsclient"
)

func TestMain(m *testing.M) { krttest.Main(m) }

var vsGVK = config.GroupVersionKind{Group: "networking.istio.io", Version: "v1", Kind: "VirtualService"}

// server serves two VirtualServices on a loopback port.
func server(t *testing.T) string {
	t.Helper()
	stop := make(chan struct{})
	opts := xds.DefaultOptions()
	opts.Addr, opts.TLSAddr = "127.0.0.1:0", ""
	srv, err := xds.NewServer(opts, slog.New(slog.DiscardHandler), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	vs := func(name, host string) config.Config {
		return config.Config{
			Meta: config.Meta{GroupVersionKind: vsGVK, Namespace: "shop", Name: name, ResourceVersion: "7", Labels: map[string]string{"app": name}},
			Spec: &networkingv1.VirtualService{Hosts: []string{host}},
		}
	}
	srv.AddConfigs(vsGVK, krt.NewStaticCollection(nil, []config.Config{vs("cart", "cart.shop"), vs("pay", "pay.shop")}, krt.WithStop(stop)))
	if err := srv.Start(stop); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		close(stop)
		srv.Wait()
	})
	return srv.Addr()
}

type printed struct {
	Type      string `json:"type"`
	Nonce     string `json:"nonce"`
	Resources []struct {
		Name    string            `json:"name"`
		Version string            `json:"version"`
		Labels  map[string]string `json:"labels"`
		Spec    struct {
			Hosts []string `json:"hosts"`
		} `json:"spec"`
	} `json:"resources"`
}

func TestWatchPrintsWhatTheServerSends(t *testing.T) {
	addr := server(t)
	for _, tc := range []struct {
		name  string
		args  []string
		hosts string
	}{
		{"sotw wildcard", nil, "cart.shop,pay.shop"},
		{"delta wildcard", []string{"--delta"}, "cart.shop,pay.shop"},
		{"sotw named", []string{"--name", "shop/pay"}, "pay.shop"},
		{"delta named", []string{"--delta", "--name", "shop/cart,shop/none"}, "cart.shop"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errs bytes.Buffer
			args := append([]string{"watch", "--addr", addr, "--type", vsGVK.String(), "--count", "1", "--timeout", "30s"}, tc.args...)
			if err := xdsclient.Run(context.Background(), args, &out, &errs); err != nil {
				t.Fatalf("xds %v: %v\n%s", args, err, errs.String())
			}
			var p printed
			if err := json.Unmarshal(out.Bytes(), &p); err != nil {
				t.Fatalf("not a JSON line: %q", out.String())
			}
			var hosts []string
			for _, r := range p.Resources {
				hosts = append(hosts, r.Spec.Hosts...)
				if r.Version != "7" || r.Labels["app"] == "" || !strings.HasPrefix(r.Name, "shop/") {
					t.Errorf("resource printed without its metadata: %s", out.String())
				}
			}
			if strings.Join(hosts, ",") != tc.hosts || p.Type != vsGVK.String() || p.Nonce == "" {
				t.Errorf("printed %s, want hosts %s", out.String(), tc.hosts)
			}
		})
	}
}

func TestWatchErrors(t *testing.T) {
	addr := server(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"watch"}, "--type is required"},
		{[]string{"list"}, `unknown subcommand "list"`},
		{[]string{"watch", "--type", "x", "--cert", "c.pem"}, "--cert needs --ca"},
		{[]string{"watch", "--type", "x", "--ca", "/nonexistent/ca.pem"}, "reading --ca"},
		{[]string{"watch", "--addr", addr, "--type", "example.com/Nothing", "--count", "2", "--timeout", "300ms"}, "1 of 2 responses"},
	} {
		var out, errs bytes.Buffer
		err := xdsclient.Run(context.Background(), tc.args, &out, &errs)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("xds %v: %v, want an error with %q", tc.args, err, tc.want)
		}
	}
	// Without a count, the end of the context is a normal end.
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	var out bytes.Buffer
	if err := xdsclient.Run(ctx, []string{"watch", "--addr", addr, "--type", vsGVK.String()}, &out, &bytes.Buffer{}); err != nil || !strings.Contains(out.String(), "shop/cart") {
		t.Errorf("watch until interrupted: %v, printed %q", err, out.String())
	}
}
