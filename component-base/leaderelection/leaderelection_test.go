package leaderelection

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/rest"
)

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		edit func(*Options)
		want int
	}{
		{"defaults", func(*Options) {}, 0},
		{"off ignores durations", func(o *Options) { o.LeaderElect = false; o.LeaseDuration = 0 }, 0},
		{"lease not above renew", func(o *Options) { o.LeaseDuration = o.RenewDeadline }, 1},
		{"retry not below renew", func(o *Options) { o.RetryPeriod = o.RenewDeadline }, 1},
		{"no name", func(o *Options) { o.ResourceName = "" }, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := NewOptions("kube-scheduler")
			tt.edit(o)
			if got := o.Validate(); len(got) != tt.want {
				t.Errorf("Validate() = %v, want %d errors", got, tt.want)
			}
		})
	}
}

func TestRunWithoutElectionRunsAtOnce(t *testing.T) {
	o := NewOptions("x")
	o.LeaderElect = false
	var leading atomic.Bool
	var sawLeading bool
	want := errors.New("done")
	err := Run(context.Background(), o, &rest.Config{Host: "https://127.0.0.1:1", Timeout: time.Second}, &leading, func(context.Context) error {
		sawLeading = leading.Load()
		return want
	})
	if !errors.Is(err, want) || !sawLeading || leading.Load() {
		t.Errorf("Run = %v, leading while running = %v, after = %v", err, sawLeading, leading.Load())
	}
}
