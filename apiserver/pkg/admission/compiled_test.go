package admission

import (
	"context"
	"errors"
	"slices"
	"testing"
)

// recorder is a plugin with the interfaces its fields say, recording calls.
type recorder struct {
	name string
	log  *[]string
	fail bool
}

func (r recorder) Name() string { return r.name }

type mutator struct{ recorder }

func (m mutator) Admit(context.Context, *Attributes) error {
	*m.log = append(*m.log, "admit "+m.name)
	if m.fail {
		return errors.New(m.name)
	}
	return nil
}

type validator struct{ recorder }

func (v validator) Validate(context.Context, *Attributes) error {
	*v.log = append(*v.log, "validate "+v.name)
	if v.fail {
		return errors.New(v.name)
	}
	return nil
}

type both struct{ recorder }

func (b both) Admit(context.Context, *Attributes) error {
	*b.log = append(*b.log, "admit "+b.name)
	return nil
}

func (b both) Validate(context.Context, *Attributes) error {
	*b.log = append(*b.log, "validate "+b.name)
	return nil
}

func (b both) Deleted(context.Context, *Attributes) { *b.log = append(*b.log, "deleted "+b.name) }

// TestCompiledRunsAsTheChain: a compiled chain calls the same plugins in
// the same order as the chain, and stops at the same error.
func TestCompiledRunsAsTheChain(t *testing.T) {
	run := func(chain func(*[]string) Chain, compiled bool) ([]string, error, error) {
		var log []string
		c := chain(&log)
		var a interface {
			MutationInterface
			ValidationInterface
			DeleteObserver
		} = c
		if compiled {
			a = c.Compile()
		}
		errA := a.Admit(context.Background(), &Attributes{})
		errV := a.Validate(context.Background(), &Attributes{})
		a.Deleted(context.Background(), &Attributes{})
		return log, errA, errV
	}
	for name, chain := range map[string]func(*[]string) Chain{
		"all pass": func(log *[]string) Chain {
			return Chain{mutator{recorder{"m1", log, false}}, both{recorder{"b", log, false}}, validator{recorder{"v1", log, false}}, mutator{recorder{"m2", log, false}}}
		},
		"a mutator and a validator fail": func(log *[]string) Chain {
			return Chain{mutator{recorder{"m1", log, false}}, mutator{recorder{"m2", log, true}}, both{recorder{"b", log, false}},
				validator{recorder{"v1", log, true}}, validator{recorder{"v2", log, false}}}
		},
	} {
		t.Run(name, func(t *testing.T) {
			wantLog, wantA, wantV := run(chain, false)
			gotLog, gotA, gotV := run(chain, true)
			if !slices.Equal(gotLog, wantLog) {
				t.Errorf("calls %q, want %q", gotLog, wantLog)
			}
			if errString(gotA) != errString(wantA) || errString(gotV) != errString(wantV) {
				t.Errorf("errors %v, %v; want %v, %v", gotA, gotV, wantA, wantV)
			}
			if len(gotLog) == 0 {
				t.Error("no plugin was called")
			}
		})
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
