package webhook

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"
)

// maxResponseBytes bounds a webhook's answer.
const maxResponseBytes = 3 * 1024 * 1024

// ServiceResolver turns a webhook's service reference into a URL and the
// TLS server name to check.
type ServiceResolver func(ctx context.Context, namespace, name string, port int32, path string) (url, serverName string, err error)

// Endpoint is where a webhook is reached: a URL, or a service reference
// (namespace, name, port, path), with the CA bundle that signs its
// certificate (the system's roots when empty).
type Endpoint struct {
	URL       *string
	Namespace string
	Name      string
	Port      *int32
	Path      *string
	CABundle  []byte
}

// Clients keeps one HTTP client per CA bundle and TLS server name. It is
// safe for concurrent use.
type Clients struct {
	// Resolve finds a webhook service.
	Resolve ServiceResolver

	mu      sync.Mutex
	clients map[string]*http.Client
}

// client is the HTTP client that trusts caBundle and checks the server's
// certificate for serverName (a service's DNS name, as upstream's
// webhook client does: the address dialled is the Service's cluster IP,
// which the certificate need not name); empty: the URL's host.
func (c *Clients) client(caBundle []byte, serverName string) (*http.Client, error) {
	key := serverName + "\x00" + string(caBundle)
	c.mu.Lock()
	defer c.mu.Unlock()
	if cl, ok := c.clients[key]; ok {
		return cl, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: serverName}
	if len(caBundle) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(caBundle) {
			return nil, fmt.Errorf("caBundle holds no PEM certificate")
		}
		cfg.RootCAs = pool
	}
	cl := &http.Client{Transport: &http.Transport{TLSClientConfig: cfg, ForceAttemptHTTP2: true}}
	if c.clients == nil {
		c.clients = map[string]*http.Client{}
	}
	c.clients[key] = cl
	return cl, nil
}

// Post sends body (JSON) to the webhook at e and returns its answer, which
// must be a 200, within timeout.
func (c *Clients) Post(ctx context.Context, e Endpoint, body []byte, timeout time.Duration) ([]byte, error) {
	url, serverName := "", ""
	switch {
	case e.URL != nil:
		url = *e.URL
	case e.Name != "":
		if c.Resolve == nil {
			return nil, fmt.Errorf("webhook services cannot be reached from this server")
		}
		port := int32(443)
		if e.Port != nil {
			port = *e.Port
		}
		path := ""
		if e.Path != nil {
			path = *e.Path
		}
		var err error
		if url, serverName, err = c.Resolve(ctx, e.Namespace, e.Name, port, path); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("no url or service")
	}
	cl, err := c.client(e.CABundle, serverName)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	if timeout > 0 {
		// The timeout as a query parameter, as upstream's REST client
		// sends it (?timeout=10s), so the webhook can bound its work.
		q := req.URL.Query()
		q.Set("timeout", timeout.String())
		req.URL.RawQuery = q.Encode()
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if serverName != "" {
		req.Host = serverName
	}
	resp, err := cl.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("the webhook answered %d", resp.StatusCode)
	}
	return data, nil
}
