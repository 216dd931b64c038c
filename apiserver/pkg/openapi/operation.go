package openapi

import (
	"fmt"
	"strings"
	"unicode"

	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/util"
)

// operationVerbs are the words route operation names start with. The
// shortest match wins, so "deletecollectionNamespacedPod" splits into
// "delete" and "collectionNamespacedPod", giving upstream's
// deleteCoreV1CollectionNamespacedPod.
var operationVerbs = []string{"get", "log", "read", "replace", "patch", "delete", "deletecollection", "watch", "connect", "proxy", "list", "create"}

// operationNamer builds upstream's operation IDs and tags: the route's
// operation name with the group and version spliced in after its verb
// ("listNamespacedPod" on /api/v1/... becomes "listCoreV1NamespacedPod",
// tagged "core_v1").
type operationNamer struct {
	verbs util.Trie
}

func newOperationNamer() *operationNamer {
	return &operationNamer{verbs: util.NewTrie(operationVerbs)}
}

func (n *operationNamer) idAndTags(r common.Route) (string, []string, error) {
	op := r.OperationName()
	verb, ok := n.verbs.GetPrefix(op)
	if !ok {
		return op, nil, fmt.Errorf("openapi: operation name %q does not start with a verb", op)
	}
	rest := op[len(verb):]
	parts := strings.Split(strings.Trim(r.Path(), "/"), "/")
	if len(parts) > 0 && parts[0] == "api" {
		parts = append([]string{"apis", "core"}, parts[1:]...)
	}
	prefix := verb
	var tags []string
	switch {
	case len(parts) >= 2 && parts[0] == "apis":
		group := strings.TrimSuffix(parts[1], ".k8s.io")
		prefix += camel(group, true)
		tag := camel(group, false)
		if len(parts) > 2 {
			prefix += camel(parts[2], true)
			tag += "_" + camel(parts[2], false)
		}
		tags = append(tags, tag)
	case len(parts) >= 1:
		tags = append(tags, camel(parts[0], false))
	}
	return prefix + camel(rest, prefix != ""), tags, nil
}

// camel keeps letters, underscores and (not leading) digits of s, dropping
// everything else and upper-casing the letter after each dropped rune; the
// first letter is upper-cased when upperFirst is set. "rbac.authorization"
// becomes "RbacAuthorization".
func camel(s string, upperFirst bool) string {
	var b strings.Builder
	upper := upperFirst
	for i, r := range s {
		if unicode.IsLetter(r) || r == '_' || (i != 0 && unicode.IsDigit(r)) {
			if upper {
				r = unicode.ToUpper(r)
				upper = false
			}
			b.WriteRune(r)
			continue
		}
		upper = true
	}
	return b.String()
}
