package server

import (
	"context"
	"fmt"
	"os"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	"skiff.dev/apiserver/pkg/registry/core/service"
	"skiff.dev/apiserver/pkg/storage"
)

// runServiceRepair runs the repair of Service IP and node port allocations
// at start and every --service-repair-interval, as upstream's repair
// controllers (every 3 minutes). Its writes are compare-and-swap, so every
// API server of a cluster runs it.
func (s *Server) runServiceRepair(ctx context.Context) error {
	logger := klog.FromContext(ctx).WithName("service-repair")
	ctx = klog.NewContext(ctx, logger)
	host, _ := os.Hostname()
	repair := &service.ServiceRepair{
		Alloc: s.allocator,
		Services: func(ctx context.Context) ([]corev1.Service, error) {
			list, err := s.store("", "services").List(ctx, "", storage.ListOptions{FromStorage: true})
			if err != nil {
				return nil, err
			}
			return list.(*corev1.ServiceList).Items, nil
		},
		Event: func(ctx context.Context, e service.RepairEvent) {
			if err := s.recordServiceEvent(ctx, e, host); err != nil {
				logger.Error(err, "recording an event", "service", klog.KObj(e.Service), "reason", e.Reason)
			}
		},
		LeakPasses: s.opts.ServiceRepairLeakPasses,
		Found: func(kind, errType string) {
			if kind == "ip" {
				s.metrics.ClusterIPRepairErrors.WithLabelValues(errType).Inc()
			} else {
				s.metrics.NodePortRepairErrors.WithLabelValues(errType).Inc()
			}
		},
	}
	interval := s.opts.ServiceRepairInterval
	if interval <= 0 {
		interval = 3 * time.Minute
	}
	// Wait for the bootstrap objects (the namespaces events go to).
	select {
	case <-ctx.Done():
		return nil
	case <-s.bootstrapped:
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if err := repair.RunOnce(ctx); err != nil && ctx.Err() == nil {
			// One pass repairs both: its failure counts for both.
			s.metrics.ClusterIPRepairReconcileErrors.Inc()
			s.metrics.NodePortRepairReconcileErrors.Inc()
			logger.Error(err, "repairing service allocations")
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// recordServiceEvent writes an events.k8s.io-style Warning (stored as a
// core Event) on the Service.
func (s *Server) recordServiceEvent(ctx context.Context, e service.RepairEvent, host string) error {
	now := time.Now()
	ev := &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{
			Name:      fmt.Sprintf("%s.%x", e.Service.Name, now.UnixNano()),
			Namespace: e.Service.Namespace,
		},
		InvolvedObject: corev1.ObjectReference{
			Kind: "Service", APIVersion: "v1", Namespace: e.Service.Namespace, Name: e.Service.Name,
			UID: e.Service.UID, ResourceVersion: e.Service.ResourceVersion,
		},
		Reason: e.Reason, Message: e.Note, Type: corev1.EventTypeWarning, Action: e.Action,
		EventTime:           metav1.NewMicroTime(now),
		ReportingController: e.Controller,
		ReportingInstance:   e.Controller + "-" + host,
	}
	_, err := s.store("", "events").Create(ctx, e.Service.Namespace, ev, false)
	return err
}
