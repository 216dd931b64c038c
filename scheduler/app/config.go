package app

import (
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/informers"

	"skiff.dev/component-base/clientconfig"
	"skiff.dev/scheduler/pkg/config"
	"skiff.dev/scheduler/pkg/framework"
)

// settings are the options completed with the configuration file.
type settings struct {
	profiles                 []framework.Profile
	percentageOfNodesToScore int32
	initialBackoff           time.Duration
	maxBackoff               time.Duration
}

// complete loads --config, when given, into the options (client
// connection, leader election unless given as flags) and returns the
// profiles; without it, one default profile named --scheduler-name.
func (o *Options) complete(registry framework.Registry) (*settings, error) {
	s := &settings{initialBackoff: time.Second, maxBackoff: 10 * time.Second}
	if o.ConfigFile == "" {
		s.profiles = []framework.Profile{{SchedulerName: o.SchedulerName, Plugins: DefaultPlugins()}}
		return s, nil
	}
	registered := func(name string) bool { _, ok := registry[name]; return ok }
	c, err := config.LoadFile(o.ConfigFile, DefaultPlugins(), registered)
	if err != nil {
		return nil, err
	}
	f := c.File
	s.profiles = c.Profiles
	if f.PercentageOfNodesToScore != nil {
		s.percentageOfNodesToScore = *f.PercentageOfNodesToScore
	}
	if f.PodInitialBackoffSeconds != nil {
		s.initialBackoff = time.Duration(*f.PodInitialBackoffSeconds) * time.Second
	}
	if f.PodMaxBackoffSeconds != nil {
		s.maxBackoff = time.Duration(*f.PodMaxBackoffSeconds) * time.Second
	}
	if s.maxBackoff < s.initialBackoff {
		return nil, fmt.Errorf("scheduler configuration %s: podMaxBackoffSeconds must not be less than podInitialBackoffSeconds", o.ConfigFile)
	}
	o.applyClientConnection(f.ClientConnection)
	o.applyLeaderElection(f.LeaderElection)
	if errs := o.LeaderElection.Validate(); len(errs) > 0 {
		return nil, fmt.Errorf("scheduler configuration %s: leaderElection: %v", o.ConfigFile, errs)
	}
	return s, nil
}

// applyClientConnection takes the kubeconfig and limits from the file, as
// upstream ignores the deprecated flags with --config; --master still
// applies. Unset limits keep skiff's defaults.
func (o *Options) applyClientConnection(cc *config.ClientConnection) {
	def := NewOptions().Client
	o.Client = clientconfig.Options{Master: o.Client.Master, QPS: def.QPS, Burst: def.Burst}
	if cc == nil {
		return
	}
	o.Client.Kubeconfig = cc.Kubeconfig
	if cc.QPS != 0 {
		o.Client.QPS = cc.QPS
	}
	if cc.Burst != 0 {
		o.Client.Burst = int(cc.Burst)
	}
}

// applyLeaderElection takes the file's values except where a
// --leader-elect* flag was given, as upstream.
func (o *Options) applyLeaderElection(le *config.LeaderElection) {
	if le == nil {
		return
	}
	l := o.LeaderElection
	if le.LeaderElect != nil && !o.changed("leader-elect") {
		l.LeaderElect = *le.LeaderElect
	}
	if le.LeaseDuration != nil && !o.changed("leader-elect-lease-duration") {
		l.LeaseDuration = le.LeaseDuration.Duration
	}
	if le.RenewDeadline != nil && !o.changed("leader-elect-renew-deadline") {
		l.RenewDeadline = le.RenewDeadline.Duration
	}
	if le.RetryPeriod != nil && !o.changed("leader-elect-retry-period") {
		l.RetryPeriod = le.RetryPeriod.Duration
	}
	if le.ResourceName != "" && !o.changed("leader-elect-resource-name") {
		l.ResourceName = le.ResourceName
	}
	if le.ResourceNamespace != "" && !o.changed("leader-elect-resource-namespace") {
		l.ResourceNamespace = le.ResourceNamespace
	}
}

// listers registers informers for the kinds plugins read, leaving out
// those the API server does not serve (an informer on them would never
// sync).
func listers(d discovery.DiscoveryInterface, f informers.SharedInformerFactory) (framework.Listers, error) {
	served, err := servedResources(d, "v1", "apps/v1")
	if err != nil {
		return framework.Listers{}, err
	}
	var l framework.Listers
	core, apps := schema.GroupVersion{Version: "v1"}, schema.GroupVersion{Group: "apps", Version: "v1"}
	if served[core.WithResource("namespaces")] {
		l.Namespaces = f.Core().V1().Namespaces().Lister()
	}
	if served[core.WithResource("services")] {
		l.Services = f.Core().V1().Services().Lister()
	}
	if served[core.WithResource("replicationcontrollers")] {
		l.ReplicationControllers = f.Core().V1().ReplicationControllers().Lister()
	}
	if served[apps.WithResource("replicasets")] {
		l.ReplicaSets = f.Apps().V1().ReplicaSets().Lister()
	}
	if served[apps.WithResource("statefulsets")] {
		l.StatefulSets = f.Apps().V1().StatefulSets().Lister()
	}
	if served[core.WithResource("persistentvolumeclaims")] && served[core.WithResource("persistentvolumes")] {
		l.PersistentVolumeClaims = f.Core().V1().PersistentVolumeClaims().Lister()
		l.PersistentVolumes = f.Core().V1().PersistentVolumes().Lister()
		l.StorageClasses = f.Storage().V1().StorageClasses().Lister()
	}
	return l, nil
}

// servedResources asks discovery which resources of the group versions
// the API server serves; a group version it does not serve has none.
func servedResources(d discovery.DiscoveryInterface, gvs ...string) (map[schema.GroupVersionResource]bool, error) {
	out := map[schema.GroupVersionResource]bool{}
	for _, gv := range gvs {
		// A just-started API server may not yet authorize discovery (its
		// RBAC cache fills a moment after it is ready) or answer at all:
		// retry with back-off, for about 25 s, before giving up.
		var list *metav1.APIResourceList
		var err error
		backoff := wait.Backoff{Duration: 100 * time.Millisecond, Factor: 2, Steps: 9, Cap: 5 * time.Second}
		_ = wait.ExponentialBackoff(backoff, func() (bool, error) {
			list, err = d.ServerResourcesForGroupVersion(gv)
			return err == nil || isNotFound(err), nil
		})
		if err != nil {
			if isNotFound(err) {
				continue
			}
			return nil, fmt.Errorf("discovering the resources of %s: %w", gv, err)
		}
		parsed, err := schema.ParseGroupVersion(gv)
		if err != nil {
			return nil, err
		}
		for _, r := range list.APIResources {
			out[parsed.WithResource(r.Name)] = true
		}
	}
	return out, nil
}

func isNotFound(err error) bool { return apierrors.IsNotFound(err) }
