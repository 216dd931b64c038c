package nodeaffinity

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
)

// MatchNodeSelectorTerms is true when the node matches any of the terms
// (terms are ORed; the requirements inside a term are ANDed). A term with
// no requirements, or an invalid one, matches nothing.
func MatchNodeSelectorTerms(node *corev1.Node, terms []corev1.NodeSelectorTerm) bool {
	for i := range terms {
		if matchTerm(node, &terms[i]) {
			return true
		}
	}
	return false
}

func matchTerm(node *corev1.Node, term *corev1.NodeSelectorTerm) bool {
	if len(term.MatchExpressions) == 0 && len(term.MatchFields) == 0 {
		return false
	}
	if len(term.MatchExpressions) > 0 {
		sel, err := labelSelector(term.MatchExpressions)
		if err != nil || !sel.Matches(labels.Set(node.Labels)) {
			return false
		}
	}
	if len(term.MatchFields) > 0 {
		sel, err := fieldSelector(term.MatchFields)
		if err != nil || !sel.Matches(fields.Set{"metadata.name": node.Name}) {
			return false
		}
	}
	return true
}

var operators = map[corev1.NodeSelectorOperator]selection.Operator{
	corev1.NodeSelectorOpIn:           selection.In,
	corev1.NodeSelectorOpNotIn:        selection.NotIn,
	corev1.NodeSelectorOpExists:       selection.Exists,
	corev1.NodeSelectorOpDoesNotExist: selection.DoesNotExist,
	corev1.NodeSelectorOpGt:           selection.GreaterThan,
	corev1.NodeSelectorOpLt:           selection.LessThan,
}

func labelSelector(reqs []corev1.NodeSelectorRequirement) (labels.Selector, error) {
	sel := labels.NewSelector()
	for _, r := range reqs {
		op, ok := operators[r.Operator]
		if !ok {
			return nil, fmt.Errorf("%q is not a valid node selector operator", r.Operator)
		}
		req, err := labels.NewRequirement(r.Key, op, r.Values)
		if err != nil {
			return nil, err
		}
		sel = sel.Add(*req)
	}
	return sel, nil
}

// fieldSelector supports metadata.name with In (one value) and NotIn,
// the only field upstream allows in matchFields.
func fieldSelector(reqs []corev1.NodeSelectorRequirement) (fields.Selector, error) {
	var sels []fields.Selector
	for _, r := range reqs {
		if r.Key != "metadata.name" {
			return nil, fmt.Errorf("%q is not a valid field for a node selector", r.Key)
		}
		if len(r.Values) != 1 {
			return nil, fmt.Errorf("matchFields %q needs exactly one value", r.Key)
		}
		switch r.Operator {
		case corev1.NodeSelectorOpIn:
			sels = append(sels, fields.OneTermEqualSelector(r.Key, r.Values[0]))
		case corev1.NodeSelectorOpNotIn:
			sels = append(sels, fields.OneTermNotEqualSelector(r.Key, r.Values[0]))
		default:
			return nil, fmt.Errorf("%q is not a valid operator for matchFields", r.Operator)
		}
	}
	return fields.AndSelectors(sels...), nil
}
