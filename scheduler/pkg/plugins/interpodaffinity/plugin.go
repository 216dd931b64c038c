package interpodaffinity

import (
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	corelisters "k8s.io/client-go/listers/core/v1"

	"skiff.dev/scheduler/pkg/framework"
)

// Name is the plugin's name.
const Name = "InterPodAffinity"

// Args are upstream's InterPodAffinityArgs.
type Args struct {
	// HardPodAffinityWeight is the score weight of an existing pod's
	// required affinity term the incoming pod matches; 0..100, default 1.
	HardPodAffinityWeight *int32 `json:"hardPodAffinityWeight,omitempty"`
	// IgnorePreferredTermsOfExistingPods skips scoring for pods without
	// preferred terms of their own.
	IgnorePreferredTermsOfExistingPods bool `json:"ignorePreferredTermsOfExistingPods,omitempty"`
}

// InterPodAffinity is the plugin.
type InterPodAffinity struct {
	handle                  framework.Handle
	hardPodAffinityWeight   int32
	ignorePreferredOfOthers bool
}

var (
	_ framework.PreFilterPlugin = (*InterPodAffinity)(nil)
	_ framework.FilterPlugin    = (*InterPodAffinity)(nil)
	_ framework.PreScorePlugin  = (*InterPodAffinity)(nil)
	_ framework.ScorePlugin     = (*InterPodAffinity)(nil)
)

// New builds the plugin.
func New(raw json.RawMessage, h framework.Handle) (framework.Plugin, error) {
	var args Args
	if err := framework.DecodeArgs(raw, "InterPodAffinityArgs", &args); err != nil {
		return nil, err
	}
	w := int32(1)
	if args.HardPodAffinityWeight != nil {
		w = *args.HardPodAffinityWeight
	}
	if w < 0 || w > 100 {
		return nil, fmt.Errorf("hardPodAffinityWeight: Invalid value: %d: not in valid range [0, 100]", w)
	}
	return &InterPodAffinity{handle: h, hardPodAffinityWeight: w,
		ignorePreferredOfOthers: args.IgnorePreferredTermsOfExistingPods}, nil
}

// Name returns Name.
func (*InterPodAffinity) Name() string { return Name }

// nsLister is the namespace lister, nil when namespaces are not watched.
func (pl *InterPodAffinity) nsLister() corelisters.NamespaceLister {
	return pl.handle.Listers().Namespaces
}

// topologyPair is one topology domain: a node label key and value.
type topologyPair struct {
	key, value string
}

// mergeNamespaces turns a term's namespace selector into namespace names
// (the namespaces that exist now), as upstream does for the incoming
// pod's terms, so that matching existing pods needs no namespace labels.
func (pl *InterPodAffinity) mergeNamespaces(at *framework.AffinityTerm) error {
	if at.NamespaceSelector.Empty() {
		return nil
	}
	if l := pl.nsLister(); l != nil {
		nss, err := l.List(at.NamespaceSelector)
		if err != nil {
			return err
		}
		for _, ns := range nss {
			at.Namespaces.Insert(ns.Name)
		}
	}
	at.NamespaceSelector = labels.Nothing()
	return nil
}

// namespaceLabels returns the labels of the pod's namespace (nil when
// unknown).
func (pl *InterPodAffinity) namespaceLabels(ns string) labels.Set {
	l := pl.nsLister()
	if l == nil {
		return nil
	}
	n, err := l.Get(ns)
	if err != nil {
		return nil
	}
	return n.Labels
}

func cloneTerms(in []framework.AffinityTerm) []framework.AffinityTerm {
	out := make([]framework.AffinityTerm, len(in))
	for i := range in {
		out[i] = in[i].Clone()
	}
	return out
}

func cloneWeighted(in []framework.WeightedAffinityTerm) []framework.WeightedAffinityTerm {
	out := make([]framework.WeightedAffinityTerm, len(in))
	for i := range in {
		out[i] = framework.WeightedAffinityTerm{AffinityTerm: in[i].AffinityTerm.Clone(), Weight: in[i].Weight}
	}
	return out
}

// podMatchesAllAffinityTerms is true when pod matches every term (and
// there is at least one).
func podMatchesAllAffinityTerms(terms []framework.AffinityTerm, pod *corev1.Pod) bool {
	if len(terms) == 0 {
		return false
	}
	for i := range terms {
		if !terms[i].Matches(pod, nil) {
			return false
		}
	}
	return true
}
