package server

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"

	"skiff.dev/apiserver/pkg/endpoints"
)

// componentProbeTimeout is upstream's probeTimeOut.
const componentProbeTimeout = 20 * time.Second

// componentChecks are what componentstatuses reports: each of
// ComponentHealthURLs, and etcd as etcd-0.
func (s *Server) componentChecks() map[string]endpoints.ComponentCheck {
	checks := map[string]endpoints.ComponentCheck{"etcd-0": s.etcdComponentCheck}
	client := &http.Client{
		Timeout: componentProbeTimeout,
		// As upstream's prober: the components' serving certificates are
		// not checked, only whether they answer.
		Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, DisableKeepAlives: true},
	}
	for name, url := range s.opts.ComponentHealthURLs {
		checks[name] = func(ctx context.Context) (corev1.ConditionStatus, string, error) {
			return httpComponentCheck(ctx, client, url)
		}
	}
	return checks
}

// httpComponentCheck is upstream's HTTP probe of a component: a 2xx or
// 3xx is healthy, with the body as the message; anything else, or no
// answer, is unhealthy with the reason as the message (not the error,
// just as upstream's).
func httpComponentCheck(ctx context.Context, client *http.Client, url string) (corev1.ConditionStatus, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return corev1.ConditionUnknown, "", fmt.Errorf("failed to construct probe request: %w", err)
	}
	res, err := client.Do(req)
	if err != nil {
		return corev1.ConditionFalse, err.Error(), nil
	}
	defer res.Body.Close()
	// Upstream reads at most 10 KiB of a probe's body.
	body, err := io.ReadAll(io.LimitReader(res.Body, 10<<10))
	if err != nil {
		return corev1.ConditionFalse, err.Error(), nil
	}
	if res.StatusCode < http.StatusOK || res.StatusCode >= http.StatusBadRequest {
		return corev1.ConditionFalse, fmt.Sprintf("HTTP probe failed with statuscode: %d", res.StatusCode), nil
	}
	return corev1.ConditionTrue, string(body), nil
}

// etcdComponentCheck reads a key, as /readyz's etcd check does.
func (s *Server) etcdComponentCheck(ctx context.Context) (corev1.ConditionStatus, string, error) {
	ctx, cancel := context.WithTimeout(ctx, componentProbeTimeout)
	defer cancel()
	if _, err := s.etcd.client.Get(ctx, "health"); err != nil {
		return corev1.ConditionFalse, "", err
	}
	return corev1.ConditionTrue, "ok", nil
}
