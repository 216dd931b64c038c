package framework

import (
	"errors"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"
)

// AffinityTerm is a parsed PodAffinityTerm, as upstream's: the namespaces
// it names (the pod's own when it names none and has no namespace
// selector), its label selector and namespace selector, and its topology
// key.
type AffinityTerm struct {
	Namespaces        sets.Set[string]
	Selector          labels.Selector
	TopologyKey       string
	NamespaceSelector labels.Selector
}

// Matches is true when pod is in one of the term's namespaces (by name, or
// by its namespace's labels nsLabels matching the namespace selector) and
// its labels match the term's selector.
func (at *AffinityTerm) Matches(pod *corev1.Pod, nsLabels labels.Set) bool {
	if at.Namespaces.Has(pod.Namespace) || at.NamespaceSelector.Matches(nsLabels) {
		return at.Selector.Matches(labels.Set(pod.Labels))
	}
	return false
}

// Clone copies the namespace set so a cycle may extend it.
func (at AffinityTerm) Clone() AffinityTerm {
	at.Namespaces = at.Namespaces.Clone()
	return at
}

// WeightedAffinityTerm is a preferred term with its weight.
type WeightedAffinityTerm struct {
	AffinityTerm
	Weight int32
}

func newAffinityTerm(pod *corev1.Pod, term *corev1.PodAffinityTerm) (*AffinityTerm, error) {
	selector, err := metav1.LabelSelectorAsSelector(term.LabelSelector)
	if err != nil {
		return nil, err
	}
	namespaces := sets.New(term.Namespaces...)
	if len(term.Namespaces) == 0 && term.NamespaceSelector == nil {
		namespaces.Insert(pod.Namespace)
	}
	nsSelector, err := metav1.LabelSelectorAsSelector(term.NamespaceSelector)
	if err != nil {
		return nil, err
	}
	return &AffinityTerm{Namespaces: namespaces, Selector: selector, TopologyKey: term.TopologyKey, NamespaceSelector: nsSelector}, nil
}

func affinityTerms(pod *corev1.Pod, terms []corev1.PodAffinityTerm) ([]AffinityTerm, error) {
	if len(terms) == 0 {
		return nil, nil
	}
	var out []AffinityTerm
	var errs []error
	for i := range terms {
		t, err := newAffinityTerm(pod, &terms[i])
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, *t)
	}
	return out, errors.Join(errs...)
}

func weightedAffinityTerms(pod *corev1.Pod, terms []corev1.WeightedPodAffinityTerm) ([]WeightedAffinityTerm, error) {
	if len(terms) == 0 {
		return nil, nil
	}
	var out []WeightedAffinityTerm
	var errs []error
	for i := range terms {
		t, err := newAffinityTerm(pod, &terms[i].PodAffinityTerm)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, WeightedAffinityTerm{AffinityTerm: *t, Weight: terms[i].Weight})
	}
	return out, errors.Join(errs...)
}

// parseAffinity fills the pod's parsed affinity terms; a term that does
// not parse is left out and reported in ParseError.
func (pi *PodInfo) parseAffinity() {
	a := pi.Pod.Spec.Affinity
	if a == nil {
		return
	}
	var errs []error
	add := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	var err error
	if pa := a.PodAffinity; pa != nil {
		pi.RequiredAffinityTerms, err = affinityTerms(pi.Pod, pa.RequiredDuringSchedulingIgnoredDuringExecution)
		add(err)
		pi.PreferredAffinityTerms, err = weightedAffinityTerms(pi.Pod, pa.PreferredDuringSchedulingIgnoredDuringExecution)
		add(err)
	}
	if paa := a.PodAntiAffinity; paa != nil {
		pi.RequiredAntiAffinityTerms, err = affinityTerms(pi.Pod, paa.RequiredDuringSchedulingIgnoredDuringExecution)
		add(err)
		pi.PreferredAntiAffinityTerms, err = weightedAffinityTerms(pi.Pod, paa.PreferredDuringSchedulingIgnoredDuringExecution)
		add(err)
	}
	pi.ParseError = errors.Join(errs...)
}

// hasAffinity is upstream's "pod with affinity": any pod (anti-)affinity.
func (pi *PodInfo) hasAffinity() bool {
	a := pi.Pod.Spec.Affinity
	return a != nil && (a.PodAffinity != nil || a.PodAntiAffinity != nil)
}

// hasRequiredAntiAffinity is true when the pod has required anti-affinity terms.
func (pi *PodInfo) hasRequiredAntiAffinity() bool { return len(pi.RequiredAntiAffinityTerms) > 0 }
