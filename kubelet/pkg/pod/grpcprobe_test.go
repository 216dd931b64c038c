package pod

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// grpcServer serves the health protocol on loopback (health true) or
// nothing at all, and returns its port.
func grpcServer(t *testing.T, withHealth bool) (int, *health.Server) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	hs := health.NewServer()
	if withHealth {
		healthpb.RegisterHealthServer(srv, hs)
	}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(srv.Stop)
	return l.Addr().(*net.TCPAddr).Port, hs
}

func TestGRPCProbe(t *testing.T) {
	port, hs := grpcServer(t, true)
	hs.SetServingStatus("db", healthpb.HealthCheckResponse_NOT_SERVING)
	bare, _ := grpcServer(t, false)
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedPort := closed.Addr().(*net.TCPAddr).Port
	_ = closed.Close()
	tests := []struct {
		name    string
		port    int
		service *string
		wantOK  bool
		wantMsg string
	}{
		{name: "serving (the server as a whole)", port: port, wantOK: true},
		{name: "not serving", port: port, service: ptr.To("db"), wantMsg: `service unhealthy (responded with "NOT_SERVING")`},
		{name: "unknown service", port: port, service: ptr.To("nope"), wantMsg: "error: health rpc probe failed"},
		{name: "no health service", port: bare, wantMsg: "this server doesn't implement the grpc health protocol (grpc.health.v1.Health)"},
		{name: "nothing listening", port: closedPort, wantMsg: "timeout: failed to connect service"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewState(testPod(corev1.RestartPolicyAlways, "busybox"))
			s.Sandbox = &Sandbox{IPs: []string{"127.0.0.1"}}
			p := &corev1.Probe{TimeoutSeconds: 1, ProbeHandler: corev1.ProbeHandler{GRPC: &corev1.GRPCAction{Port: int32(tt.port), Service: tt.service}}}
			start := time.Now()
			ok, msg := (&Prober{}).Probe(context.Background(), s, &corev1.Container{Name: "c"}, &Container{ID: "id"}, p)
			if ok != tt.wantOK || !strings.Contains(msg, tt.wantMsg) {
				t.Errorf("probe = %v %q, want %v %q", ok, msg, tt.wantOK, tt.wantMsg)
			}
			if d := time.Since(start); d > 3*time.Second {
				t.Errorf("the probe took %s, past its 1 s timeout", d)
			}
		})
	}
}
