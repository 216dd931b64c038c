package pod

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// recHook records its steps in a shared log and fails the ones listed.
type recHook struct {
	name string
	log  *[]string
	fail map[string]error
}

func (h *recHook) Name() string { return h.name }
func (h *recHook) step(s string) error {
	*h.log = append(*h.log, h.name+"."+s)
	return h.fail[s]
}
func (h *recHook) Prepare(context.Context, *State) error { return h.step("prepare") }
func (h *recHook) Run(context.Context, *State) error     { return h.step("run") }
func (h *recHook) Destroy(context.Context, *State) error { return h.step("destroy") }

// runOnly implements only Runner.
type runOnly struct {
	name string
	log  *[]string
}

func (h *runOnly) Name() string { return h.name }
func (h *runOnly) Run(context.Context, *State) error {
	*h.log = append(*h.log, h.name+".run")
	return nil
}

func TestLifecycle(t *testing.T) {
	tests := []struct {
		name     string
		fail     map[string]map[string]error // hook -> step -> error
		call     func(*Lifecycle, *State) error
		wantLog  []string
		wantErrs []string
		prepared bool
	}{
		{
			name:     "prepare runs in order",
			call:     func(l *Lifecycle, s *State) error { return l.Prepare(context.Background(), s) },
			wantLog:  []string{"network.prepare", "images.prepare", "containers.prepare"},
			prepared: true,
		},
		{
			name:     "prepare stops at the first error",
			fail:     map[string]map[string]error{"images": {"prepare": errBoom}},
			call:     func(l *Lifecycle, s *State) error { return l.Prepare(context.Background(), s) },
			wantLog:  []string{"network.prepare", "images.prepare"},
			wantErrs: []string{"images: boom"},
		},
		{
			name:    "run runs in order, including run-only hooks",
			call:    func(l *Lifecycle, s *State) error { return l.Run(context.Background(), s) },
			wantLog: []string{"network.run", "images.run", "containers.run", "probes.run"},
		},
		{
			name:    "destroy runs in reverse order, skipping hooks without Destroy",
			call:    func(l *Lifecycle, s *State) error { return l.Destroy(context.Background(), s) },
			wantLog: []string{"containers.destroy", "images.destroy", "network.destroy"},
		},
		{
			name: "destroy runs every hook and joins the errors",
			fail: map[string]map[string]error{
				"containers": {"destroy": errors.New("stop failed")},
				"network":    {"destroy": errors.New("CNI DEL failed")},
			},
			call:     func(l *Lifecycle, s *State) error { return l.Destroy(context.Background(), s) },
			wantLog:  []string{"containers.destroy", "images.destroy", "network.destroy"},
			wantErrs: []string{"containers: stop failed", "network: CNI DEL failed"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var log []string
			mk := func(name string) *recHook { return &recHook{name: name, log: &log, fail: tt.fail[name]} }
			l := &Lifecycle{Hooks: []Hook{mk("network"), mk("images"), mk("containers"), &runOnly{name: "probes", log: &log}}}
			s := NewState(nil)
			err := tt.call(l, s)
			if !reflect.DeepEqual(log, tt.wantLog) {
				t.Errorf("steps = %v, want %v", log, tt.wantLog)
			}
			if len(tt.wantErrs) == 0 && err != nil {
				t.Errorf("err = %v, want nil", err)
			}
			for _, want := range tt.wantErrs {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("err = %v, want it to contain %q", err, want)
				}
			}
			if len(tt.wantErrs) > 0 && !errors.Is(err, errBoom) && tt.fail["images"] != nil {
				t.Errorf("err %v does not wrap the hook's error", err)
			}
			if s.Prepared != tt.prepared {
				t.Errorf("prepared = %v, want %v", s.Prepared, tt.prepared)
			}
		})
	}
}
