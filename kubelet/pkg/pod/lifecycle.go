package pod

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/klog/v2"
)

// Hook is one step of a pod's lifecycle. It implements any of Preparer,
// Runner and Destroyer.
type Hook interface {
	Name() string
}

// Preparer is done once, before the pod runs; a failure is retried on the
// next sync.
type Preparer interface {
	Hook
	Prepare(ctx context.Context, s *State) error
}

// Runner is done on every sync of a prepared pod.
type Runner interface {
	Hook
	Run(ctx context.Context, s *State) error
}

// Destroyer undoes what the hook did. It must be safe to call for a pod
// the hook never prepared.
type Destroyer interface {
	Hook
	Destroy(ctx context.Context, s *State) error
}

// Releaser frees what a pod that has finished (Succeeded or Failed) holds
// while keeping what a finished pod still shows until its object is
// deleted: the containers hook stops the containers but keeps the exited
// ones and their logs, as upstream's kubelet keeps them for `kubectl logs`
// until the pod is deleted. A hook that is not a Releaser is destroyed
// when the pod finishes.
type Releaser interface {
	Hook
	Release(ctx context.Context, s *State) error
}

// Lifecycle is the ordered list of hooks.
type Lifecycle struct {
	Hooks []Hook
}

// Prepare runs the preparers in order and stops at the first error, or
// when ctx ends.
func (l *Lifecycle) Prepare(ctx context.Context, s *State) error {
	for _, h := range l.Hooks {
		if p, ok := h.(Preparer); ok {
			if ctx.Err() != nil {
				return context.Cause(ctx)
			}
			start := time.Now()
			err := p.Prepare(ctx, s)
			klog.FromContext(ctx).V(4).Info("Prepared", "hook", h.Name(), "duration", time.Since(start), "err", err)
			if err != nil {
				return fmt.Errorf("%s: %w", h.Name(), err)
			}
		}
	}
	s.Prepared = true
	return nil
}

// Run runs the runners in order and stops at the first error (a hook
// relies on the ones before it), or when ctx ends.
func (l *Lifecycle) Run(ctx context.Context, s *State) error {
	for _, h := range l.Hooks {
		if r, ok := h.(Runner); ok {
			if ctx.Err() != nil {
				return context.Cause(ctx)
			}
			start := time.Now()
			err := r.Run(ctx, s)
			klog.FromContext(ctx).V(5).Info("Ran", "hook", h.Name(), "duration", time.Since(start), "err", err)
			if err != nil {
				return fmt.Errorf("%s: %w", h.Name(), err)
			}
		}
	}
	return nil
}

// Destroy runs every destroyer, in reverse order, and joins their errors.
func (l *Lifecycle) Destroy(ctx context.Context, s *State) error {
	var errs []error
	for i := len(l.Hooks) - 1; i >= 0; i-- {
		if d, ok := l.Hooks[i].(Destroyer); ok {
			if err := d.Destroy(ctx, s); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", l.Hooks[i].Name(), err))
			}
		}
	}
	return errors.Join(errs...)
}

// Release runs, in reverse order, every hook's Release, or its Destroy
// when it has none, and joins their errors. Once ctx ends (a shorter
// grace period cut the release short) no further hook runs: what the
// containers may still use is not torn down under them.
func (l *Lifecycle) Release(ctx context.Context, s *State) error {
	var errs []error
	for i := len(l.Hooks) - 1; i >= 0; i-- {
		if ctx.Err() != nil {
			errs = append(errs, context.Cause(ctx))
			break
		}
		var err error
		switch h := l.Hooks[i].(type) {
		case Releaser:
			err = h.Release(ctx, s)
		case Destroyer:
			err = h.Destroy(ctx, s)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", l.Hooks[i].Name(), err))
		}
	}
	return errors.Join(errs...)
}
