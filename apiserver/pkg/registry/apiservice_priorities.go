package registry

import "k8s.io/apimachinery/pkg/runtime/schema"

// APIServicePriority is the groupPriorityMinimum and versionPriority of a
// built-in group-version's local APIService, upstream's
// apiVersionPriorities (kube-apiserver's aggregator config). They order
// the groups of /apis, highest first, ties by name. A group-version not
// listed (a custom resource's) gets upstream's CRD registration's 1000 and
// 100.
func APIServicePriority(gv schema.GroupVersion) (group, version int32) {
	if p, ok := apiServicePriorities[gv]; ok {
		return p[0], p[1]
	}
	return 1000, 100
}

var apiServicePriorities = map[schema.GroupVersion][2]int32{
	{Group: "", Version: "v1"}:                             {18000, 1},
	{Group: "apiregistration.k8s.io", Version: "v1"}:       {18000, 15},
	{Group: "apps", Version: "v1"}:                         {17800, 15},
	{Group: "events.k8s.io", Version: "v1"}:                {17750, 15},
	{Group: "authentication.k8s.io", Version: "v1"}:        {17700, 15},
	{Group: "authorization.k8s.io", Version: "v1"}:         {17600, 15},
	{Group: "autoscaling", Version: "v1"}:                  {17500, 15},
	{Group: "autoscaling", Version: "v2"}:                  {17500, 30},
	{Group: "batch", Version: "v1"}:                        {17400, 15},
	{Group: "certificates.k8s.io", Version: "v1"}:          {17300, 15},
	{Group: "networking.k8s.io", Version: "v1"}:            {17200, 15},
	{Group: "policy", Version: "v1"}:                       {17100, 15},
	{Group: "rbac.authorization.k8s.io", Version: "v1"}:    {17000, 15},
	{Group: "storage.k8s.io", Version: "v1"}:               {16800, 15},
	{Group: "admissionregistration.k8s.io", Version: "v1"}: {16700, 15},
	{Group: "apiextensions.k8s.io", Version: "v1"}:         {16700, 15},
	{Group: "scheduling.k8s.io", Version: "v1"}:            {16600, 15},
	{Group: "coordination.k8s.io", Version: "v1"}:          {16500, 15},
	{Group: "node.k8s.io", Version: "v1"}:                  {16300, 15},
	{Group: "discovery.k8s.io", Version: "v1"}:             {16200, 15},
	{Group: "flowcontrol.apiserver.k8s.io", Version: "v1"}: {16100, 21},
}
