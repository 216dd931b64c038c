package healthcheck

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

func TestHealthz(t *testing.T) {
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name     string
		steps    func(h *ProxyHealth, c *clocktesting.FakeClock)
		wantCode int
		wantLast time.Time
	}{
		{name: "starting, nothing queued", steps: func(*ProxyHealth, *clocktesting.FakeClock) {}, wantCode: 200},
		{name: "queued, not late yet", steps: func(h *ProxyHealth, c *clocktesting.FakeClock) {
			h.QueueUpdate()
			c.Step(59 * time.Second)
		}, wantCode: 200},
		{name: "queued longer than the timeout: syncing stalled", steps: func(h *ProxyHealth, c *clocktesting.FakeClock) {
			h.QueueUpdate()
			c.Step(30 * time.Second)
			h.QueueUpdate() // a later change does not move the oldest
			c.Step(31 * time.Second)
		}, wantCode: 503},
		{name: "synced after the stall", steps: func(h *ProxyHealth, c *clocktesting.FakeClock) {
			h.QueueUpdate()
			c.Step(2 * time.Minute)
			h.Updated()
		}, wantCode: 200, wantLast: start.Add(2 * time.Minute)},
		{name: "synced, then a failing sync leaves the change queued", steps: func(h *ProxyHealth, c *clocktesting.FakeClock) {
			h.Updated()
			h.QueueUpdate()
			c.Step(time.Minute)
		}, wantCode: 503, wantLast: start},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := clocktesting.NewFakeClock(start)
			h := New(c, time.Minute)
			tt.steps(h, c)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
			if rec.Code != tt.wantCode {
				t.Fatalf("code %d, want %d", rec.Code, tt.wantCode)
			}
			var st Status
			if err := json.Unmarshal(rec.Body.Bytes(), &st); err != nil {
				t.Fatalf("body %q: %v", rec.Body.String(), err)
			}
			if !st.LastUpdated.Equal(tt.wantLast) || !st.CurrentTime.Equal(c.Now()) {
				t.Fatalf("body %+v, want lastUpdated %v currentTime %v", st, tt.wantLast, c.Now())
			}
		})
	}
}
