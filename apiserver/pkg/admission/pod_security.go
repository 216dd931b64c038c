package admission

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	psadmission "k8s.io/pod-security-admission/admission"
	psadmissionapi "k8s.io/pod-security-admission/admission/api"
	psapi "k8s.io/pod-security-admission/api"
	psmetrics "k8s.io/pod-security-admission/metrics"
	"k8s.io/pod-security-admission/policy"
)

// PodSecurityName is upstream's plugin name.
const PodSecurityName = "PodSecurity"

// EnforceLabel sets a namespace's level: privileged, baseline or restricted.
const EnforceLabel = psapi.EnforceLevelLabel

// PodSecurityConfig is the plugin's configuration, upstream's
// PodSecurityConfiguration: the levels and versions where a namespace sets
// none, and the exempt users, namespaces and runtime classes.
type PodSecurityConfig struct {
	Enforce, EnforceVersion string
	Audit, AuditVersion     string
	Warn, WarnVersion       string
	Exemptions              psadmissionapi.PodSecurityExemptions
}

// PodSecurity is upstream's PodSecurity admission plugin: it runs
// k8s.io/pod-security-admission, the library upstream's plugin and webhook
// use, on pods, on the workload kinds that hold a pod template (warn and
// audit only, as upstream) and on namespaces (label validation, and the
// dry run of a stricter enforce level against the namespace's pods, answered
// as warnings). Its warnings go to the response's Warning header and its
// audit annotations to the request's audit event, under upstream's
// pod-security.kubernetes.io/ prefix.
type PodSecurity struct {
	delegate *psadmission.Admission
}

// NewPodSecurity returns the plugin reading namespaces' labels through
// labels (NamespaceLifecycle's cache) and pods through objs. A nil reg
// leaves its metrics unregistered.
func NewPodSecurity(cfg PodSecurityConfig, labels func(ctx context.Context, namespace string) (map[string]string, error), objs Objects, reg prometheus.Registerer) (*PodSecurity, error) {
	orDefault := func(v, def string) string {
		if v == "" {
			return def
		}
		return v
	}
	conf := &psadmissionapi.PodSecurityConfiguration{
		Defaults: psadmissionapi.PodSecurityDefaults{
			Enforce: orDefault(cfg.Enforce, string(psapi.LevelPrivileged)), EnforceVersion: orDefault(cfg.EnforceVersion, psapi.VersionLatest),
			Audit: orDefault(cfg.Audit, string(psapi.LevelPrivileged)), AuditVersion: orDefault(cfg.AuditVersion, psapi.VersionLatest),
			Warn: orDefault(cfg.Warn, string(psapi.LevelPrivileged)), WarnVersion: orDefault(cfg.WarnVersion, psapi.VersionLatest),
		},
		Exemptions: cfg.Exemptions,
	}
	evaluator, err := policy.NewEvaluator(policy.DefaultChecks())
	if err != nil {
		return nil, err
	}
	d := &psadmission.Admission{
		Configuration:   conf,
		Evaluator:       evaluator,
		Metrics:         newPodSecurityMetrics(reg),
		NamespaceGetter: labelsNamespaceGetter(labels),
		PodLister:       objectsPodLister{objs},
	}
	if err := d.CompleteConfiguration(); err != nil {
		return nil, err
	}
	if err := d.ValidateConfiguration(); err != nil {
		return nil, fmt.Errorf("pod security configuration: %w", err)
	}
	return &PodSecurity{delegate: d}, nil
}

// Name implements Plugin.
func (*PodSecurity) Name() string { return PodSecurityName }

// Validate implements ValidationInterface, as upstream's in-tree plugin
// wraps the library.
func (p *PodSecurity) Validate(ctx context.Context, a *Attributes) error {
	if a.Operation != Create && a.Operation != Update {
		return nil
	}
	gr := a.Resource.GroupResource()
	if gr != (schema.GroupResource{Resource: "pods"}) && gr != (schema.GroupResource{Resource: "namespaces"}) &&
		!p.delegate.PodSpecExtractor.HasPodSpec(gr) {
		return nil
	}
	result := p.delegate.Validate(ctx, psAttributes{a})
	for _, w := range result.Warnings {
		AddWarning(ctx, w)
	}
	for k, v := range result.AuditAnnotations {
		AddAuditAnnotation(ctx, psapi.AuditAnnotationPrefix+k, v)
	}
	if result.Allowed {
		return nil
	}
	retval := forbidden(a, errors.New("Not allowed by PodSecurity")).(*apierrors.StatusError)
	if r := result.Result; r != nil {
		if r.Message != "" {
			retval.ErrStatus.Message = r.Message
		}
		if r.Reason != "" {
			retval.ErrStatus.Reason = r.Reason
		}
		if r.Details != nil {
			retval.ErrStatus.Details = r.Details
		}
		if r.Code != 0 {
			retval.ErrStatus.Code = r.Code
		}
	}
	return retval
}

// psAttributes presents a write as the library's Attributes.
type psAttributes struct{ a *Attributes }

func (p psAttributes) GetName() string { return p.a.Name }

// GetNamespace is the namespace's own name for a namespace, as upstream's
// request info has it.
func (p psAttributes) GetNamespace() string {
	if p.a.Namespace == "" && p.a.Resource.Group == "" && p.a.Resource.Resource == "namespaces" {
		return p.a.Name
	}
	return p.a.Namespace
}
func (p psAttributes) GetResource() schema.GroupVersionResource { return p.a.Resource }
func (p psAttributes) GetKind() schema.GroupVersionKind         { return p.a.Kind }
func (p psAttributes) GetSubresource() string                   { return p.a.Subresource }
func (p psAttributes) GetOperation() admissionv1.Operation {
	return admissionv1.Operation(p.a.Operation)
}
func (p psAttributes) GetObject() (runtime.Object, error)    { return p.a.Object, nil }
func (p psAttributes) GetOldObject() (runtime.Object, error) { return p.a.OldObject, nil }
func (p psAttributes) GetUserName() string {
	if p.a.User == nil {
		return ""
	}
	return p.a.User.Name
}

// labelsNamespaceGetter gives the library a namespace's name and labels,
// all it reads of one.
type labelsNamespaceGetter func(ctx context.Context, namespace string) (map[string]string, error)

func (g labelsNamespaceGetter) GetNamespace(ctx context.Context, name string) (*corev1.Namespace, error) {
	labels, err := g(ctx, name)
	if err != nil {
		return nil, err
	}
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}, nil
}

type objectsPodLister struct{ objs Objects }

func (l objectsPodLister) ListPods(ctx context.Context, namespace string) ([]*corev1.Pod, error) {
	items, err := l.objs.List(ctx, "", "pods", namespace)
	if err != nil {
		return nil, err
	}
	pods := make([]*corev1.Pod, 0, len(items))
	for _, o := range items {
		if pod, ok := o.(*corev1.Pod); ok {
			pods = append(pods, pod)
		}
	}
	return pods, nil
}

// podSecurityMetrics are upstream's pod_security_* counters, with
// upstream's names and labels.
type podSecurityMetrics struct {
	evaluations, exemptions, errors *prometheus.CounterVec
}

func newPodSecurityMetrics(reg prometheus.Registerer) *podSecurityMetrics {
	m := &podSecurityMetrics{
		evaluations: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pod_security_evaluations_total",
			Help: "Number of policy evaluations that occurred, not counting ignored or exempt requests."},
			[]string{"decision", "policy_level", "policy_version", "mode", "request_operation", "resource", "subresource"}),
		exemptions: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pod_security_exemptions_total",
			Help: "Number of exempt requests, not counting ignored or out of scope requests."},
			[]string{"request_operation", "resource", "subresource"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "pod_security_errors_total",
			Help: "Number of errors preventing normal evaluation. Non-fatal errors may result in the latest restricted profile being used for evaluation."},
			[]string{"fatal", "request_operation", "resource", "subresource"}),
	}
	if reg != nil {
		reg.MustRegister(m.evaluations, m.exemptions, m.errors)
	}
	return m
}

// psResourceLabel is upstream's resource label: pod, namespace or
// controller (anything else the plugin sees holds a pod template).
func psResourceLabel(r schema.GroupVersionResource) string {
	switch r.GroupResource() {
	case schema.GroupResource{Resource: "pods"}:
		return "pod"
	case schema.GroupResource{Resource: "namespaces"}:
		return "namespace"
	}
	return "controller"
}

// podSecurityAPIVersion is the Kubernetes version skiff serves (its
// /version): a policy version past it counts as "future", as upstream's.
var podSecurityAPIVersion = psapi.MajorMinorVersion(1, 32)

func psOperationLabel(op admissionv1.Operation) string { return strings.ToLower(string(op)) }

func (m *podSecurityMetrics) RecordEvaluation(decision psmetrics.Decision, policy psapi.LevelVersion, mode psmetrics.Mode, attrs psapi.Attributes) {
	version := "latest" // privileged is always effectively latest
	if !policy.Version.Latest() && policy.Level != psapi.LevelPrivileged {
		if podSecurityAPIVersion.Older(policy.Version) {
			version = "future"
		} else {
			version = policy.Version.String()
		}
	}
	m.evaluations.WithLabelValues(string(decision), string(policy.Level), version, string(mode),
		psOperationLabel(attrs.GetOperation()), psResourceLabel(attrs.GetResource()), attrs.GetSubresource()).Inc()
}

func (m *podSecurityMetrics) RecordExemption(attrs psapi.Attributes) {
	m.exemptions.WithLabelValues(psOperationLabel(attrs.GetOperation()), psResourceLabel(attrs.GetResource()), attrs.GetSubresource()).Inc()
}

func (m *podSecurityMetrics) RecordError(fatal bool, attrs psapi.Attributes) {
	m.errors.WithLabelValues(fmt.Sprint(fatal), psOperationLabel(attrs.GetOperation()), psResourceLabel(attrs.GetResource()), attrs.GetSubresource()).Inc()
}
