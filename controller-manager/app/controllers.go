package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/pflag"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/scale"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
	"k8s.io/klog/v2"
	metricsclientset "k8s.io/metrics/pkg/client/clientset/versioned"

	"skiff.dev/controller-manager/pkg/controller/bootstrap"
	"skiff.dev/controller-manager/pkg/controller/certificates"
	"skiff.dev/controller-manager/pkg/controller/clusterroleaggregation"
	"skiff.dev/controller-manager/pkg/controller/cronjob"
	"skiff.dev/controller-manager/pkg/controller/daemonset"
	"skiff.dev/controller-manager/pkg/controller/deployment"
	"skiff.dev/controller-manager/pkg/controller/disruption"
	"skiff.dev/controller-manager/pkg/controller/endpoints"
	"skiff.dev/controller-manager/pkg/controller/endpointslice"
	"skiff.dev/controller-manager/pkg/controller/endpointslicemirroring"
	"skiff.dev/controller-manager/pkg/controller/garbagecollector"
	"skiff.dev/controller-manager/pkg/controller/job"
	"skiff.dev/controller-manager/pkg/controller/namespace"
	"skiff.dev/controller-manager/pkg/controller/nodeipam"
	"skiff.dev/controller-manager/pkg/controller/nodelifecycle"
	"skiff.dev/controller-manager/pkg/controller/podautoscaler"
	"skiff.dev/controller-manager/pkg/controller/podgc"
	"skiff.dev/controller-manager/pkg/controller/replicaset"
	"skiff.dev/controller-manager/pkg/controller/replicationcontroller"
	"skiff.dev/controller-manager/pkg/controller/resourcequota"
	"skiff.dev/controller-manager/pkg/controller/rootcacertpublisher"
	"skiff.dev/controller-manager/pkg/controller/serviceaccount"
	"skiff.dev/controller-manager/pkg/controller/statefulset"
	"skiff.dev/controller-manager/pkg/controller/ttlafterfinished"
	"skiff.dev/controller-manager/pkg/controller/volume/ephemeral"
	"skiff.dev/controller-manager/pkg/controller/volume/expand"
	"skiff.dev/controller-manager/pkg/controller/volume/persistentvolume"
	"skiff.dev/controller-manager/pkg/controller/volume/protection"
)

// RunFunc runs a built controller until ctx ends.
type RunFunc func(ctx context.Context) error

// Controller is one entry of the controller table.
type Controller struct {
	// Name is the controller's name in --controllers (upstream's names).
	Name         string
	OffByDefault bool
	// Init builds the controller, registering the informers it needs; a
	// nil RunFunc means its flags leave it nothing to do.
	Init func(ctx context.Context, cc *ControllerContext) (RunFunc, error)
}

// Controllers is the table of every controller skiff runs, in start order.
func Controllers() []Controller {
	return []Controller{
		{Name: "serviceaccount", Init: startServiceAccount},
		{Name: "root-ca-certificate-publisher", Init: startRootCAPublisher},
		{Name: "namespace", Init: startNamespace},
		{Name: "garbage-collector", Init: startGarbageCollector},
		{Name: "replicaset", Init: startReplicaSet},
		{Name: "replicationcontroller", Init: startReplicationController},
		{Name: "deployment", Init: startDeployment},
		{Name: "daemonset", Init: startDaemonSet},
		{Name: "statefulset", Init: startStatefulSet},
		{Name: "cronjob", Init: startCronJob},
		{Name: "job", Init: startJob},
		{Name: "ttl-after-finished", Init: startTTLAfterFinished},
		{Name: "node-ipam", Init: startNodeIPAM},
		{Name: "node-lifecycle", Init: startNodeLifecycle},
		{Name: "pod-garbage-collector", Init: startPodGC},
		{Name: "resourcequota", Init: startResourceQuota},
		{Name: "disruption", Init: startDisruption},
		{Name: "horizontalpodautoscaling", Init: startHorizontalPodAutoscaler},
		{Name: "endpoint", Init: startEndpoint},
		{Name: "endpointslice", Init: startEndpointSlice},
		{Name: "endpointslice-mirroring", Init: startEndpointSliceMirroring},
		{Name: "persistentvolume-binder", Init: startPersistentVolumeBinder},
		{Name: "persistentvolumeclaim-protection", Init: startPVCProtection},
		{Name: "persistentvolume-protection", Init: startPVProtection},
		{Name: "ephemeral-volume", Init: startEphemeralVolume},
		{Name: "persistentvolume-expander", Init: startVolumeExpander},
		{Name: "csrapproving", Init: startCSRApproving},
		{Name: "csrsigning", Init: startCSRSigning},
		{Name: "csrcleaner", Init: startCSRCleaner},
		{Name: "clusterrole-aggregation", Init: startClusterRoleAggregation},
		// Off by default, as upstream (kubeadm turns them on).
		{Name: "bootstrapsigner", Init: startBootstrapSigner, OffByDefault: true},
		{Name: "tokencleaner", Init: startTokenCleaner, OffByDefault: true},
	}
}

func controllerNames() []string {
	var names []string
	for _, c := range Controllers() {
		names = append(names, c.Name)
	}
	return names
}

// ControllerOptions are the controllers' own flags, under upstream's names
// and with upstream's defaults (except --allocate-node-cidrs, on in skiff:
// the design gives every node its pod /24 from the controller manager).
type ControllerOptions struct {
	ConcurrentReplicaSetSyncs int
	ConcurrentDeploymentSyncs int
	ConcurrentDaemonSetSyncs  int
	ConcurrentGCSyncs         int
	ConcurrentNamespaceSyncs  int
	ConcurrentCronJobSyncs    int

	NamespaceSyncPeriod time.Duration

	AllocateNodeCIDRs     bool
	ClusterCIDR           string
	NodeCIDRMaskSize      int
	ServiceClusterIPRange string

	NodeMonitorPeriod         time.Duration
	NodeMonitorGracePeriod    time.Duration
	NodeStartupGracePeriod    time.Duration
	NodeEvictionRate          float64
	SecondaryNodeEvictionRate float64
	LargeClusterSizeThreshold int
	UnhealthyZoneThreshold    float64

	TerminatedPodGCThreshold int

	ConcurrentStatefulSetSyncs int

	ConcurrentJobSyncs              int
	ConcurrentTTLAfterFinishedSyncs int
	ConcurrentRCSyncs               int

	ConcurrentResourceQuotaSyncs int
	ResourceQuotaSyncPeriod      time.Duration

	RootCAFile string

	PVClaimBinderSyncPeriod time.Duration

	ConcurrentEndpointSyncs         int
	EndpointUpdatesBatchPeriod      time.Duration
	ConcurrentServiceEndpointSyncs  int
	MaxEndpointsPerSlice            int
	EndpointSliceUpdatesBatchPeriod time.Duration

	ClusterSigningCertFile string
	ClusterSigningKeyFile  string
	ClusterSigningDuration time.Duration
	// ApproveKubeletServingCSRs is skiff's opt-in approval of
	// kubernetes.io/kubelet-serving CSRs (upstream approves none).
	ApproveKubeletServingCSRs bool

	// HorizontalPodAutoscaler holds the --horizontal-pod-autoscaler-* flags.
	HorizontalPodAutoscaler podautoscaler.Options
}

func defaultControllerOptions() ControllerOptions {
	return ControllerOptions{
		ConcurrentReplicaSetSyncs: 5,
		ConcurrentDeploymentSyncs: 5,
		ConcurrentDaemonSetSyncs:  2,
		ConcurrentGCSyncs:         20,
		ConcurrentNamespaceSyncs:  10,
		ConcurrentCronJobSyncs:    5,
		NamespaceSyncPeriod:       5 * time.Minute,
		AllocateNodeCIDRs:         true,
		ClusterCIDR:               "10.244.0.0/16",
		NodeCIDRMaskSize:          24,
		ServiceClusterIPRange:     "10.96.0.0/16",
		NodeMonitorPeriod:         5 * time.Second,
		NodeMonitorGracePeriod:    40 * time.Second,
		NodeStartupGracePeriod:    time.Minute,
		NodeEvictionRate:          0.1,
		SecondaryNodeEvictionRate: 0.01,
		LargeClusterSizeThreshold: 50,
		UnhealthyZoneThreshold:    0.55,
		TerminatedPodGCThreshold:  12500,

		ConcurrentStatefulSetSyncs: 5,

		ConcurrentJobSyncs:              5,
		ConcurrentTTLAfterFinishedSyncs: 5,
		ConcurrentRCSyncs:               5,

		ConcurrentResourceQuotaSyncs: 5,
		ResourceQuotaSyncPeriod:      resourcequota.DefaultSyncPeriod,

		ConcurrentEndpointSyncs:        5,
		ConcurrentServiceEndpointSyncs: 5,
		MaxEndpointsPerSlice:           endpointslice.DefaultMaxEndpointsPerSlice,

		PVClaimBinderSyncPeriod: persistentvolume.DefaultSyncPeriod,

		HorizontalPodAutoscaler: podautoscaler.DefaultOptions(),

		ClusterSigningDuration: certificates.DefaultSigningDuration,
	}
}

func (o *ControllerOptions) addFlags(fs *pflag.FlagSet) {
	fs.IntVar(&o.ConcurrentReplicaSetSyncs, "concurrent-replicaset-syncs", o.ConcurrentReplicaSetSyncs, "ReplicaSets synced at once.")
	fs.IntVar(&o.ConcurrentDeploymentSyncs, "concurrent-deployment-syncs", o.ConcurrentDeploymentSyncs, "Deployments synced at once.")
	fs.IntVar(&o.ConcurrentDaemonSetSyncs, "concurrent-daemonset-syncs", o.ConcurrentDaemonSetSyncs, "DaemonSets synced at once.")
	fs.IntVar(&o.ConcurrentGCSyncs, "concurrent-gc-syncs", o.ConcurrentGCSyncs, "Garbage collector workers.")
	fs.IntVar(&o.ConcurrentNamespaceSyncs, "concurrent-namespace-syncs", o.ConcurrentNamespaceSyncs, "Namespaces deleted at once.")
	fs.IntVar(&o.ConcurrentCronJobSyncs, "concurrent-cron-job-syncs", o.ConcurrentCronJobSyncs, "CronJobs synced at once.")
	fs.IntVar(&o.ConcurrentStatefulSetSyncs, "concurrent-statefulset-syncs", o.ConcurrentStatefulSetSyncs, "StatefulSets synced at once.")
	fs.IntVar(&o.ConcurrentJobSyncs, "concurrent-job-syncs", o.ConcurrentJobSyncs, "Jobs synced at once.")
	fs.IntVar(&o.ConcurrentTTLAfterFinishedSyncs, "concurrent-ttl-after-finished-syncs", o.ConcurrentTTLAfterFinishedSyncs, "Finished Jobs checked for their TTL at once.")
	fs.IntVar(&o.ConcurrentRCSyncs, "concurrent-rc-syncs", o.ConcurrentRCSyncs, "ReplicationControllers synced at once.")
	fs.DurationVar(&o.NamespaceSyncPeriod, "namespace-sync-period", o.NamespaceSyncPeriod, "How often terminating namespaces are looked at again.")
	fs.BoolVar(&o.AllocateNodeCIDRs, "allocate-node-cidrs", o.AllocateNodeCIDRs, "Give every Node a spec.podCIDR from --cluster-cidr.")
	fs.StringVar(&o.ClusterCIDR, "cluster-cidr", o.ClusterCIDR, "The pods' address range, cut into one subnet per node.")
	fs.IntVar(&o.NodeCIDRMaskSize, "node-cidr-mask-size", o.NodeCIDRMaskSize, "The prefix length of each node's pod subnet.")
	fs.StringVar(&o.ServiceClusterIPRange, "service-cluster-ip-range", o.ServiceClusterIPRange, "The Services' range; never given to a node when it lies inside --cluster-cidr.")
	fs.DurationVar(&o.NodeMonitorPeriod, "node-monitor-period", o.NodeMonitorPeriod, "How often node health is checked.")
	fs.DurationVar(&o.NodeMonitorGracePeriod, "node-monitor-grace-period", o.NodeMonitorGracePeriod, "How long a node may go without renewing its Lease before it is marked Unknown.")
	fs.DurationVar(&o.NodeStartupGracePeriod, "node-startup-grace-period", o.NodeStartupGracePeriod, "How long a new node may stay silent before it is marked Unknown.")
	fs.Float64Var(&o.NodeEvictionRate, "node-eviction-rate", o.NodeEvictionRate, "Nodes per second whose pods are evicted while a zone is healthy.")
	fs.Float64Var(&o.SecondaryNodeEvictionRate, "secondary-node-eviction-rate", o.SecondaryNodeEvictionRate, "Nodes per second whose pods are evicted while a zone is unhealthy.")
	fs.IntVar(&o.LargeClusterSizeThreshold, "large-cluster-size-threshold", o.LargeClusterSizeThreshold, "Zones up to this many nodes stop evicting when unhealthy.")
	fs.Float64Var(&o.UnhealthyZoneThreshold, "unhealthy-zone-threshold", o.UnhealthyZoneThreshold, "Fraction of not-ready nodes at which a zone is unhealthy.")
	fs.IntVar(&o.TerminatedPodGCThreshold, "terminated-pod-gc-threshold", o.TerminatedPodGCThreshold, "Terminated pods kept before the oldest are deleted; 0 or less keeps all.")
	fs.IntVar(&o.ConcurrentResourceQuotaSyncs, "concurrent-resource-quota-syncs", o.ConcurrentResourceQuotaSyncs, "ResourceQuotas synced at once.")
	fs.DurationVar(&o.ResourceQuotaSyncPeriod, "resource-quota-sync-period", o.ResourceQuotaSyncPeriod, "How often every ResourceQuota's usage is recomputed without an event.")
	fs.IntVar(&o.ConcurrentEndpointSyncs, "concurrent-endpoint-syncs", o.ConcurrentEndpointSyncs, "Services whose Endpoints are synced at once.")
	fs.DurationVar(&o.EndpointUpdatesBatchPeriod, "endpoint-updates-batch-period", o.EndpointUpdatesBatchPeriod, "How long pod changes are gathered before a Service's Endpoints is synced (0: none).")
	fs.IntVar(&o.ConcurrentServiceEndpointSyncs, "concurrent-service-endpoint-syncs", o.ConcurrentServiceEndpointSyncs, "Services whose EndpointSlices are synced at once.")
	fs.IntVar(&o.MaxEndpointsPerSlice, "max-endpoints-per-slice", o.MaxEndpointsPerSlice, "The most endpoints one EndpointSlice holds (1 to 1000).")
	fs.DurationVar(&o.EndpointSliceUpdatesBatchPeriod, "endpointslice-updates-batch-period", o.EndpointSliceUpdatesBatchPeriod, "How long pod changes are gathered before a Service's EndpointSlices are synced (0: none).")
	fs.DurationVar(&o.PVClaimBinderSyncPeriod, "pvclaimbinder-sync-period", o.PVClaimBinderSyncPeriod, "How often every PersistentVolume and claim is synced again without an event.")
	fs.StringVar(&o.ClusterSigningCertFile, "cluster-signing-cert-file", o.ClusterSigningCertFile, "The CA certificate that signs approved CSRs of the kubernetes.io/kube-apiserver-client, kube-apiserver-client-kubelet and kubelet-serving signers; empty: csrsigning does not run.")
	fs.StringVar(&o.ClusterSigningKeyFile, "cluster-signing-key-file", o.ClusterSigningKeyFile, "The private key of --cluster-signing-cert-file.")
	fs.DurationVar(&o.ClusterSigningDuration, "cluster-signing-duration", o.ClusterSigningDuration, "The longest a signed certificate lasts; a CSR's spec.expirationSeconds may ask for less.")
	fs.BoolVar(&o.ApproveKubeletServingCSRs, "approve-kubelet-serving-csrs", o.ApproveKubeletServingCSRs, "Approve kubernetes.io/kubelet-serving CSRs whose requester is the node they name and whose DNS names and IP addresses are all that Node's status addresses (skiff's own; upstream approves none, leaving them to a person or an external approver).")
	o.HorizontalPodAutoscaler.AddFlags(fs)
	fs.StringVar(&o.RootCAFile, "root-ca-file", o.RootCAFile, "The cluster CA published as kube-root-ca.crt in every namespace; empty: the CA of --kubeconfig.")
}

func (o *ControllerOptions) validate() []error {
	var errs []error
	for flag, n := range map[string]int{
		"--concurrent-replicaset-syncs": o.ConcurrentReplicaSetSyncs,
		"--concurrent-deployment-syncs": o.ConcurrentDeploymentSyncs,
		"--concurrent-daemonset-syncs":  o.ConcurrentDaemonSetSyncs,
		"--concurrent-gc-syncs":         o.ConcurrentGCSyncs,
		"--concurrent-namespace-syncs":  o.ConcurrentNamespaceSyncs,

		"--concurrent-resource-quota-syncs": o.ConcurrentResourceQuotaSyncs,

		"--concurrent-cron-job-syncs": o.ConcurrentCronJobSyncs,

		"--concurrent-statefulset-syncs": o.ConcurrentStatefulSetSyncs,

		"--concurrent-job-syncs":                o.ConcurrentJobSyncs,
		"--concurrent-ttl-after-finished-syncs": o.ConcurrentTTLAfterFinishedSyncs,
		"--concurrent-rc-syncs":                 o.ConcurrentRCSyncs,

		"--concurrent-endpoint-syncs":         o.ConcurrentEndpointSyncs,
		"--concurrent-service-endpoint-syncs": o.ConcurrentServiceEndpointSyncs,
	} {
		if n < 1 {
			errs = append(errs, fmt.Errorf("%s must be at least 1", flag))
		}
	}
	if o.NodeMonitorGracePeriod <= o.NodeMonitorPeriod {
		errs = append(errs, errors.New("--node-monitor-grace-period must be longer than --node-monitor-period"))
	}
	if o.ResourceQuotaSyncPeriod <= 0 {
		errs = append(errs, errors.New("--resource-quota-sync-period must be positive"))
	}
	if o.MaxEndpointsPerSlice < 1 || o.MaxEndpointsPerSlice > endpointslice.MaxEndpointsPerSliceLimit {
		errs = append(errs, fmt.Errorf("--max-endpoints-per-slice must be between 1 and %d", endpointslice.MaxEndpointsPerSliceLimit))
	}
	if o.EndpointUpdatesBatchPeriod < 0 {
		errs = append(errs, errors.New("--endpoint-updates-batch-period must not be negative"))
	}
	if o.EndpointSliceUpdatesBatchPeriod < 0 {
		errs = append(errs, errors.New("--endpointslice-updates-batch-period must not be negative"))
	}
	if (o.ClusterSigningCertFile == "") != (o.ClusterSigningKeyFile == "") {
		errs = append(errs, errors.New("--cluster-signing-cert-file and --cluster-signing-key-file go together"))
	}
	if o.ClusterSigningDuration <= 0 {
		errs = append(errs, errors.New("--cluster-signing-duration must be positive"))
	}
	if o.AllocateNodeCIDRs && o.ClusterCIDR == "" {
		errs = append(errs, errors.New("--allocate-node-cidrs needs --cluster-cidr"))
	}
	errs = append(errs, o.HorizontalPodAutoscaler.Validate()...)
	return errs
}

func startServiceAccount(ctx context.Context, cc *ControllerContext) (RunFunc, error) {
	f := cc.Informers.Core().V1()
	c, err := serviceaccount.NewController(cc.Client, f.Namespaces(), f.ServiceAccounts(),
		cc.Recorder(serviceaccount.ControllerName), cc.Metrics, serviceaccount.Options{})
	if err != nil {
		return nil, err
	}
	return workers(c.Run, 1), nil
}

func startRootCAPublisher(ctx context.Context, cc *ControllerContext) (RunFunc, error) {
	ca, err := cc.rootCA()
	if err != nil {
		return nil, err
	}
	f := cc.Informers.Core().V1()
	c, err := rootcacertpublisher.NewController(cc.Client, f.Namespaces(), f.ConfigMaps(),
		cc.Recorder(rootcacertpublisher.ControllerName), cc.Metrics, rootcacertpublisher.Options{RootCA: ca})
	if err != nil {
		return nil, err
	}
	return workers(c.Run, 1), nil
}

// rootCA is --root-ca-file, or the CA the controller manager itself trusts
// the API server with.
func (cc *ControllerContext) rootCA() ([]byte, error) {
	if f := cc.Options.Controller.RootCAFile; f != "" {
		return os.ReadFile(f)
	}
	tls := cc.RESTConfig.TLSClientConfig
	if len(tls.CAData) > 0 {
		return tls.CAData, nil
	}
	if tls.CAFile != "" {
		return os.ReadFile(tls.CAFile)
	}
	return nil, errors.New("no CA to publish: set --root-ca-file or give the kubeconfig a certificate-authority")
}

func startNamespace(ctx context.Context, cc *ControllerContext) (RunFunc, error) {
	c, err := namespace.NewController(cc.Client, cc.Metadata, cc.Discovery, cc.Informers.Core().V1().Namespaces(),
		cc.Recorder(namespace.ControllerName), cc.Metrics, namespace.Options{SyncPeriod: cc.Options.Controller.NamespaceSyncPeriod})
	if err != nil {
		return nil, err
	}
	return workers(c.Run, cc.Options.Controller.ConcurrentNamespaceSyncs), nil
}

func startGarbageCollector(ctx context.Context, cc *ControllerContext) (RunFunc, error) {
	c, err := garbagecollector.NewController(cc.Metadata, cc.Discovery, cc.Recorder(garbagecollector.ControllerName),
		cc.Metrics, garbagecollector.Options{})
	if err != nil {
		return nil, err
	}
	return workers(c.Run, cc.Options.Controller.ConcurrentGCSyncs), nil
}

func startReplicaSet(ctx context.Context, cc *ControllerContext) (RunFunc, error) {
	c := replicaset.NewController(cc.Client, cc.Informers.Apps().V1().ReplicaSets(), cc.Informers.Core().V1().Pods(),
		cc.Recorder(replicaset.ControllerName), cc.Metrics, replicaset.Options{TracerProvider: cc.TracerProvider})
	return workers(c.Run, cc.Options.Controller.ConcurrentReplicaSetSyncs), nil
}

func startReplicationController(ctx context.Context, cc *ControllerContext) (RunFunc, error) {
	f := cc.Informers.Core().V1()
	c := replicationcontroller.NewController(cc.Client, f.ReplicationControllers(), f.Pods(),
		cc.Recorder(replicationcontroller.ControllerName), cc.Metrics, replicaset.Options{})
	return workers(c.Run, cc.Options.Controller.ConcurrentRCSyncs), nil
}

func startJob(ctx context.Context, cc *ControllerContext) (RunFunc, error) {
	c := job.NewController(cc.Client, cc.Informers.Batch().V1().Jobs(), cc.Informers.Core().V1().Pods(),
		cc.Recorder(job.ControllerName), cc.Metrics, job.Options{})
	return workers(c.Run, cc.Options.Controller.ConcurrentJobSyncs), nil
}

func startTTLAfterFinished(ctx context.Context, cc *ControllerContext) (RunFunc, error) {
	c := ttlafterfinished.NewController(cc.Client, cc.Informers.Batch().V1().Jobs(),
		cc.Recorder(ttlafterfinished.ControllerName), cc.Metrics, ttlafterfinished.Options{})
	return workers(c.Run, cc.Options.Controller.ConcurrentTTLAfterFinishedSyncs), nil
}

func startDeployment(ctx context.Context, cc *ControllerContext) (RunFunc, error) {
	c := deployment.NewController(cc.Client, cc.Informers.Apps().V1().Deployments(), cc.Informers.Apps().V1().ReplicaSets(),
		cc.Informers.Core().V1().Pods(), cc.Recorder(deployment.ControllerName), cc.Metrics, deployment.Options{})
	return workers(c.Run, cc.Options.Controller.ConcurrentDeploymentSyncs), nil
}

func startDaemonSet(ctx context.Context, cc *ControllerContext) (RunFunc, error) {
	f := cc.Informers
	c := daemonset.NewController(cc.Client, f.Apps().V1().DaemonSets(), f.Apps().V1().ControllerRevisions(),
		f.Core().V1().Pods(), f.Core().V1().Nodes(), cc.Recorder(daemonset.ControllerName), cc.Metrics, daemonset.Options{})
	return workers(c.Run, cc.Options.Controller.ConcurrentDaemonSetSyncs), nil
}

func startStatefulSet(ctx context.Context, cc *ControllerContext) (RunFunc, error) {
	f := cc.Informers
	c := statefulset.NewController(cc.Client, f.Apps().V1().StatefulSets(), f.Core().V1().Pods(),
		f.Core().V1().PersistentVolumeClaims(), f.Apps().V1().ControllerRevisions(),
		cc.Recorder(statefulset.ControllerName), cc.Metrics, statefulset.Options{})
	return workers(c.Run, cc.Options.Controller.ConcurrentStatefulSetSyncs), nil
}

func startNodeIPAM(ctx context.Context, cc *ControllerContext) (RunFunc, error) {
	o := cc.Options.Controller
	if !o.AllocateNodeCIDRs {
		return nil, nil
	}
	opts := nodeipam.DefaultOptions()
	opts.ClusterCIDR, opts.NodeCIDRMaskSize, opts.ServiceCIDR = o.ClusterCIDR, o.NodeCIDRMaskSize, o.ServiceClusterIPRange
	c, err := nodeipam.NewController(cc.Client, cc.Informers.Core().V1().Nodes(), cc.Recorder(nodeipam.ControllerName), cc.Metrics, opts)
	if err != nil {
		return nil, err
	}
	return workers(c.Run, 1), nil
}

func startNodeLifecycle(ctx context.Context, cc *ControllerContext) (RunFunc, error) {
	o := cc.Options.Controller
	f := cc.Informers
	c, err := nodelifecycle.NewController(cc.Client, f.Core().V1().Nodes(), f.Coordination().V1().Leases(), f.Core().V1().Pods(),
		cc.Recorder(nodelifecycle.ControllerName), cc.Metrics, nodelifecycle.Options{
			NodeMonitorPeriod:         o.NodeMonitorPeriod,
			NodeMonitorGracePeriod:    o.NodeMonitorGracePeriod,
			NodeStartupGracePeriod:    o.NodeStartupGracePeriod,
			NodeEvictionRate:          o.NodeEvictionRate,
			SecondaryNodeEvictionRate: o.SecondaryNodeEvictionRate,
			LargeClusterSizeThreshold: o.LargeClusterSizeThreshold,
			UnhealthyZoneThreshold:    o.UnhealthyZoneThreshold,
		})
	if err != nil {
		return nil, err
	}
	return workers(c.Run, 1), nil
}

func startPodGC(ctx context.Context, cc *ControllerContext) (RunFunc, error) {
	f := cc.Informers.Core().V1()
	opts := podgc.DefaultOptions()
	opts.TerminatedPodGCThreshold = cc.Options.Controller.TerminatedPodGCThreshold
	c, err := podgc.NewController(cc.Client, f.Pods(), f.Nodes(), cc.Recorder(podgc.ControllerName), cc.Metrics, opts)
	if err != nil {
		return nil, err
	}
	return workers(c.Run, 1), nil
}

func startResourceQuota(ctx context.Context, cc *ControllerContext) (RunFunc, error) {
	o := cc.Options.Controller
	c, err := resourcequota.NewController(cc.Client, cc.Informers, cc.Metrics, resourcequota.Options{
		SyncPeriod:     o.ResourceQuotaSyncPeriod,
		Metadata:       cc.Metadata,
		Discovery:      cc.Discovery,
		InformerResync: cc.Options.ResyncPeriod,
	})
	if err != nil {
		return nil, err
	}
	return workers(c.Run, o.ConcurrentResourceQuotaSyncs), nil
}

func startDisruption(ctx context.Context, cc *ControllerContext) (RunFunc, error) {
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(cc.Discovery)
	scales, err := scale.NewForConfig(cc.RESTConfig, mapper, dynamic.LegacyAPIPathResolverFunc, scale.NewDiscoveryScaleKindResolver(cc.Discovery))
	if err != nil {
		return nil, err
	}
	c, err := disruption.NewController(cc.Client, cc.Informers, cc.Recorder(disruption.ControllerName), cc.Metrics,
		disruption.Options{Scales: scales, Mapper: mapper})
	if err != nil {
		return nil, err
	}
	// Upstream runs a single disruption worker.
	return workers(c.Run, 1), nil
}

// startHorizontalPodAutoscaler scales through any kind's /scale, as
// upstream's, and measures through the resource metrics API.
func startHorizontalPodAutoscaler(ctx context.Context, cc *ControllerContext) (RunFunc, error) {
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(cc.Discovery)
	scales, err := scale.NewForConfig(cc.RESTConfig, mapper, dynamic.LegacyAPIPathResolverFunc, scale.NewDiscoveryScaleKindResolver(cc.Discovery))
	if err != nil {
		return nil, err
	}
	mc, err := metricsclientset.NewForConfig(cc.RESTConfig)
	if err != nil {
		return nil, err
	}
	o := cc.Options.Controller.HorizontalPodAutoscaler
	c, err := podautoscaler.NewController(cc.Client, cc.Informers.Autoscaling().V2().HorizontalPodAutoscalers(), cc.Informers.Core().V1().Pods(),
		scales, mapper, podautoscaler.NewResourceMetricsClient(mc.MetricsV1beta1()), cc.Recorder(podautoscaler.ControllerName), cc.Metrics, o)
	if err != nil {
		return nil, err
	}
	return workers(c.Run, o.ConcurrentSyncs), nil
}

func startEndpoint(ctx context.Context, cc *ControllerContext) (RunFunc, error) {
	o := cc.Options.Controller
	f := cc.Informers.Core().V1()
	c, err := endpoints.NewController(cc.Client, f.Pods(), f.Services(), f.Endpoints(),
		cc.Recorder(endpoints.ControllerName), cc.Metrics, endpoints.Options{BatchPeriod: o.EndpointUpdatesBatchPeriod})
	if err != nil {
		return nil, err
	}
	return workers(c.Run, o.ConcurrentEndpointSyncs), nil
}

func startEndpointSlice(ctx context.Context, cc *ControllerContext) (RunFunc, error) {
	o := cc.Options.Controller
	f := cc.Informers.Core().V1()
	c, err := endpointslice.NewController(cc.Client, f.Pods(), f.Services(), f.Nodes(), cc.Informers.Discovery().V1().EndpointSlices(),
		cc.Recorder(endpointslice.ControllerName), cc.Metrics, endpointslice.Options{
			MaxEndpointsPerSlice: int32(o.MaxEndpointsPerSlice),
			BatchPeriod:          o.EndpointSliceUpdatesBatchPeriod,
		})
	if err != nil {
		return nil, err
	}
	return workers(c.Run, o.ConcurrentServiceEndpointSyncs), nil
}

// startEndpointSliceMirroring runs the EndpointSliceMirroring controller
// with upstream's defaults (--mirroring-concurrent-service-endpoint-syncs
// 5, --mirroring-max-endpoints-per-subset 1000).
func startEndpointSliceMirroring(ctx context.Context, cc *ControllerContext) (RunFunc, error) {
	f := cc.Informers.Core().V1()
	c, err := endpointslicemirroring.NewController(cc.Client, f.Endpoints(), f.Services(), cc.Informers.Discovery().V1().EndpointSlices(),
		cc.Recorder(endpointslicemirroring.ControllerName), cc.Metrics, endpointslicemirroring.Options{})
	if err != nil {
		return nil, err
	}
	return workers(c.Run, 5), nil
}

func startCronJob(ctx context.Context, cc *ControllerContext) (RunFunc, error) {
	f := cc.Informers.Batch().V1()
	c, err := cronjob.NewController(cc.Client, f.CronJobs(), f.Jobs(), cc.Recorder(cronjob.ControllerName), cc.Metrics, cronjob.Options{})
	if err != nil {
		return nil, err
	}
	return workers(c.Run, cc.Options.Controller.ConcurrentCronJobSyncs), nil
}

func startPersistentVolumeBinder(ctx context.Context, cc *ControllerContext) (RunFunc, error) {
	f := cc.Informers
	c, err := persistentvolume.NewController(cc.Client, f.Core().V1().PersistentVolumes(), f.Core().V1().PersistentVolumeClaims(),
		f.Storage().V1().StorageClasses(), f.Core().V1().Pods(), cc.Recorder(persistentvolume.ControllerName), cc.Metrics,
		persistentvolume.Options{SyncPeriod: cc.Options.Controller.PVClaimBinderSyncPeriod})
	if err != nil {
		return nil, err
	}
	// One worker, as upstream: binding decisions read one consistent cache.
	return workers(c.Run, 1), nil
}

func startPVCProtection(ctx context.Context, cc *ControllerContext) (RunFunc, error) {
	f := cc.Informers.Core().V1()
	c, err := protection.NewPVCController(cc.Client, f.PersistentVolumeClaims(), f.Pods(), cc.Metrics)
	if err != nil {
		return nil, err
	}
	return workers(c.Run, 1), nil
}

func startPVProtection(ctx context.Context, cc *ControllerContext) (RunFunc, error) {
	c, err := protection.NewPVController(cc.Client, cc.Informers.Core().V1().PersistentVolumes(), cc.Metrics)
	if err != nil {
		return nil, err
	}
	return workers(c.Run, 1), nil
}

func startEphemeralVolume(ctx context.Context, cc *ControllerContext) (RunFunc, error) {
	f := cc.Informers.Core().V1()
	c, err := ephemeral.NewController(cc.Client, f.Pods(), f.PersistentVolumeClaims(), cc.Recorder(ephemeral.ControllerName), cc.Metrics)
	if err != nil {
		return nil, err
	}
	// Upstream's --concurrent-ephemeralvolume-syncs default.
	return workers(c.Run, 5), nil
}

func startVolumeExpander(ctx context.Context, cc *ControllerContext) (RunFunc, error) {
	f := cc.Informers
	c, err := expand.NewController(cc.Client, f.Core().V1().PersistentVolumeClaims(), f.Core().V1().PersistentVolumes(),
		f.Storage().V1().StorageClasses(), cc.Recorder(expand.ControllerName), cc.Metrics)
	if err != nil {
		return nil, err
	}
	return workers(c.Run, 1), nil
}

func startCSRApproving(ctx context.Context, cc *ControllerContext) (RunFunc, error) {
	opts := certificates.ApproverOptions{ApproveKubeletServing: cc.Options.Controller.ApproveKubeletServingCSRs}
	if opts.ApproveKubeletServing {
		opts.Nodes = cc.Informers.Core().V1().Nodes()
	}
	c, err := certificates.NewApprover(cc.Client, cc.Informers.Certificates().V1().CertificateSigningRequests(), cc.Metrics, opts)
	if err != nil {
		return nil, err
	}
	// Upstream's --concurrent-certificate-syncs default.
	return workers(c.Run, 5), nil
}

func startCSRSigning(ctx context.Context, cc *ControllerContext) (RunFunc, error) {
	o := cc.Options.Controller
	if o.ClusterSigningCertFile == "" {
		klog.FromContext(ctx).Info("No --cluster-signing-cert-file: CSRs are not signed here")
		return nil, nil
	}
	ca, err := certificates.LoadCA(o.ClusterSigningCertFile, o.ClusterSigningKeyFile)
	if err != nil {
		return nil, fmt.Errorf("csrsigning: %w", err)
	}
	c, err := certificates.NewSigner(cc.Client, cc.Informers.Certificates().V1().CertificateSigningRequests(), cc.Metrics,
		certificates.SignerOptions{CA: ca, Duration: o.ClusterSigningDuration})
	if err != nil {
		return nil, err
	}
	return workers(c.Run, 5), nil
}

func startCSRCleaner(ctx context.Context, cc *ControllerContext) (RunFunc, error) {
	c := certificates.NewCleaner(cc.Client, cc.Informers.Certificates().V1().CertificateSigningRequests(), cc.Metrics, 0)
	return workers(c.Run, 1), nil
}

func startClusterRoleAggregation(ctx context.Context, cc *ControllerContext) (RunFunc, error) {
	c, err := clusterroleaggregation.NewController(cc.Client, cc.Informers.Rbac().V1().ClusterRoles(), cc.Metrics)
	if err != nil {
		return nil, err
	}
	// Five workers, as upstream runs it.
	return workers(c.Run, 5), nil
}

// namespaceInformers is a factory of one namespace's objects, for the
// bootstrap controllers: they need kube-system's bootstrap tokens and
// kube-public's cluster-info, not every Secret of the cluster.
func namespaceInformers(cc *ControllerContext, ns string, tweak func(*metav1.ListOptions)) informers.SharedInformerFactory {
	return informers.NewSharedInformerFactoryWithOptions(cc.Client, cc.Options.ResyncPeriod, informers.WithNamespace(ns), informers.WithTweakListOptions(tweak))
}

// bootstrapTokens selects bootstrap token Secrets.
func bootstrapTokens(o *metav1.ListOptions) {
	o.FieldSelector = fields.OneTermEqualSelector("type", string(bootstrapapi.SecretTypeBootstrapToken)).String()
}

// startedWith starts the factory before the controller's run.
func startedWith(f informers.SharedInformerFactory, run RunFunc) RunFunc {
	return func(ctx context.Context) error {
		f.Start(ctx.Done())
		defer f.Shutdown()
		return run(ctx)
	}
}

func startTokenCleaner(ctx context.Context, cc *ControllerContext) (RunFunc, error) {
	f := namespaceInformers(cc, metav1.NamespaceSystem, bootstrapTokens)
	c, err := bootstrap.NewTokenCleaner(cc.Client, f.Core().V1().Secrets(), cc.Metrics)
	if err != nil {
		return nil, err
	}
	return startedWith(f, workers(c.Run, 1)), nil
}

func startBootstrapSigner(ctx context.Context, cc *ControllerContext) (RunFunc, error) {
	secrets := namespaceInformers(cc, metav1.NamespaceSystem, bootstrapTokens)
	public := namespaceInformers(cc, metav1.NamespacePublic, func(o *metav1.ListOptions) {
		o.FieldSelector = fields.OneTermEqualSelector("metadata.name", bootstrapapi.ConfigMapClusterInfo).String()
	})
	c, err := bootstrap.NewSigner(cc.Client, secrets.Core().V1().Secrets(), public.Core().V1().ConfigMaps(), cc.Metrics)
	if err != nil {
		return nil, err
	}
	return startedWith(secrets, startedWith(public, workers(c.Run, 1))), nil
}

// workers binds a controller's Run to its worker count.
func workers(run func(context.Context, int) error, n int) RunFunc {
	return func(ctx context.Context) error { return run(ctx, n) }
}
