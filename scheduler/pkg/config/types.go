package config

import (
	"encoding/json"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"skiff.dev/scheduler/pkg/framework"
)

// The API version and kind of the file.
const (
	APIVersion = "kubescheduler.config.k8s.io/v1"
	Kind       = "KubeSchedulerConfiguration"
)

// KubeSchedulerConfiguration is the part of upstream's v1 type skiff
// implements.
type KubeSchedulerConfiguration struct {
	APIVersion               string            `json:"apiVersion"`
	Kind                     string            `json:"kind"`
	Profiles                 []Profile         `json:"profiles,omitempty"`
	PercentageOfNodesToScore *int32            `json:"percentageOfNodesToScore,omitempty"`
	ClientConnection         *ClientConnection `json:"clientConnection,omitempty"`
	LeaderElection           *LeaderElection   `json:"leaderElection,omitempty"`
	PodInitialBackoffSeconds *int64            `json:"podInitialBackoffSeconds,omitempty"`
	PodMaxBackoffSeconds     *int64            `json:"podMaxBackoffSeconds,omitempty"`
}

// Profile is one scheduler name with its plugins.
type Profile struct {
	SchedulerName            string             `json:"schedulerName,omitempty"`
	PercentageOfNodesToScore *int32             `json:"percentageOfNodesToScore,omitempty"`
	Plugins                  *framework.Plugins `json:"plugins,omitempty"`
	PluginConfig             []PluginConfig     `json:"pluginConfig,omitempty"`
}

// PluginConfig is one plugin's arguments.
type PluginConfig struct {
	Name string          `json:"name"`
	Args json.RawMessage `json:"args,omitempty"`
}

// ClientConnection is how the scheduler reaches the API server.
type ClientConnection struct {
	Kubeconfig string  `json:"kubeconfig,omitempty"`
	QPS        float32 `json:"qps,omitempty"`
	Burst      int32   `json:"burst,omitempty"`
}

// LeaderElection configures the Lease.
type LeaderElection struct {
	LeaderElect       *bool            `json:"leaderElect,omitempty"`
	LeaseDuration     *metav1.Duration `json:"leaseDuration,omitempty"`
	RenewDeadline     *metav1.Duration `json:"renewDeadline,omitempty"`
	RetryPeriod       *metav1.Duration `json:"retryPeriod,omitempty"`
	ResourceLock      string           `json:"resourceLock,omitempty"`
	ResourceName      string           `json:"resourceName,omitempty"`
	ResourceNamespace string           `json:"resourceNamespace,omitempty"`
}
