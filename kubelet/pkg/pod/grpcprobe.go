package pod

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// grpcProbe checks a gRPC server with the standard health protocol
// (grpc.health.v1.Health/Check) as upstream's gRPC prober: without TLS,
// within timeout; only SERVING succeeds.
func grpcProbe(ctx context.Context, host string, port int, service string, timeout time.Duration) (bool, string) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	addr := net.JoinHostPort(host, strconv.Itoa(port))
	//nolint:staticcheck // DialContext with WithBlock is upstream's prober: the connection must be up within the timeout.
	conn, err := grpc.DialContext(ctx, addr,
		grpc.WithUserAgent("kube-probe/1.32"),
		grpc.WithBlock(),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "tcp", addr)
		}),
	)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return false, fmt.Sprintf("timeout: failed to connect service %q within %v: %+v", addr, timeout, err)
		}
		return false, fmt.Sprintf("error: failed to connect service at %q: %+v", addr, err)
	}
	defer func() { _ = conn.Close() }()
	resp, err := healthpb.NewHealthClient(conn).Check(metadata.NewOutgoingContext(ctx, metadata.MD{}), &healthpb.HealthCheckRequest{Service: service})
	if err != nil {
		if st, ok := status.FromError(err); ok {
			switch st.Code() {
			case codes.Unimplemented:
				return false, fmt.Sprintf("this server doesn't implement the grpc health protocol (grpc.health.v1.Health): %s", addr)
			case codes.DeadlineExceeded:
				return false, fmt.Sprintf("timeout: health rpc did not complete within %v", timeout)
			}
		}
		return false, fmt.Sprintf("error: health rpc probe failed: %+v", err)
	}
	if resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		return false, fmt.Sprintf("service unhealthy (responded with %q)", resp.GetStatus().String())
	}
	return true, ""
}
