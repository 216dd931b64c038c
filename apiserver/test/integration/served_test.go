package integration

import (
	"slices"
	"testing"
	"time"

	"skiff.dev/apiserver/pkg/server"
)

// What --help says is served (server.ServedGroupVersions) is what
// discovery lists, with the built-in metrics.k8s.io on.
func TestServedGroupVersionsMatchDiscovery(t *testing.T) {
	ts := start(t, func(o *server.Options) { o.MetricResolution = time.Minute })
	groups, err := ts.Client.Discovery().ServerGroups()
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, g := range groups.Groups {
		for _, v := range g.Versions {
			if g.Name == "" {
				listed = append(listed, "core/"+v.Version)
			} else {
				listed = append(listed, v.GroupVersion)
			}
		}
	}
	want := server.ServedGroupVersions()
	slices.Sort(listed)
	slices.Sort(want)
	if !slices.Equal(listed, want) {
		t.Errorf("discovery lists %v\n--help says %v", listed, want)
	}
}
