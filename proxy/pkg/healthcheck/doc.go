// Package healthcheck is the proxy's /healthz, with upstream's
// ProxierHealthServer semantics: the proxy is healthy while no change is
// waiting, or while the oldest waiting change is younger than the timeout
// (twice --sync-period); it answers 200 or 503 with a JSON body giving the
// last successful sync (lastUpdated) and the current time.
package healthcheck
